"""The runner stays in control of the process: hangs are stopped with everything they spawned, output is bounded."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import uuid

import anyio
import pytest

from pytest_mcp.domain.runs import RunSpec
from tests.integration.oracle import COUNT_KEYS, pytest_says
from tests.integration.support import alongside, processes_with, project, run

pytestmark = pytest.mark.anyio

MARKER_VARIABLE = "HANG_FIXTURE_MARKER"  # read by tests/fixtures/hang/test_hang.py
OUTPUT_LIMIT = 1_000_000  # "well under 1 MB": the fixtures print 40 MB
TRUNCATION_MARKER = re.compile(r"truncat|\bcut\b|omitted|elided|dropped", re.IGNORECASE)


@pytest.fixture
def hang_marker(monkeypatch: pytest.MonkeyPatch):
    """A unique string the hanging test puts on its grandchild's command line."""
    marker = f"pytest-mcp-grandchild-{uuid.uuid4().hex}"
    monkeypatch.setenv(MARKER_VARIABLE, marker)  # the runner passes the environment through
    yield marker
    for pid in processes_with(marker):  # never leave a 600 s sleeper behind, even when the test fails
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class LoopClock:
    """The running asyncio loop's clock, which the test moves on: a run's timeout then comes when the
    test says, not after however long pytest took to start on a loaded machine."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._real = self._loop.time
        self._ahead = 0.0

    def advance(self, seconds: float) -> None:
        self._ahead += seconds

    def __enter__(self) -> LoopClock:
        self._loop.time = lambda: self._real() + self._ahead  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        del self._loop.time  # the class's own method again


async def test_timeout_stops_pytest_and_the_grandchild_it_spawned(python, make_runner, hang_marker):
    """The timeout passes once the grandchild is known to run: with a 2 s timeout on the clock, a slow
    start (load) once let it pass before the test had spawned anything."""
    root = project("hang")
    timeout = 3600.0  # never reached by the clock itself: the test moves the clock past it

    with LoopClock() as clock:
        async with anyio.create_task_group() as group:

            async def timeout_once_the_grandchild_runs() -> None:
                while not processes_with(hang_marker):
                    await anyio.sleep(0.05)
                clock.advance(timeout)

            group.start_soon(timeout_once_the_grandchild_runs)
            # run() fails the test if the runner has not returned RUN_TIMEOUT after its timeout.
            report = await run(make_runner(python, root), RunSpec(timeout=timeout))
            group.cancel_scope.cancel()

    assert report.termination.kind == "timed_out"
    assert report.summary is None
    assert processes_with(hang_marker) == [], "a process spawned by the test outlived the run"


async def test_40mb_uncaptured_print_leaves_bounded_stdout_with_a_truncation_marker(python, make_runner):
    root = project("big_output")
    spec = RunSpec(node_ids=("test_big_uncaptured.py",), include_passed=True, timeout=60)
    expected, report = await alongside(
        lambda: pytest_says(python, root, [*spec.node_ids]), run(make_runner(python, root), spec)
    )

    assert len(report.stdout) < OUTPUT_LIMIT
    assert TRUNCATION_MARKER.search(report.stdout), "cut output must say it was cut"
    assert report.termination.exit_code == expected.exit_code == 0
    assert report.summary is not None
    assert expected.counts is not None
    assert {key: getattr(report.summary, key) for key in COUNT_KEYS} == expected.counts
    assert report.summary.passed == 2


async def test_bounded_stdout_keeps_the_end_where_pytest_prints_its_summary(python, make_runner):
    root = project("big_output")
    report = await run(
        make_runner(python, root), RunSpec(node_ids=("test_big_uncaptured.py",), include_passed=True, timeout=60)
    )

    tail = report.stdout[-2000:]
    assert re.search(r"2 passed in [\d.]+s", tail), tail


async def test_40mb_captured_print_of_a_failing_test_is_bounded_everywhere(python, make_runner):
    root = project("big_output")
    spec = RunSpec(node_ids=("test_big_captured.py",), show_capture=True, include_passed=True, timeout=60)
    report = await run(make_runner(python, root), spec)

    assert report.termination.exit_code == 1
    assert report.summary is not None
    assert report.summary.failed == 1
    assert len(report.stdout) < OUTPUT_LIMIT
    assert len(report.stderr) < OUTPUT_LIMIT
    [failure] = [test for test in report.tests if test.outcome == "failed"]
    assert "failed after printing 40 MB" in f"{failure.message}\n{failure.traceback}"
    assert failure.stdout is not None, "the failing test's captured stdout is reported"
    assert len(failure.stdout) < OUTPUT_LIMIT
    assert failure.stdout.count("y") > 1000, "the report keeps part of what was printed"
    assert TRUNCATION_MARKER.search(failure.stdout), "cut captured output must say it was cut"
    assert len(failure.traceback or "") < OUTPUT_LIMIT
    assert len(failure.message or "") < OUTPUT_LIMIT


async def test_cancelling_a_run_stops_pytest_and_the_grandchild_before_cancellation_propagates(
    python, make_runner, hang_marker
):
    root = project("hang")
    runner = make_runner(python, root)

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(runner.run, RunSpec(timeout=60.0))
            while not processes_with(hang_marker):
                await anyio.sleep(0.05)
            group.cancel_scope.cancel()

    assert processes_with(hang_marker) == [], "a process spawned by the test outlived the cancelled run"
