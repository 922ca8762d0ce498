"""pytest-mcp's environment probe, run by the *target* interpreter as ``python -c <this file> OUT [WARDEN REPORT]``.

Standard library only, and syntax that even old interpreters can parse, so that it can say
which Python it found instead of failing on it. It writes one JSON object to OUT: the
interpreter, pytest, the installed pytest plugins, and the rootdir, configfile and testpaths
pytest would use in the current directory. It runs no test and imports no conftest: pytest
parses its command line and configuration exactly as for a run (PYTEST_ADDOPTS, addopts,
plugin autoloading) and is stopped at ``pytest_load_initial_conftests``, before conftests
load. That hook and ``Config.rootpath``/``inipath``/``getini`` are public API in pytest 7 to 9.
"""

import sys

# The project directory comes first on sys.path, as with `python -m pytest`; keep it out of
# the way while the standard library is imported, so a project's `json.py` cannot shadow it.
_CWD_FIRST = bool(sys.path) and sys.path[0] in ("", ".")
if _CWD_FIRST:
    del sys.path[0]

import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402

try:
    from importlib import metadata
except ImportError:  # Python < 3.8: no plugin list, but the version is still reported
    metadata = None

if __name__ == "__main__" and len(sys.argv) > 3:
    # Under a warden, as a test run is: a plugin that starts a process on import cannot leave it
    # behind. Loaded, and the process forked, before the project directory is back on sys.path.
    import importlib.util

    _spec = importlib.util.spec_from_file_location("_pytest_mcp_warden", sys.argv[2])
    _warden = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_warden)
    _warden.guard(sys.argv[3])

if _CWD_FIRST:
    sys.path.insert(0, os.getcwd())

MESSAGE_LIMIT = 2000


def _python():
    return {
        "executable": sys.executable,
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "prefix": sys.prefix,
        "virtual_env": sys.prefix != getattr(sys, "base_prefix", sys.prefix),
    }


def _plugins():
    """Distributions with entry points in group pytest11, which is how pytest plugins register."""
    if metadata is None:
        return []
    found = {}
    for dist in metadata.distributions():
        try:
            names = sorted({ep.name for ep in dist.entry_points if ep.group == "pytest11"})
            name = dist.metadata["Name"]
            version = dist.version
        except Exception:  # noqa: S112 - a broken distribution must not hide the others
            continue
        if not names or not name:
            continue
        key = re.sub(r"[-_.]+", "-", name).lower()
        # The first one on sys.path is the one that gets imported.
        if key not in found:
            found[key] = {"name": name, "version": version, "entry_points": names, "loaded": None}
    return [found[key] for key in sorted(found)]


def _cut(text):
    text = text.strip()
    if len(text) > MESSAGE_LIMIT:
        return text[:MESSAGE_LIMIT] + " [... cut by pytest-mcp ...]"
    return text


class _Stop(Exception):
    """Raised by our hook once pytest has read its configuration."""


def _config_facts(pytest, facts):
    class ConfigProbe:
        early_config = None

        @pytest.hookimpl(tryfirst=True)
        def pytest_load_initial_conftests(self, early_config):
            ConfigProbe.early_config = early_config
            raise _Stop()

    captured = io.StringIO()
    code = None
    try:
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            code = pytest.main(["--capture=no"], plugins=[ConfigProbe()])
    except _Stop:
        pass
    except Exception as exc:
        facts["config_error"] = _cut("%s: %s" % (type(exc).__name__, exc))
        return
    config = ConfigProbe.early_config
    if config is None:
        lines = [line.strip() for line in captured.getvalue().splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("ERROR")]
        facts["config_error"] = _cut("\n".join(errors or lines[-5:]) or "pytest exited with code %s" % code)
        return
    rootpath = getattr(config, "rootpath", None) or getattr(config, "rootdir", None)
    inipath = getattr(config, "inipath", None) or getattr(config, "inifile", None)
    facts["rootdir"] = str(rootpath) if rootpath else None
    facts["configfile"] = str(inipath) if inipath else None
    try:
        facts["testpaths"] = [str(path) for path in config.getini("testpaths") or []]
    except Exception as exc:
        facts["config_error"] = _cut("testpaths: %s: %s" % (type(exc).__name__, exc))
    namespace = getattr(config, "known_args_namespace", None)
    facts["plugin_autoload"] = not (
        os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD") or getattr(namespace, "disable_plugin_autoload", False)
    )
    manager = config.pluginmanager
    for plugin in facts["plugins"]:
        plugin["loaded"] = any(manager.get_plugin(name) is not None for name in plugin["entry_points"])


def probe():
    facts = {
        "python": _python(),
        "pytest": None,
        "pytest_error": None,
        "plugins": _plugins(),
        "plugin_autoload": not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"),
        "rootdir": None,
        "configfile": None,
        "testpaths": [],
        "config_error": None,
    }
    try:
        import pytest
    except Exception as exc:  # ImportError, or a pytest that breaks on import
        facts["pytest_error"] = _cut("%s: %s" % (type(exc).__name__, exc))
        return facts
    version = getattr(pytest, "__version__", "unknown")
    facts["pytest"] = {"version": version, "location": os.path.dirname(os.path.abspath(pytest.__file__))}
    _config_facts(pytest, facts)
    return facts


if __name__ == "__main__":
    result = probe()
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        json.dump(result, out)
