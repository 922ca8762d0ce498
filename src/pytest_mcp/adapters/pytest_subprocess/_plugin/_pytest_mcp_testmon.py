"""pytest-mcp's part of an affected run, loaded into the target pytest with `-p _pytest_mcp_testmon`.

pytest-testmon selects the tests; this module only decides where its data lives and counts what
it left out. The project's own testmon set-up wins: a `.testmondata` in pytest's rootdir,
TESTMON_DATAFILE in the environment, or testmon options in its configuration. Otherwise the
data file is the one the server passes (a per-project cache directory outside the root), given
to testmon as TESTMON_DATAFILE before testmon reads it (in its pytest_configure).

testmon cannot see files that are not Python (a data file a test or an import reads). The plugin
keeps a record of them beside the server's data path (`unseen-files.json`: each file's size and
modification time, taken at the end of every affected run). When one changed since, or there is no
record yet, the data is discarded before testmon opens it: testmon then runs everything selected,
as on a first run, and a test the run did not reach has no data, so the next affected run runs it.

Tests testmon leaves out are counted two ways, as testmon leaves them out: items it deselects
(its `FakeItemFromTestmon` stand-ins in pytest_deselected), and whole files it keeps pytest
from collecting (pytest_ignore_collect), whose tests are counted from testmon's data.

PYTEST_DONT_REWRITE. Standard library only; Python 3.9 and later.
"""

import json
import os
import shlex
import shutil
import stat
import subprocess

import _pytest_mcp_protocol as protocol
import pytest

_DATA_FILE = ".testmondata"
# testmon's own ini keys: a project that sets one of them uses testmon.
_TESTMON_INI = ("environment_expression", "testmon_ignore_dependencies", "tmnet_url", "tmnet_api_key")
_UNSEEN_RECORD = "unseen-files.json"
_NOT_DATA = (".py", ".pyc", ".pyo")  # testmon sees Python source; bytecode is Python's own cache
_SKIPPED_DIRECTORIES = ("__pycache__", "node_modules")
_LISTED = 10
_left_out = {"deselected": 0, "files": set()}
_unseen = {"record": None, "ran_everything": None, "changed": []}


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
    if path and not hasattr(early_config, "workerinput"):
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        _unseen["record"] = os.path.join(os.path.dirname(path), _UNSEEN_RECORD)
        if not projects_own(early_config):
            os.environ["TESTMON_DATAFILE"] = path


def _git_files(root):
    """The files git knows under the root (tracked, and untracked but not ignored); None outside a work tree."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        listed = subprocess.run(
            [git, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if listed.returncode != 0:
        return None
    return [name for name in os.fsdecode(listed.stdout).split("\0") if name]


def _listed_files(root):
    """The project's files: git's view where the root is in a work tree, else a walk that leaves out
    hidden entries, caches and virtual environments."""
    names = _git_files(root)
    if names is not None:
        return names
    names = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = [
            name
            for name in subdirectories
            if not name.startswith(".")
            and name not in _SKIPPED_DIRECTORIES
            and not name.endswith(".egg-info")
            and not os.path.exists(os.path.join(directory, name, "pyvenv.cfg"))
        ]
        relative = os.path.relpath(directory, root)
        names += [name if relative == "." else os.path.join(relative, name) for name in files]
    return names


def unseen_files(root):
    """What testmon cannot see, as {path relative to the root: [size, mtime in ns]}."""
    names = [name.replace(os.sep, "/") for name in _listed_files(root)]
    # Virtual environments git does not ignore: by their pyvenv.cfg (the root itself never is one here).
    environments = tuple(name[: -len("pyvenv.cfg")] for name in names if name.endswith("/pyvenv.cfg"))
    files = {}
    for name in names:
        if name.endswith(_NOT_DATA) or (environments and name.startswith(environments)):
            continue
        directories = name.split("/")[:-1]
        if any(part in _SKIPPED_DIRECTORIES or part.endswith(".egg-info") for part in directories) or any(
            part.startswith(".") for part in name.split("/")
        ):
            continue
        try:
            status = os.stat(os.path.join(root, name))
        except OSError:  # deleted, though git's index still lists it
            continue
        if stat.S_ISREG(status.st_mode):
            files[name] = [status.st_size, status.st_mtime_ns]
    return files


def _data_file(config):
    """testmon's data file as testmon finds it: TESTMON_DATAFILE (the server's, or the project's), else its default."""
    return os.path.join(str(config.rootpath), os.environ.get("TESTMON_DATAFILE", _DATA_FILE))


def _read_record(data_file):
    try:
        with open(_unseen["record"], encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("data_file") != data_file:
        return None  # recorded for another data file: the project took up testmon, or gave it up
    return record.get("files") if isinstance(record.get("files"), dict) else None


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """Before testmon opens its data: discard it if files it cannot see changed since it was recorded."""
    if _unseen["record"] is None or hasattr(config, "workerinput"):
        return
    data_file = _data_file(config)
    if not os.path.exists(data_file):
        return  # a first run: testmon runs everything anyway
    recorded = _read_record(data_file)
    now = unseen_files(str(config.rootpath))
    if recorded is None:
        _unseen["ran_everything"] = "files_unrecorded"
    else:
        _unseen["changed"] = sorted(name for name in set(recorded) | set(now) if recorded.get(name) != now.get(name))
        if _unseen["changed"]:
            _unseen["ran_everything"] = "files_changed"
    if _unseen["ran_everything"] is not None:
        for suffix in ("", "-wal", "-shm"):  # SQLite's write-ahead log and its index go with it
            if os.path.exists(data_file + suffix):
                os.remove(data_file + suffix)


def _write_record(config):
    data_file = _data_file(config)
    record = {"data_file": data_file, "files": unseen_files(str(config.rootpath))}
    partial = _unseen["record"] + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    os.replace(partial, _unseen["record"])  # whole or not at all, should the run be killed meanwhile


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
    ran_everything = _unseen["ran_everything"]
    if ran_everything is None and data.new_db:
        ran_everything = "no_data"
    elif ran_everything is None and data.system_packages_change:
        ran_everything = "packages_changed"
    figures = {"not_run": _left_out["deselected"] + in_files, "ran_everything": ran_everything}
    if ran_everything == "files_changed":
        figures["changed_files"] = _unseen["changed"][:_LISTED]
        figures["changed_file_count"] = len(_unseen["changed"])
    config._pytest_mcp_affected = figures
    if _unseen["record"] is not None:
        _write_record(config)
