"""The in-memory run store: one process, the default."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from pytest_mcp.ports.run_store import RunStore, RunStoreUnavailable

if TYPE_CHECKING:  # the default store is built on every start-up, which imports no result model
    from pytest_mcp.domain.history import History
    from pytest_mcp.domain.models import RunResult
    from pytest_mcp.domain.stored_runs import StoredRun


MAX_HISTORIES = 256
"""Projects' histories (one per owner and project) this process keeps at most."""


class InMemoryRunStore(RunStore):
    """Runs kept in this process, forgotten `ttl` seconds after their last put.

    The server's default is not `shared`: one instance holds its runs itself (DetachedRuns), so
    nothing is published and nothing is looked up here, exactly as before run stores existed.
    `shared=True` lets several DetachedRuns in one process share it as instances share Redis,
    with heartbeats and cancels, for tests that need no Redis.
    """

    where = "memory"

    def __init__(self, *, shared: bool = False, clock: Callable[[], float] = time.monotonic) -> None:
        self.shared = shared
        self._clock = clock
        self._runs: dict[str, tuple[StoredRun, RunResult | None, float]] = {}
        self._listeners: dict[str, Callable[[str], None]] = {}
        self._histories: dict[str, tuple[History, float]] = {}
        self.reachable = True
        """False: every call raises RunStoreUnavailable, as a Redis outage does."""

    @asynccontextmanager
    async def attached(self, instance: str, on_cancel: Callable[[str], None]) -> AsyncIterator[None]:
        self._check()
        self._listeners[instance] = on_cancel
        try:
            yield
        finally:
            self._listeners.pop(instance, None)  # its heartbeat stops

    async def put(self, run: StoredRun, ttl: float, kept: RunResult | None = None) -> None:
        self._check()
        self._runs[run.run_id] = (run, kept, self._clock() + ttl)

    async def get(self, run_id: str) -> StoredRun | None:
        self._check()
        entry = self._live(run_id)
        if entry is None:
            return None
        run = entry[0]
        if run.status == "running" and run.instance not in self._listeners:
            return run.model_copy(update={"status": "lost"})
        return run

    async def kept(self, run_id: str) -> RunResult | None:
        self._check()
        entry = self._live(run_id)
        return entry[1] if entry is not None else None

    async def drop(self, run_id: str) -> None:
        self._check()
        self._runs.pop(run_id, None)

    async def cancel(self, run_id: str, instance: str) -> None:
        self._check()
        from pytest_mcp.domain.stored_runs import run_key

        listener = self._listeners.get(instance)
        if listener is not None:
            listener(run_key(run_id))

    async def history(self, key: str) -> History | None:
        self._check()
        entry = self._histories.get(key)
        if entry is None or entry[1] <= self._clock():
            self._histories.pop(key, None)
            return None
        return entry[0]

    async def keep_history(self, key: str, history: History, ttl: float) -> None:
        self._check()
        self._histories.pop(key, None)
        self._histories[key] = (history, self._clock() + ttl)
        while len(self._histories) > MAX_HISTORIES:  # the least recently kept go first
            del self._histories[next(iter(self._histories))]

    def _live(self, run_id: str) -> tuple[StoredRun, RunResult | None, float] | None:
        entry = self._runs.get(run_id)
        if entry is not None and entry[2] <= self._clock():
            del self._runs[run_id]
            return None
        return entry

    def _check(self) -> None:
        if not self.reachable:
            raise RunStoreUnavailable("the run store (memory) is unreachable")
