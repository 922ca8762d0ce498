"""A run with a nice value gives way to the server: its processes by their nice, its session by its
autogroup's (ADR 0022, `--run-priority`). Seen from inside the run's own tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.runner import ResourceLimits, SubprocessPytestRunner
from pytest_mcp.adapters.pytest_subprocess.sandbox import open_bubblewrap
from pytest_mcp.domain.runs import RunSpec
from tests.integration.support import run

pytestmark = pytest.mark.anyio

AUTOGROUP = Path("/proc/self/autogroup")
HAS_AUTOGROUP = AUTOGROUP.exists() and Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
SPEC = RunSpec(timeout=60.0)


def _project(root: Path, nice: int, autogroup_nice: int | None) -> Path:
    """A project whose tests pass only where the run's processes have `nice`, a process the tests
    start has it too, and, where Linux has autogroups, the session's is `autogroup_nice` (written by
    the server once the run has started, so looked at until it is, for up to 20 s)."""
    root.mkdir()
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_priority.py").write_text(
        "import os, subprocess, sys, time\n\n"
        f"def test_the_run_has_its_nice():\n    assert os.getpriority(os.PRIO_PROCESS, 0) == {nice}\n\n"
        "def test_a_process_it_starts_has_it_too():\n"
        "    child = subprocess.run([sys.executable, '-c', 'import os; print(os.getpriority(os.PRIO_PROCESS, 0))'],\n"
        "                           capture_output=True, text=True, check=True)\n"
        f"    assert int(child.stdout) == {nice}\n\n"
        "def test_the_session_has_its_share():\n"
        f"    expected = {autogroup_nice!r}\n"
        "    if expected is None:\n"
        "        return\n"
        "    deadline = time.monotonic() + 20\n"
        "    while True:\n"
        "        seen = open('/proc/self/autogroup').read().split()[-1]\n"
        "        if int(seen) == expected or time.monotonic() > deadline:\n"
        "            break\n"
        "        time.sleep(0.05)\n"
        "    assert int(seen) == expected\n"
    )
    return root


def _runner(root: Path, python: Path, nice: int | None, sandboxed: bool) -> SubprocessPytestRunner:
    return SubprocessPytestRunner(
        TargetInterpreter.given(python),
        root=root,
        resource_limits=ResourceLimits(nice=nice),
        sandbox=open_bubblewrap(False) if sandboxed else None,
    )


@pytest.mark.parametrize(
    "sandboxed",
    [
        False,
        pytest.param(True, marks=pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")),
    ],
    ids=["plain", "sandboxed"],
)
async def test_a_low_priority_run_has_nice_10_and_its_session_the_same_share(
    tmp_path: Path, json_report_python: Path, sandboxed: bool
) -> None:
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    root = _project(tmp_path / "project", min(ours + 10, 19), 10 if HAS_AUTOGROUP else None)

    report = await run(_runner(root, json_report_python, 10, sandboxed), SPEC)

    assert report.summary is not None, report.stderr
    assert (report.summary.passed, report.summary.failed) == (3, 0), report.stdout


async def test_a_normal_run_keeps_the_servers_nice_and_a_session_of_the_default_share(
    tmp_path: Path, json_report_python: Path
) -> None:
    root = _project(tmp_path / "project", os.getpriority(os.PRIO_PROCESS, 0), 0 if HAS_AUTOGROUP else None)

    report = await run(_runner(root, json_report_python, None, False), SPEC)

    assert report.summary is not None, report.stderr
    assert (report.summary.passed, report.summary.failed) == (3, 0), report.stdout
