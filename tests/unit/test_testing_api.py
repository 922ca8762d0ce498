"""The public surface of `pytest_mcp.testing`: its names, its docs, and a plugin that loads only on request."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
from importlib.metadata import distribution
from pathlib import Path
from types import ModuleType

import pytest_mcp.testing as testing

EXPECTED_ALL = [
    "RECORDING_FORMAT",
    "RECORDING_VERSION",
    "CollectSpec",
    "FailureKind",
    "FakeTestRunner",
    "RunSpec",
    "ScriptError",
    "ScriptedTest",
    "connect",
]
# Public names that are not API: the `from __future__` directive and the plugin's hook.
NOT_API = {"annotations", "pytest_configure"}


def test_all_is_exactly_the_documented_public_surface() -> None:
    assert testing.__all__ == EXPECTED_ALL


def test_every_public_name_is_in_all_and_every_name_in_all_exists() -> None:
    public = {
        name for name, value in vars(testing).items() if not name.startswith("_") and not isinstance(value, ModuleType)
    }

    assert public - NOT_API == set(testing.__all__)
    assert all(hasattr(testing, name) for name in testing.__all__)


def test_every_class_and_function_in_all_has_a_docstring() -> None:
    for name in testing.__all__:
        value = getattr(testing, name)
        if isinstance(value, type) or inspect.isfunction(value):
            assert (value.__doc__ or "").strip(), f"{name} has no docstring"
    for method in ("script", "fail_with", "from_dict", "from_recording", "to_recording"):
        assert (getattr(testing.FakeTestRunner, method).__doc__ or "").strip(), method


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


def test_the_package_declares_no_pytest11_entry_point() -> None:
    groups = {entry.group for entry in distribution("pytest-mcp").entry_points}

    assert "pytest11" not in groups


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
