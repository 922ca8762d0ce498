"""Two DetachedRuns sharing one run store, as two instances share Redis (ADR 0016): found, finished,
cancelled and lost across instances, by owner; and the in-memory default publishes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp_types import CallToolResult, TextContent

from pytest_mcp.adapters.mcp.detached_runs import DetachedRun, DetachedRuns
from pytest_mcp.adapters.mcp.shared_runs import RemoteRun
from pytest_mcp.adapters.run_store.memory import InMemoryRunStore
from pytest_mcp.domain.errors import ExecutionFailed
from pytest_mcp.domain.progress import RunWatch
from pytest_mcp.domain.requests import ExecuteTestsRequest, RequestPolicy

pytestmark = pytest.mark.anyio


def answer(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content={"said": text})


def running(request: object, watch: RunWatch, run_id: str, status: str = "running") -> CallToolResult:
    return answer(f"{status} {watch.done}/{watch.total}")


async def start(runs: DetachedRuns, owner: str, gate: anyio.Event) -> DetachedRun:
    request = ExecuteTestsRequest.parse({}, RequestPolicy(root=Path("/")))
    watch = RunWatch()

    async def work() -> CallToolResult:
        await watch.update(1, 3, 0)
        await gate.wait()
        return answer("done")

    run = runs.start(owner, watch, request, work, running)
    assert not await runs.wait(run, 0.01)
    await runs.detach(run)
    return run


@asynccontextmanager
async def two_instances(store: InMemoryRunStore) -> AsyncIterator[tuple[DetachedRuns, DetachedRuns]]:
    a, b = DetachedRuns(ttl=60, max_kept=4, store=store), DetachedRuns(ttl=60, max_kept=4, store=store)
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(a.serving())
        await stack.enter_async_context(b.serving())
        yield a, b


async def test_a_run_started_on_one_instance_is_read_and_finished_through_the_other() -> None:
    async with two_instances(InMemoryRunStore(shared=True)) as (a, b):
        gate = anyio.Event()
        run = await start(a, "client:x", gate)
        remote = await b.find(run.run_id, "client:x")
        assert isinstance(remote, RemoteRun)
        assert not await b.wait(remote, 0.05)
        assert remote.answer_running("running").content[0].text == "running 1/3"  # type: ignore[union-attr]
        gate.set()
        assert await b.wait(remote, 2)
        assert remote.outcome().structured_content == {"said": "done"}


async def test_another_owner_finds_nothing_on_any_instance() -> None:
    async with two_instances(InMemoryRunStore(shared=True)) as (a, b):
        run = await start(a, "client:x", anyio.Event())
        assert await b.find(run.run_id, "client:y") is None
        assert await a.find(run.run_id, "client:y") is None
        assert await b.find("A" * 32, "client:x") is None


async def test_a_cancel_through_the_other_instance_stops_the_run_where_it_executes() -> None:
    async with two_instances(InMemoryRunStore(shared=True)) as (a, b):
        run = await start(a, "client:x", anyio.Event())  # never released: only the cancel ends it
        remote = await b.find(run.run_id, "client:x")
        assert isinstance(remote, RemoteRun)
        with anyio.fail_after(2):
            await b.cancel(remote)
        assert run.cancelled
        assert remote.cancelled
        assert remote.answer_running("cancelled").content[0].text == "cancelled 1/3"  # type: ignore[union-attr]


async def test_a_run_whose_instance_stopped_beating_is_a_clear_error_not_running_forever() -> None:
    store = InMemoryRunStore(shared=True)
    async with two_instances(store) as (a, b):
        run = await start(a, "client:x", anyio.Event())
        store._listeners.pop(a.instance)  # its heartbeat expired: the process died without a word
        remote = await b.find(run.run_id, "client:x")
        assert isinstance(remote, RemoteRun)
        with pytest.raises(ExecutionFailed) as lost:
            await b.wait(remote, 1)
        assert lost.value.reason == "run_lost"
        assert "the instance running it stopped" in lost.value.message


async def test_an_unreachable_store_is_an_error_for_remote_runs_while_local_runs_finish() -> None:
    store = InMemoryRunStore(shared=True)
    async with two_instances(store) as (a, b):
        gate = anyio.Event()
        run = await start(a, "client:x", gate)
        store.reachable = False
        with pytest.raises(ExecutionFailed) as unavailable:
            await b.find(run.run_id, "client:x")
        assert unavailable.value.reason == "store_unavailable"
        assert await a.find(run.run_id, "client:x") is run  # its own instance still answers for it
        gate.set()
        assert await a.wait(run, 1)
        assert run.outcome().structured_content == {"said": "done"}


async def test_the_in_memory_default_publishes_nothing() -> None:
    store = InMemoryRunStore()
    runs = DetachedRuns(ttl=60, max_kept=4, store=store)
    async with runs.serving():
        gate = anyio.Event()
        run = await start(runs, "client:x", gate)
        gate.set()
        assert await runs.wait(run, 1)
        assert await store.get(run.run_id) is None
        assert await runs.find(run.run_id, "client:x") is run
