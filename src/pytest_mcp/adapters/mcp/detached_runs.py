"""Runs that go on after the tool call that started them answered "running" (ADR 0012).

A call waits for its run up to `--detach-after` seconds. A run still going then is *detached*:
it keeps its run slot and goes on in this registry's task group, and the call answers with
its progress and a run id. `get_test_run` waits for it again, gives its final answer (the one
the call would have given), or cancels it.

Bounds:
- a run id is 192 random bits, and belongs to the *owner* that started it (an MCP session, see
  `Owner`): another owner cannot read or cancel it, and is told only that it is unknown;
- a finished run's answer is kept `ttl` seconds after it finished, and at most `max_kept` of
  them, the oldest dropped first (logged);
- when an owner ends (stdio EOF, an HTTP session closed or expired), its runs are cancelled,
  and on shutdown every run is; each run's runner kills its processes on the way out.

With a shared run store (Redis, ADR 0016) a run still executes here, in this task group; this
registry publishes what other instances need to answer for it, and finds theirs in the store.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.abc
from mcp_types import CallToolResult

from pytest_mcp.adapters.mcp.sessions import Owner
from pytest_mcp.adapters.structlog_logging import routed_logger
from pytest_mcp.ports.run_store import RunStoreUnavailable

if TYPE_CHECKING:
    from pytest_mcp.adapters.mcp.shared_runs import RemoteRun, Status
    from pytest_mcp.domain.progress import RunWatch
    from pytest_mcp.ports.run_store import RunStore

_log = routed_logger("pytest_mcp.runs")


class RunningAnswer(Protocol):
    """How the tool that started a run answers for it while it goes on, or once it was stopped."""

    def __call__(self, request: Any, watch: RunWatch, run_id: str, status: Status = "running") -> CallToolResult: ...


STOP_WITHIN = 2.0
"""Seconds a cancelled run is given to end (its runner kills the process group well before)."""
PUBLISH_EVERY = 0.5
"""Seconds between two publications of a detached run's progress to a shared store."""


@dataclass
class DetachedRun:
    run_id: str
    owner: Owner
    watch: RunWatch
    request: Any
    running: RunningAnswer
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    ended: anyio.Event = field(default_factory=anyio.Event)
    answer: CallToolResult | None = None
    error: BaseException | None = None
    detached: bool = False
    finished_at: float | None = None

    @property
    def cancelled(self) -> bool:
        """Ended without an answer or an error of its own: it was stopped."""
        return self.ended.is_set() and self.answer is None and self.error is None

    @property
    def finished(self) -> bool:
        """Ended by itself, with its answer or its error: a cancel can no longer change it."""
        return self.ended.is_set() and not self.cancelled

    def answer_running(self, status: Status) -> CallToolResult:
        """The tool's answer for this run while it goes on, or once it was stopped."""
        return self.running(self.request, self.watch, self.run_id, status)

    def outcome(self) -> CallToolResult:
        """The call's answer, or the error it raised (a JSON-RPC error), raised again."""
        if self.error is not None:
            raise self.error
        if self.answer is None:  # pragma: no cover - only read once ended
            raise RuntimeError("the run has not ended")
        return self.answer


