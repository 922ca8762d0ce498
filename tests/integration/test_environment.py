"""The test subprocess gets no stdin and the user's environment, untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_mcp.domain.runs import RunSpec
from tests.integration.support import run

pytestmark = pytest.mark.anyio

PROBE_TEST = """
import os, sys

def test_stdin_is_at_end_of_file():
    assert os.read(0, 16) == b""

def test_environment_is_the_users():
    assert os.environ["USERS_OWN_PROBE"] == "kept as is"
    assert os.environ.get("PYTHONPATH") == os.environ["EXPECTED_PYTHONPATH"]
    assert not any(name.upper().startswith("PYTEST_MCP_") for name in os.environ)  # the server's own settings

def test_the_project_root_is_first_on_sys_path_as_with_python_dash_m():
    assert sys.path[0] == os.getcwd()
"""


async def test_pytest_runs_with_no_stdin_and_the_environment_unchanged(
    python: Path, make_runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "test_probe.py").write_text(PROBE_TEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    monkeypatch.setenv("USERS_OWN_PROBE", "kept as is")
    monkeypatch.setenv("PYTEST_MCP_PROBE", "a setting of the server's, not passed on")
    monkeypatch.setenv("EXPECTED_PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))

    report = await run(make_runner(python, tmp_path), RunSpec(timeout=60))

    assert [t.message for t in report.tests] == []
    assert report.summary is not None
    assert report.summary.passed == 3
