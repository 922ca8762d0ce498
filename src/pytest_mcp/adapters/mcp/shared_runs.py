"""Runs of other instances, read from a shared run store (ADR 0016), and what this instance publishes of its own.

A run executes on the instance that started it. That instance publishes its state (progress, the
'running' answer, then the final or 'cancelled' one, and the reports kept for paging); any other
instance answers `get_test_run` for it from the store, and sends cancels to its instance.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio
from mcp import MCPError
from mcp_types import INTERNAL_ERROR, CallToolResult

from pytest_mcp.domain.errors import ExecutionFailed, FailureDetails
from pytest_mcp.domain.stored_runs import StoredRun
from pytest_mcp.ports.run_store import RunStore, RunStoreUnavailable

if TYPE_CHECKING:
    from pytest_mcp.domain.models import RunResult
    from pytest_mcp.domain.progress import RunWatch
    from pytest_mcp.ports.progress import ProgressSink

Status = Literal["running", "cancelled"]
"""A run not finished: still going, or stopped."""


class LocalRun(Protocol):
    """What this module reads of a run this instance executes (detached_runs.DetachedRun), to publish it.

    A Protocol, so that the registry imports this module and not the other way round."""

    run_id: str
    owner: str
    watch: RunWatch
    ended: anyio.Event
    answer: CallToolResult | None
    error: BaseException | None

    @property
    def cancelled(self) -> bool: ...

    def answer_running(self, status: Status) -> CallToolResult: ...


POLL_EVERY = 0.05
"""Seconds between two reads of a run another instance executes, while a call waits for it."""


def owner_digest(owner: str) -> str:
    """What the store holds of an owner: a session id or a credentials digest never leaves the instance."""
    return hashlib.sha256(owner.encode()).hexdigest()[:32]


def dumped(answer: CallToolResult) -> dict[str, Any]:
    return answer.model_dump(mode="json", by_alias=True, exclude_none=True)


def stored(run: LocalRun, instance: str) -> tuple[StoredRun, RunResult | None]:
    """A local run as the other instances will read it, with its kept reports once finished."""
    fields: dict[str, Any] = {
        "run_id": run.run_id,
        "owner": owner_digest(run.owner),
        "instance": instance,
        "done": run.watch.done,
        "total": run.watch.total,
        "failed": run.watch.failed,
    }
    if not run.ended.is_set():
        return StoredRun(status="running", answer=dumped(run.answer_running("running")), **fields), None
    if run.cancelled:
        return StoredRun(status="cancelled", answer=dumped(run.answer_running("cancelled")), **fields), None
    if run.error is not None:
        error = run.error
        if isinstance(error, MCPError):
            wire = {"code": error.error.code, "message": error.error.message, "data": error.error.data}
        else:  # pragma: no cover - the tool server turns every other exception into an MCPError
            wire = {"code": INTERNAL_ERROR, "message": "pytest-mcp hit an internal error", "data": None}
        return StoredRun(status="finished", error=wire, **fields), None
    assert run.answer is not None  # ended, neither cancelled nor failed
    return StoredRun(status="finished", answer=dumped(run.answer), **fields), run.watch.kept


def store_error(exc: RunStoreUnavailable) -> ExecutionFailed:
    return ExecutionFailed(
        "store_unavailable",
        f"{exc}; runs started on other instances cannot be reached until it is back (runs on this "
        "instance go on and finish)",
        FailureDetails(exit_code=None, command=(), duration=0.0),
    )


def lost_error() -> ExecutionFailed:
    return ExecutionFailed(
        "run_lost",
        "the instance running it stopped before the run finished (its heartbeat expired); the run has "
        "no result: start it again",
        FailureDetails(exit_code=None, command=(), duration=0.0),
    )


class RemoteWatch:
    """What get_test_run reads of a remote run's watch: its kept reports, and who hears its progress."""

    def __init__(self) -> None:
        self.kept: RunResult | None = None
        self.sink: ProgressSink | None = None

    async def listen(self, sink: ProgressSink | None) -> None:
        self.sink = sink


class RemoteRun:
    """A run another instance executes, as get_test_run sees it: read from the store, cancelled through it."""

    def __init__(self, record: StoredRun, store: RunStore) -> None:
        self.run_id = record.run_id
        self.record = record
        self.watch = RemoteWatch()
        self._store = store
        self._sent: tuple[int, int, int] | None = None

    @property
    def cancelled(self) -> bool:
        return self.record.status == "cancelled"

    @property
    def ended(self) -> bool:
        return self.record.status in ("finished", "cancelled")

    @property
    def finished(self) -> bool:
        """Ended by itself, with its answer or its error: a cancel can no longer change it."""
        return self.record.status == "finished"

    def answer_running(self, status: Status) -> CallToolResult:
        """The answer its instance published last: 'running', or once it was stopped, 'cancelled'."""
        if self.record.status == "lost":
            raise lost_error()
        if self.record.status == "finished":
            return self.outcome()  # it ended before the cancel reached it
        return CallToolResult.model_validate(self.record.answer)

    def outcome(self) -> CallToolResult:
        if self.record.error is not None:
            error = self.record.error
            raise MCPError(code=error["code"], message=error["message"], data=error.get("data"))
        return CallToolResult.model_validate(self.record.answer)

    async def refresh(self) -> None:
        try:
            record = await self._store.get(self.run_id)
        except RunStoreUnavailable as exc:
            raise store_error(exc) from None
        if record is None:  # expired between two reads
            raise lost_error()
        self.record = record
        await self._seen()

    async def _seen(self) -> None:
        """The record just read: a lost run is an error; progress goes to whoever listens."""
        record = self.record
        if record.status == "lost":
            raise lost_error()
        state = (record.done, record.total, record.failed)
        if self.watch.sink is not None and record.total and state != self._sent:
            self._sent = state
            await self.watch.sink.update(*state)

    async def wait(self, seconds: float) -> bool:
        """Read the run until it has ended or `seconds` passed; its kept reports too, once ended.

        The record found it is fresh: a `wait: 0` poll costs one read of the store, not two."""
        await self._seen()
        with anyio.move_on_after(seconds):
            while not self.ended:
                await anyio.sleep(POLL_EVERY)
                await self.refresh()
        if self.ended and self.record.status == "finished":
            try:
                self.watch.kept = await self._store.kept(self.run_id)
            except RunStoreUnavailable as exc:
                raise store_error(exc) from None
        return self.ended

    async def cancel(self, within: float) -> None:
        """Ask its instance to cancel it, and read it until it says it has (its processes gone)."""
        try:
            await self._store.cancel(self.run_id, self.record.instance)
        except RunStoreUnavailable as exc:
            raise store_error(exc) from None
        await self.refresh()
        await self.wait(within)
        if not self.ended:
            raise lost_error()
