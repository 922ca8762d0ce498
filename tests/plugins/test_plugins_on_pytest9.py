"""The plugin matrix on the newest pytest 9 (the cases and checks are in plugin_matrix.py)."""

import sys
from pathlib import Path

import pytest

from tests.plugins.plugin_matrix import PluginMatrix, observed
from tests.plugins.support import ready


class TestPluginsOnPytest9(PluginMatrix):
    environment = "pytest9"


def test_rerunfailures_on_the_newest_pytest(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The one cheap representative left in `-m "not slow"`: the newest pytest, and the plugin
    whose word (`rerun`) is not one of pytest's own. It builds only that environment. Its plain
    pytest run and server call are the matrix's own for that case (the same project, call and
    seed): made here when the matrix is deselected, else shared with it."""
    [env] = ready("pytest9").values()
    seen = observed(request, env, "rerunfailures", tmp_path_factory)
    said, answer = seen.said, seen.answer

    assert said.words == ["1 failed", "2 passed", "3 rerun"], said.output[-3000:]
    assert answer.counts == said.counts, answer.context()
    assert answer.headline.startswith("1 failed, 2 passed, 3 rerun in "), answer.context()


def test_the_environment_holds_pytests_rewritten_plugin_modules() -> None:
    """A start of the environment's pytest reads the plugins' rewritten modules from the cache that
    building it filled (support.warm), rather than rewriting them all again, which it does at each
    start under PYTHONDONTWRITEBYTECODE (ours): hypothesis at start-up, xdist in its workers."""
    [env] = ready("pytest9").values()
    tag = f"cpython-{sys.version_info.major}{sys.version_info.minor}-pytest-{env.pytest_version}.pyc"
    site = next(env.home.glob("lib/python*/site-packages"))

    for module in ("hypothesis/__init__", "hypothesis/strategies/_internal/core", "xdist/remote"):
        path = site / Path(module).parent / "__pycache__" / f"{Path(module).name}.{tag}"
        assert path.is_file(), f"{path} is missing: every start of the environment rewrites {module}.py"