class DetachedRuns:
    """The runs of one server: started, waited for, detached, kept, cancelled."""

    def __init__(
        self,
        ttl: float,
        max_kept: int,
        *,
        stateless: bool = False,
        store: RunStore | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.stateless = stateless
        self.store = store
        self.shared = store is not None and store.shared
        """Whether other instances read this one's runs from the store, and it theirs."""
        self.instance = secrets.token_hex(8)
        self._max_kept = max_kept
        self._clock = clock
        self._runs: dict[str, DetachedRun] = {}
        self._group: anyio.abc.TaskGroup | None = None
        self._attached = False
        self._unpublished = False  # the store was unreachable at the last put: logged once, until it is back
        # One put at a time, each reading the run when it starts: a progress put begun before the run
        # ended must not land after the finished one, or other instances read "running" until the TTL.
        self._publishing = anyio.Lock()

    @asynccontextmanager
    async def attached(self) -> AsyncIterator[None]:
        """Attach the run store (unless it already is): an unreachable one raises RunStoreUnavailable."""
        if self.store is None or self._attached:
            yield
            return
        async with self.store.attached(self.instance, self._cancel_soon):
            self._attached = True
            try:
                yield
            finally:
                self._attached = False

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Hold the task group detached runs live in; on the way out every run is stopped.

        The run store is attached first (`attached`): if it cannot be, nothing is served."""
        async with self.attached(), anyio.create_task_group() as group:
            self._group = group
            if self.shared:
                group.start_soon(self._publish_progress)
            try:
                yield
            finally:
                with anyio.CancelScope(shield=True):
                    await self.stop(lambda run: True, "the server is stopping")
                self._group = None
                group.cancel_scope.cancel()

    @property
    def serving_now(self) -> bool:
        return self._group is not None

    def start(
        self,
        owner: Owner,
        watch: RunWatch,
        request: Any,
        work: Callable[[], Awaitable[CallToolResult]],
        running: RunningAnswer,
    ) -> DetachedRun:
        """Start `work` (a tool call with its parsed `request`); `running` answers for it while it goes on."""
        if self._group is None:
            raise RuntimeError("DetachedRuns.start needs serving()")
        self._expire()
        run = DetachedRun(run_id=secrets.token_urlsafe(24), owner=owner, watch=watch, request=request, running=running)
        watch.run_id = run.run_id
        self._runs[run.run_id] = run

        async def body() -> None:
            try:
                with run.scope:
                    run.answer = await work()
            except Exception as exc:  # the call's JSON-RPC errors, raised again to whoever reads it
                run.error = exc
            finally:
                run.finished_at = self._clock()
                run.ended.set()
                dropped = self._trim()
                if self.shared:  # what the other instances read of it: its answer, and no more the dropped
                    with anyio.CancelScope(shield=True), anyio.move_on_after(STOP_WITHIN):
                        if run.detached:
                            await self._publish(run)
                        for old in dropped:
                            await self._unpublish(old)

        self._group.start_soon(body)
        return run

    async def wait(self, run: DetachedRun | RemoteRun, seconds: float) -> bool:
        """Wait up to `seconds` for the run to end; True if it has."""
        if not isinstance(run, DetachedRun):
            return await run.wait(seconds)
        with anyio.move_on_after(seconds):
            await run.ended.wait()
        return run.ended.is_set()

    async def detach(self, run: DetachedRun) -> None:
        """Keep the run past its call, for get_test_run: still going, or finished with reports to page.

        With a shared store it is published before its call answers, so any instance finds it."""
        run.detached = True
        self._runs[run.run_id] = run  # even if it ended since its call stopped waiting
        if self.shared:
            await self._publish(run)

    async def find(self, run_id: str, owner: Owner) -> DetachedRun | RemoteRun | None:
        """The owner's detached run with this id, running or finished and kept, here or (with a shared
        store) on another instance; None otherwise. An unreachable store is an ExecutionFailed."""
        self._expire()
        run = self._runs.get(run_id)
        if run is not None:
            return run if run.detached and run.owner == owner else None
        if not self.shared or self.store is None:
            return None
        # Only with a shared store: serving imports no result model until a call needs one.
        from pytest_mcp.adapters.mcp.shared_runs import RemoteRun, owner_digest, store_error

        try:
            record = await self.store.get(run_id)
        except RunStoreUnavailable as exc:
            raise store_error(exc) from None
        if record is None or record.owner != owner_digest(owner) or record.instance == self.instance:
            return None  # unknown, another owner's, or one this instance has forgotten
        return RemoteRun(record, self.store)

    def forget(self, run: DetachedRun) -> None:
        """Drop a finished run whose answer has been given and that kept nothing to page."""
        self._runs.pop(run.run_id, None)

    async def cancel(self, run: DetachedRun | RemoteRun) -> None:
        """Stop the run and wait until it has ended, with every process it started.

        A detached run stays known, as cancelled, for the TTL: whichever connection of its owner
        asks next is told it was cancelled, not that it is unknown. Another instance's run is
        cancelled by its instance, which this one asks through the store.
        """
        if not isinstance(run, DetachedRun):
            await run.cancel(STOP_WITHIN + 1.0)
            return
        run.scope.cancel()
        with anyio.CancelScope(shield=True), anyio.move_on_after(STOP_WITHIN):
            await run.ended.wait()
        if not run.detached:
            self._runs.pop(run.run_id, None)

    def stop_soon(self, which: Callable[[DetachedRun], bool], why: str) -> list[DetachedRun]:
        """Cancel every run `which` selects and forget them all; the ones that were running.

        Each run's runner stops its processes as the cancellation reaches it; `stop` waits for that.
        """
        selected = [run for run in self._runs.values() if which(run)]
        for run in selected:
            self._runs.pop(run.run_id, None)
            run.scope.cancel()
        running = [run for run in selected if not run.ended.is_set()]
        if running:
            _log.info("runs_stopped", runs=len(running), why=why)
        return running

    async def stop(self, which: Callable[[DetachedRun], bool], why: str) -> int:
        """Cancel every run `which` selects and wait (up to STOP_WITHIN) until they have ended."""
        running = self.stop_soon(which, why)
        with anyio.CancelScope(shield=True), anyio.move_on_after(STOP_WITHIN):
            for run in running:
                await run.ended.wait()
        return len(running)

    def end_owner(self, owner: Owner) -> None:
        """The owner's session ended: its runs are stopped."""
        self.stop_soon(lambda run: run.owner == owner, "their session ended")

    def running(self) -> int:
        return sum(1 for run in self._runs.values() if not run.ended.is_set())

    def _expire(self) -> None:
        cutoff = self._clock() - self.ttl
        for run in [r for r in self._runs.values() if r.finished_at is not None and r.finished_at < cutoff]:
            self._runs.pop(run.run_id, None)
            _log.info("run_result_dropped", why="expired", ttl=self.ttl)

    def _trim(self) -> list[DetachedRun]:
        kept = sorted((r for r in self._runs.values() if r.finished_at is not None), key=lambda r: r.finished_at or 0)
        dropped = kept[: max(0, len(kept) - self._max_kept)]
        for run in dropped:
            self._runs.pop(run.run_id, None)
            _log.info("run_result_dropped", why="too many kept", max_kept=self._max_kept)
        return dropped

    def _cancel_soon(self, key: str) -> None:
        """A cancel sent by another instance, for a run of this one, known by its `run_key`."""
        from pytest_mcp.domain.stored_runs import run_key

        run = next((run for run in self._runs.values() if run_key(run.run_id) == key), None)
        if run is not None and self._group is not None:
            self._group.start_soon(self.cancel, run)

    async def _publish_progress(self) -> None:
        while True:
            await anyio.sleep(PUBLISH_EVERY)
            for run in [r for r in self._runs.values() if r.detached and not r.ended.is_set()]:
                await self._publish(run)

    async def _publish(self, run: DetachedRun) -> None:
        """Put the run's state in the shared store; when it cannot be reached, the run goes on here."""
        from pytest_mcp.adapters.mcp.shared_runs import stored

        assert self.store is not None
        try:
            async with self._publishing:
                record, kept = stored(run, self.instance)
                await self.store.put(record, self.ttl, kept)
        except RunStoreUnavailable as exc:
            if not self._unpublished:
                _log.warning(
                    "runs_not_published", error=str(exc), why="the run goes on here; other instances cannot see it"
                )
            self._unpublished = True
        else:
            if self._unpublished:
                _log.info("runs_published_again")
            self._attached = False
        self._unpublished = False

    async def _unpublish(self, run: DetachedRun) -> None:
        assert self.store is not None
        try:
            await self.store.drop(run.run_id)
        except RunStoreUnavailable as exc:
            _log.warning("run_not_unpublished", error=str(exc))
