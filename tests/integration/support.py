"""Helpers shared by the integration tests."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio

from pytest_mcp.domain.runs import CollectionReport, CollectSpec, RunReport, RunSpec

T = TypeVar("T")
R = TypeVar("R")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# Generous per-call limit: a broken runner must fail the test, not hang the suite.
RUN_TIMEOUT = 60.0

# pytest writes these itself; everything else in a fixture project must be left untouched.
PYTEST_OWN_DIRS = frozenset({".pytest_cache", "__pycache__"})


def project(name: str) -> Path:
    root = FIXTURES / name
    assert root.is_dir(), f"missing fixture project {root}"
    return root


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose command line contains `marker`."""
    pids = []
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if needle in cmdline:
            pids.append(int(entry.name))
    return pids


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and directory under `root` except pytest's own caches: path -> (size, mtime_ns)."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in PYTEST_OWN_DIRS]
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            size = 0 if path.is_dir() else info.st_size
            state[str(path.relative_to(root))] = (size, info.st_mtime_ns if not path.is_dir() else 0)
    return state


async def run(runner: Any, spec: RunSpec) -> RunReport:
    """`runner.run(spec)`, failing the test instead of hanging if the runner never returns."""
    with anyio.fail_after(spec.timeout + RUN_TIMEOUT):
        report: RunReport = await runner.run(spec)
    return report


async def collect(runner: Any, spec: CollectSpec) -> CollectionReport:
    """`runner.collect(spec)`, failing the test instead of hanging if the runner never returns."""
    with anyio.fail_after(spec.timeout + RUN_TIMEOUT):
        report: CollectionReport = await runner.collect(spec)
    return report


_RUNS: dict[tuple[str, str, str], RunReport] = {}


async def run_once(runner: Any, python: Path, root: Path, spec: RunSpec) -> RunReport:
    """Like `run`, but each (interpreter, project, spec) runs only once per session.

    For tests that only read a report: several assertions about one run need not pay for
    several pytest processes.
    """
    key = (str(python), str(root), spec.model_dump_json())
    if key not in _RUNS:
        _RUNS[key] = await run(runner, spec)
    return _RUNS[key]


async def alongside(oracle_call: Callable[[], T], runner_call: Awaitable[R]) -> tuple[T, R]:
    """Ask plain pytest (in a worker thread) while the runner runs: same answers, half the wait."""
    answers: list[T] = []

    async def ask_oracle() -> None:
        answers.append(await anyio.to_thread.run_sync(oracle_call))

    async with anyio.create_task_group() as group:
        group.start_soon(ask_oracle)
        report = await runner_call
    return answers[0], report


def canary(base: Path, name: str) -> str:
    return f"open({str(base / 'CANARY')!r}, 'a').write({name!r} + '\\n')\n"


def linked_project(base: Path) -> Path:
    """ROOT/tests/test_in.py, plus links out: a directory (escape), a test file, and deep -> a/b/c."""
    root = base / "root"
    (root / "tests").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "tests" / "test_in.py").write_text("def test_in():\n    pass\n")
    (root / "a" / "b" / "c").mkdir(parents=True)
    os.symlink("a/b/c", root / "deep")
    outside = base / "outside"
    outside.mkdir()
    (outside / "conftest.py").write_text(canary(base, "outside conftest"))
    (outside / "test_out.py").write_text(canary(base, "outside test") + "def test_out():\n    pass\n")
    (base / "elsewhere").mkdir()
    (base / "elsewhere" / "test_far.py").write_text(canary(base, "linked file") + "def test_far():\n    pass\n")
    os.symlink(outside, root / "escape")
    os.symlink(base / "elsewhere" / "test_far.py", root / "tests" / "test_link.py")
    return root


def fired(base: Path) -> list[str]:
    path = base / "CANARY"
    return path.read_text().splitlines() if path.exists() else []
