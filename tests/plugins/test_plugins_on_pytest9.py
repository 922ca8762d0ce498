"""The plugin matrix on the newest pytest 9 (the cases and checks are in plugin_matrix.py)."""

from pathlib import Path

import pytest

from tests.plugins.plugin_matrix import CASES, PluginMatrix
from tests.plugins.support import execute, pytest_says, ready, same_project_twice


class TestPluginsOnPytest9(PluginMatrix):
    environment = "pytest9"


@pytest.mark.anyio
async def test_rerunfailures_on_the_newest_pytest(tmp_path: Path) -> None:
    """The one cheap representative left in `-m "not slow"`: the newest pytest, and the plugin
    whose word (`rerun`) is not one of pytest's own. It builds only that environment."""
    [env] = ready("pytest9").values()
    pytest_root, mcp_root = same_project_twice(CASES["rerunfailures"].project, tmp_path)
    said = pytest_says(env, pytest_root, [])
    [answer] = await execute(env, mcp_root, tmp_path, {"detail": "all"})

    assert said.words == ["1 failed", "2 passed", "3 rerun"], said.output[-3000:]
    assert answer.counts == said.counts, answer.context()
    assert answer.headline.startswith("1 failed, 2 passed, 3 rerun in "), answer.context()
