"""`pytest_mcp.testing` in a process of its own: what importing it loads, and its opt-in pytest plugin."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path


def _python(code: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=cwd, check=False
    )


def test_importing_it_imports_no_pytest_and_builds_nothing() -> None:
    probe = _python(
        "import gc, sys, pytest_mcp.testing as t, pytest_mcp.container as c; "
        "built = [o for o in gc.get_objects() if isinstance(o, (c.Container, t.FakeTestRunner))]; "
        "print('pytest' in sys.modules, '_pytest' in sys.modules, len(built))"
    )

    assert probe.stdout.split() == ["False", "False", "0"], probe.stderr


PROJECT_TEST = textwrap.dedent(
    """
    import pytest

    pytestmark = pytest.mark.anyio


    @pytest.fixture
    def anyio_backend():
        return "asyncio"


    async def test_the_fixtures_connect_to_the_scripted_runner(pytest_mcp_runner, pytest_mcp_client):
        pytest_mcp_runner.script("tests/test_x.py::test_y", "failed", message="assert 1 == 2")

        result = await pytest_mcp_client.call_tool("execute_tests", {})

        assert result.structured_content["summary"]["failed"] == 1
        assert pytest_mcp_runner.calls[-1].node_ids == ()
    """
)


def _pytest_in(project: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "anyio", "-p", "no:cacheprovider", "-q", *options],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=project,
        env=env,
        check=False,
    )


def test_the_plugin_is_opt_in_and_provides_both_fixtures(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_agent.py").write_text(PROJECT_TEST)

    without = _pytest_in(tmp_path)
    with_plugin = _pytest_in(tmp_path, "-p", "pytest_mcp.testing")

    assert without.returncode == 1
    assert "fixture 'pytest_mcp_runner' not found" in without.stdout
    assert with_plugin.returncode == 0, with_plugin.stdout + with_plugin.stderr
    assert "1 passed" in with_plugin.stdout
