"""pytest-mcp's part of an affected run, loaded into the target pytest with `-p _pytest_mcp_testmon`.

pytest-testmon selects the tests; this module only decides where its data lives and counts what
it left out. The project's own testmon set-up wins: a `.testmondata` in pytest's rootdir,
TESTMON_DATAFILE in the environment, or testmon options in its configuration. Otherwise the
data file is the one the server passes (a per-project cache directory outside the root), given
to testmon as TESTMON_DATAFILE before testmon reads it (in its pytest_configure).

Tests testmon leaves out are counted two ways, as testmon leaves them out: items it deselects
(its `FakeItemFromTestmon` stand-ins in pytest_deselected), and whole files it keeps pytest
from collecting (pytest_ignore_collect), whose tests are counted from testmon's data.

PYTEST_DONT_REWRITE. Standard library only; Python 3.9 and later.
"""

import os
import shlex

import _pytest_mcp_protocol as protocol
import pytest

_DATA_FILE = ".testmondata"
# testmon's own ini keys: a project that sets one of them uses testmon.
_TESTMON_INI = ("environment_expression", "testmon_ignore_dependencies", "tmnet_url", "tmnet_api_key")
_left_out = {"deselected": 0, "files": set()}


def pytest_addoption(parser):
    group = parser.getgroup("pytest-mcp", "pytest-mcp reporter (internal)")
    group.addoption(protocol.OPTION_TESTMON_DATA, default=None, help="(internal)")


def _dest():
    return protocol.OPTION_TESTMON_DATA.lstrip("-").replace("-", "_")


def projects_own(config):
    """Whether the project already uses testmon, so that its data file and settings are kept."""
    if os.environ.get("TESTMON_DATAFILE"):
        return True
    if os.path.exists(os.path.join(str(config.rootpath), _DATA_FILE)):
        return True
    words = list(config.getini("addopts")) + shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    if any(word.startswith(("--testmon", "--no-testmon", "--tmnet")) for word in words):
        return True
    for name in _TESTMON_INI:
        try:
            if config.getini(name):
                return True
        except ValueError:  # testmon is not loaded, so it declared no such key
            return False
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    path = getattr(early_config.known_args_namespace, _dest(), None)
    if path and not hasattr(early_config, "workerinput") and not projects_own(early_config):
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        os.environ["TESTMON_DATAFILE"] = path


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    config = session.config
    if hasattr(config, "workerinput"):
        return
    testmon = getattr(config, "testmon_config", None)
    if testmon is None or not testmon.select:
        why = (testmon.message or "").strip(" ,") if testmon is not None else "pytest-testmon is not loaded"
        raise pytest.UsageError(
            "%s affected: pytest-testmon does not select tests in this project's configuration (%s); "
            "omit this field, or remove what turns testmon off" % (protocol.REFUSED_OPTION_MARK, why)
        )


def pytest_deselected(items):
    _left_out["deselected"] += sum(1 for item in items if type(item).__name__ == "FakeItemFromTestmon")


@pytest.hookimpl(hookwrapper=True)
def pytest_ignore_collect(collection_path, config):
    outcome = yield
    if outcome.get_result():
        select = config.pluginmanager.get_plugin("TestmonSelect")
        relative = os.path.relpath(str(collection_path), str(config.rootdir))
        if select is not None and relative in select.deselected_files:
            _left_out["files"].add(relative)


def pytest_sessionfinish(session):
    config = session.config
    select = config.pluginmanager.get_plugin("TestmonSelect")
    data = getattr(config, "testmon_data", None)
    if hasattr(config, "workerinput") or select is None or data is None:
        return
    in_files = sum(1 for test in select.deselected_tests if test.split("::", 1)[0] in _left_out["files"])
    config._pytest_mcp_affected = {
        "not_run": _left_out["deselected"] + in_files,
        "first_run": bool(data.new_db),
        "everything_changed": bool(data.system_packages_change) and not data.new_db,
    }
