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
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio
import anyio.abc
from mcp_types import CallToolResult

from pytest_mcp.adapters.mcp.sessions import Owner
from pytest_mcp.adapters.structlog_logging import routed_logger

if TYPE_CHECKING:
    from pytest_mcp.domain.progress import RunWatch

_log = routed_logger("pytest_mcp.runs")

Status = Literal["running", "cancelled"]


class RunningAnswer(Protocol):
    """How the tool that started a run answers for it while it goes on, or once it was stopped."""

    def __call__(self, request: Any, watch: RunWatch, run_id: str, status: Status = "running") -> CallToolResult: ...


STOP_WITHIN = 2.0
"""Seconds a cancelled run is given to end (its runner kills the process group well before)."""


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
        self, ttl: float, max_kept: int, *, stateless: bool = False, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.stateless = stateless
        self._max_kept = max_kept
        self._clock = clock
        self._runs: dict[str, DetachedRun] = {}
        self._group: anyio.abc.TaskGroup | None = None

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Hold the task group detached runs live in; on the way out every run is stopped."""
        async with anyio.create_task_group() as group:
            self._group = group
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
                self._trim()

        self._group.start_soon(body)
        return run

    async def wait(self, run: DetachedRun, seconds: float) -> bool:
        """Wait up to `seconds` for the run to end; True if it has."""
        with anyio.move_on_after(seconds):
            await run.ended.wait()
        return run.ended.is_set()

    def detach(self, run: DetachedRun) -> None:
        """Keep the run past its call, for get_test_run: still going, or finished with reports to page."""
        run.detached = True
        self._runs[run.run_id] = run  # even if it ended since its call stopped waiting

    def find(self, run_id: str, owner: Owner) -> DetachedRun | None:
        """The owner's detached run with this id, running or finished and kept; None otherwise."""
        self._expire()
        run = self._runs.get(run_id)
        return run if run is not None and run.detached and run.owner == owner else None

    def forget(self, run: DetachedRun) -> None:
        """Drop a finished run whose answer has been given and that kept nothing to page."""
        self._runs.pop(run.run_id, None)

    async def cancel(self, run: DetachedRun) -> None:
        """Stop the run and wait until it has ended, with every process it started.

        A detached run stays known, as cancelled, for the TTL: whichever connection of its owner
        asks next is told it was cancelled, not that it is unknown.
        """
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

    def _trim(self) -> None:
        kept = sorted((r for r in self._runs.values() if r.finished_at is not None), key=lambda r: r.finished_at or 0)
        for run in kept[: max(0, len(kept) - self._max_kept)]:
            self._runs.pop(run.run_id, None)
            _log.info("run_result_dropped", why="too many kept", max_kept=self._max_kept)
