"""Every process the server starts is contained, not only test runs: a collection, an environment
probe, and a run whose pytest dies without a word (a crash, `os._exit`) stop what they left behind.

A helper leaves the process group and session with `setsid()` after a fork (the e2e suite covers
the other kinds on every way a call ends); it writes its pid to a file, and must be gone, or a
zombie, within 2 s of the call's return.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import pytest

from pytest_mcp.adapters.pytest_subprocess.environment import SubprocessEnvironmentProbe
from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.runner import SubprocessPytestRunner
from pytest_mcp.domain.runs import CollectSpec, RunSpec

pytestmark = pytest.mark.anyio

START_HELPER = """
import os, time

def start_helper(pidfile):
    if os.fork() == 0:
        os.setsid()
        with open(pidfile + ".tmp", "w") as out:
            out.write(str(os.getpid()))
        os.rename(pidfile + ".tmp", pidfile)
        time.sleep(600)
        os._exit(0)
    while not os.path.exists(pidfile):
        time.sleep(0.01)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


async def assert_gone_within_2s(pidfile: Path) -> None:
    assert pidfile.exists(), "the helper never started, so its end proves nothing"
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 2.0
    while _alive(pid):
        assert time.monotonic() < deadline, f"the helper {pid} was alive 2 s after the call returned"
        await anyio.sleep(0.02)


def helper_project(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    root.mkdir()
    pidfile = tmp_path / "helper.pid"
    (root / "helper.py").write_text(START_HELPER)
    for name, source in files.items():
        (root / name).write_text(source.replace("PIDFILE", repr(str(pidfile))))
    return root, pidfile


def runner(root: Path) -> SubprocessPytestRunner:
    return SubprocessPytestRunner(TargetInterpreter.given(Path(sys.executable)), root=root)


async def test_a_collection_stops_what_a_conftest_started(tmp_path: Path) -> None:
    root, pidfile = helper_project(
        tmp_path,
        {
            "conftest.py": "import helper\nhelper.start_helper(PIDFILE)\n",
            "test_a.py": "def test_a():\n    pass\n",
        },
    )

    report = await runner(root).collect(CollectSpec(timeout=60))

    assert report.finished, report.stderr
    assert [test.node_id for test in report.tests] == ["test_a.py::test_a"]
    await assert_gone_within_2s(pidfile)


async def test_an_environment_probe_stops_what_a_plugin_started_on_import(tmp_path: Path) -> None:
    root, pidfile = helper_project(
        tmp_path,
        {
            "leaky_plugin.py": "import helper\nhelper.start_helper(PIDFILE)\n",
            "pytest.ini": "[pytest]\naddopts = -p leaky_plugin\n",
        },
    )

    probe = await SubprocessEnvironmentProbe(TargetInterpreter.given(Path(sys.executable)), root).probe(60)

    assert probe.facts is not None, probe.stderr
    assert probe.facts.config_error is None
    assert probe.containment == "subreaper"
    await assert_gone_within_2s(pidfile)


@pytest.mark.parametrize(
    ("ending", "termination"),
    [
        ("os.kill(os.getpid(), signal.SIGSEGV)", ("signalled", None, "SIGSEGV")),
        ("os._exit(3)", ("exited", 3, None)),
    ],
    ids=["crash", "os-exit"],
)
async def test_a_run_whose_pytest_dies_at_once_still_stops_its_helpers_and_ends_as_pytest_did(
    tmp_path: Path, ending: str, termination: tuple[str, int | None, str | None]
) -> None:
    root, pidfile = helper_project(
        tmp_path,
        {
            "test_dies.py": (
                "import os, signal\nimport helper\n\n"
                f"def test_dies():\n    helper.start_helper(PIDFILE)\n    {ending}\n"
            )
        },
    )

    report = await runner(root).run(RunSpec(timeout=60))

    ended = report.termination
    assert (ended.kind, ended.exit_code, ended.signal) == termination
    await assert_gone_within_2s(pidfile)
    assert report.stopped_processes == ("[a fork of pytest]",)
    assert not list(root.glob("core*")), "the warden dumped core beside pytest's"
