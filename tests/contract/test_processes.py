"""A test that leaves a process running, on both sides: the run stops it and says so, alike."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_mcp.testing import FakeTestRunner
from tests.contract.conftest import copy_of_the_project, open_side

pytestmark = pytest.mark.anyio

LEAKY = """import subprocess, sys


def test_leaves_a_server():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
"""
NODE_ID = "tests/test_leaky.py::test_leaves_a_server"
SERVER = f"{sys.executable} -c import time; time.sleep(60)"
NAMED = SERVER if len(SERVER) <= 80 else SERVER[:77] + "..."


@pytest.mark.parametrize("side_name", ["fake", "subprocess"])
async def test_a_run_that_leaves_a_process_running_stops_it_and_says_so(
    side_name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, anyio_backend: str
) -> None:
    root = copy_of_the_project(tmp_path)
    (root / "tests" / "test_leaky.py").write_text(LEAKY)

    def fake(runner: FakeTestRunner) -> None:
        runner.script(NODE_ID).leave_running(SERVER, node_id=NODE_ID)

    async with open_side(side_name, monkeypatch, root=root, fake=fake) as side:
        answer = await side.result("execute_tests", {"node_ids": [NODE_ID]})
        clean = await side.result("execute_tests", {"node_ids": ["tests/test_outcomes.py::test_passes"]})

    assert answer["summary"]["passed"] == 1
    assert answer["stopped_processes"] == {"count": 1, "commands": [NAMED]}
    assert answer["_text"].splitlines()[-1] == f'STOPPED 1 process the tests left running when pytest ended: "{NAMED}"'
    assert clean["stopped_processes"] is None
    assert "STOPPED" not in clean["_text"]
