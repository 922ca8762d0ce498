"""DetachedRuns: ownership, the time and number a finished result is kept, and stopping by owner."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp_types import CallToolResult, TextContent

from pytest_mcp.adapters.mcp.detached_runs import DetachedRun, DetachedRuns
from pytest_mcp.domain.progress import RunWatch
from pytest_mcp.domain.requests import ExecuteTestsRequest, RequestPolicy

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def answer(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


def running(request: object, watch: RunWatch, run_id: str, status: str = "running") -> CallToolResult:
    return answer(status)


async def start(runs: DetachedRuns, owner: str, gate: anyio.Event, text: str = "done") -> DetachedRun:
    request = ExecuteTestsRequest.parse({}, RequestPolicy(root=Path("/")))

    async def work() -> CallToolResult:
        await gate.wait()
        return answer(text)

    run = runs.start(owner, RunWatch(), request, work, running)
    assert not await runs.wait(run, 0.01)
    runs.detach(run)
    return run


async def test_a_run_is_found_only_by_its_owner_and_only_once_detached() -> None:
    runs = DetachedRuns(ttl=60, max_kept=4)
    async with runs.serving():
        gate = anyio.Event()
        run = await start(runs, "session:a", gate)
        assert runs.find(run.run_id, "session:a") is run
        assert runs.find(run.run_id, "session:b") is None
        assert runs.find(run.run_id, "client:x") is None
        gate.set()
        assert await runs.wait(run, 1)
        assert run.outcome().content[0].text == "done"  # type: ignore[union-attr]
        assert runs.find(run.run_id, "session:a") is run  # kept after it finished


async def test_a_finished_result_is_kept_for_the_ttl_then_dropped() -> None:
    clock = Clock()
    runs = DetachedRuns(ttl=600, max_kept=4, clock=clock)
    async with runs.serving():
        gate = anyio.Event()
        run = await start(runs, "stdio", gate)
        gate.set()
        await runs.wait(run, 1)
        clock.now += 599
        assert runs.find(run.run_id, "stdio") is run
        clock.now += 2
        assert runs.find(run.run_id, "stdio") is None


async def test_at_most_max_kept_results_are_kept_and_the_oldest_go_first() -> None:
    clock = Clock()
    runs = DetachedRuns(ttl=600, max_kept=2, clock=clock)
    async with runs.serving():
        finished = []
        for index in range(3):
            gate = anyio.Event()
            run = await start(runs, "stdio", gate, text=str(index))
            gate.set()
            await runs.wait(run, 1)
            clock.now += 1
            finished.append(run)
        assert [runs.find(run.run_id, "stdio") is not None for run in finished] == [False, True, True]


async def test_a_running_run_is_never_dropped_for_room() -> None:
    runs = DetachedRuns(ttl=600, max_kept=1)
    async with runs.serving():
        gates = [anyio.Event() for _ in range(3)]
        started = [await start(runs, "stdio", gate) for gate in gates]
        assert all(runs.find(run.run_id, "stdio") is run for run in started)
        assert runs.running() == 3
        for gate in gates:
            gate.set()


async def test_ending_an_owner_stops_its_runs_and_no_one_elses() -> None:
    runs = DetachedRuns(ttl=600, max_kept=4)
    async with runs.serving():
        mine, theirs = await start(runs, "session:a", anyio.Event()), await start(runs, "session:b", anyio.Event())
        runs.end_owner("session:a")
        with anyio.fail_after(1):
            await mine.ended.wait()
        assert mine.cancelled
        assert runs.find(mine.run_id, "session:a") is None
        assert runs.find(theirs.run_id, "session:b") is theirs
        assert not theirs.ended.is_set()


async def test_leaving_serving_stops_every_run() -> None:
    runs = DetachedRuns(ttl=600, max_kept=4)
    async with runs.serving():
        run = await start(runs, "stdio", anyio.Event())
    assert run.cancelled
    assert runs.running() == 0


async def test_a_cancelled_run_has_ended_once_cancel_returns_and_is_known_as_cancelled_for_the_ttl() -> None:
    clock = Clock()
    runs = DetachedRuns(ttl=600, max_kept=4, clock=clock)
    async with runs.serving():
        run = await start(runs, "stdio", anyio.Event())
        await runs.cancel(run)
        assert run.cancelled
        assert runs.find(run.run_id, "stdio") is run
        assert runs.find(run.run_id, "session:other") is None
        clock.now += 601
        assert runs.find(run.run_id, "stdio") is None
