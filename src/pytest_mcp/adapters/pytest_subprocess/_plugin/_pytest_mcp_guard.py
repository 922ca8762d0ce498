"""pytest-mcp's path guard, loaded into the *target* pytest with ``-p _pytest_mcp_guard``.

Its one job is containment: pytest runs no test file, and imports no conftest, that lies outside
the project root, however the walk from the selected paths reaches it (a symlink to a directory
or a file elsewhere). The server has already refused node ids that leave the root; what it cannot
see is where pytest's own walk leads. It writes no events and reads no option of ours, and it is
loaded into every pytest the server starts (runs and discoveries), so its hooks run in
pytest-xdist's workers too, which do the collecting. architecture/security.md lists every way
pytest reads a path, and which control covers it.

Standard library only; Python >= 3.9 and pytest >= 7.

PYTEST_DONT_REWRITE: the bootstrap imports this module before pytest starts, as it does the
reporter; the marker tells pytest to take it as imported, without rewriting it.
"""

import os

import pytest


def _inside(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


_ROOTS = {}  # invocation directory -> its real path: asked again for every path pytest collects


def _root(config):
    # The server starts pytest in the project root; the kernel gives the working directory real.
    directory = str(config.invocation_params.dir)
    root = _ROOTS.get(directory)
    if root is None:
        root = _ROOTS[directory] = os.path.realpath(directory)
    return root


def _selected(config, path):
    """Whether `path` lies in what the command line selected (not a sibling pytest 8+ passes on its way)."""
    base = str(config.invocation_params.dir)
    lexical = os.path.abspath(str(path))
    for arg in config.args or [base]:
        anchor = os.path.abspath(os.path.join(base, str(arg).partition("[")[0].split("::")[0]))
        if _inside(lexical, anchor):
            return True
    return False


def _outside_message(shown):
    return (
        "pytest-mcp did not collect %s: it leads outside the project root, and pytest-mcp runs only the "
        "project's own tests. Remove the link, add it to norecursedirs, or serve a root that contains "
        "its target." % shown
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_ignore_collect(collection_path, config):
    outcome = yield
    if outcome.get_result() or _inside(os.path.realpath(str(collection_path)), _root(config)):
        return  # ignored anyway (norecursedirs, --ignore, collect_ignore), or inside the root
    outcome.force_result(True)
    if _selected(config, collection_path):
        # A collection error pytest itself counts and prints, as for a file it could not import.
        from _pytest.reports import CollectReport

        nodeid = os.path.relpath(str(collection_path), str(config.rootpath)).replace(os.sep, "/")
        report = CollectReport(nodeid, "failed", _outside_message(nodeid), [])
        config.hook.pytest_collectreport(report=report)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Refuse, before pytest imports any conftest, what would take this run out of the root."""
    namespace = early_config.known_args_namespace
    if getattr(namespace, "pyargs", False) and namespace.file_or_dir:
        raise pytest.UsageError(
            "pytest-mcp: the project's configuration turns on --pyargs, which makes node ids names of modules "
            "to import from anywhere on sys.path; pytest-mcp passes no node ids under --pyargs. Run without "
            "node ids, or remove --pyargs from addopts"
        )
    root = _root(early_config)
    starts = _starting_paths(early_config)
    for text, anchor in starts:
        if not (_inside(anchor, root) and _inside(os.path.realpath(anchor), root)):
            raise pytest.UsageError("pytest-mcp: %s leads outside the project root" % text)
    # pytest also imports the conftest.py of each test* directory beside a starting directory
    # before any collection hook runs: one that is a link out of the root would run code from elsewhere.
    anchors = [anchor for _text, anchor in starts if os.path.isdir(anchor)]
    if not any(os.path.exists(anchor) for _text, anchor in starts):
        anchors = [str(early_config.invocation_params.dir)]
    for anchor in anchors:
        for name in sorted(os.listdir(anchor)):
            directory = os.path.join(anchor, name)
            if (
                name.startswith("test")
                and os.path.isfile(os.path.join(directory, "conftest.py"))
                and not _inside(os.path.realpath(directory), root)
            ):
                shown = os.path.relpath(directory, str(early_config.invocation_params.dir))
                raise pytest.UsageError(
                    "pytest-mcp: %s leads outside the project root, and pytest would import its "
                    "conftest.py at start-up. Remove the link, or serve a root that contains its target" % shown
                )


def _starting_paths(config):
    """Where this run starts, as pytest decides it (the command line, testpaths, or the working
    directory): each start's text, with the absolute path pytest makes of it (`..` removed lexically)."""
    namespace = config.known_args_namespace
    base = str(config.invocation_params.dir)
    try:
        starts, _source = config._decide_args(
            args=namespace.file_or_dir,
            pyargs=namespace.pyargs,
            testpaths=config.getini("testpaths"),
            invocation_dir=config.invocation_params.dir,
            rootpath=config.rootpath,
            warn=False,
        )
    except Exception:  # a pytest without it: the command line, else the working directory
        starts = list(namespace.file_or_dir or [base])
    found = []
    for start in starts:
        text = str(start)
        for part in {text.split("::")[0], text.partition("[")[0].split("::")[0]}:
            found.append((text, os.path.abspath(os.path.join(base, part))))
    return found
