"""The run-store port: where the runs of every instance are found (ADR 0016)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pytest_mcp.domain.history import History
    from pytest_mcp.domain.models import RunResult
    from pytest_mcp.domain.stored_runs import StoredRun


class RunStoreUnavailable(Exception):
    """The store cannot be reached; the message names it (any password masked) and says why."""


class RunStore(Protocol):
    """The state of runs, shared by every instance that uses the same store.

    Promises:
    - `shared` is False when this instance is the only one that reads it (in memory): the
      instance then holds its runs itself and publishes nothing;
    - `attached` connects (or raises RunStoreUnavailable naming the store), keeps this instance's
      heartbeat while it is held, and calls `on_cancel(key)` for each cancel sent to it, with the
      run's `run_key` (a digest), never its id: a shared store never holds or carries a run id;
    - a run `put` is forgotten `ttl` seconds after its last put (the store's own expiry);
    - `get` reads status 'lost' for a 'running' run whose instance's heartbeat expired;
    - every other method raises RunStoreUnavailable when the store cannot be reached, and no
      message, here or in a log, ever holds a password (`where` is the masked address).
    """

    shared: bool
    where: str

    def attached(self, instance: str, on_cancel: Callable[[str], None]) -> AbstractAsyncContextManager[None]: ...

    async def put(self, run: StoredRun, ttl: float, kept: RunResult | None = None) -> None:
        """Store the run's state (and, once finished, its kept result), replacing what was there."""
        ...

    async def get(self, run_id: str) -> StoredRun | None: ...

    async def kept(self, run_id: str) -> RunResult | None:
        """The finished run's full result, kept for paging through its reports."""
        ...

    async def drop(self, run_id: str) -> None: ...

    async def cancel(self, run_id: str, instance: str) -> None:
        """Ask `instance` (the one executing the run) to cancel it."""
        ...

    async def history(self, key: str) -> History | None:
        """A project's history for one owner (ADR 0020), by a key that is already a digest; None when
        there is none, or it cannot be read as one."""
        ...

    async def keep_history(self, key: str, history: History, ttl: float) -> None:
        """Replace it; it is forgotten `ttl` seconds after its last keep."""
        ...
