"""ConcurrencyLimitedRunner: at most N pytest runs at once; the rest wait their turn."""

from __future__ import annotations

import time

import anyio

from pytest_mcp.domain.runs import CollectionReport, CollectSpec, RunReport, RunSpec, Termination
from pytest_mcp.ports.progress import ProgressSink
from pytest_mcp.ports.test_runner import TestRunner


class ConcurrencyLimitedRunner(TestRunner):
    """Wraps any TestRunner so that at most `limit` runs and collections proceed at once.

    A call waits for a free slot for at most its own timeout; the time it waited is taken off
    the run's deadline, so a call never takes longer than it asked for. A call that gets no
    slot in time ends with a `busy` termination, and nothing is started for it.
    """

    def __init__(self, inner: TestRunner, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"the concurrency limit must be at least 1, not {limit}")
        self._inner = inner
        self._limit = limit
        self._slots: anyio.Semaphore | None = None  # created inside the event loop, on first use

    @property
    def inner(self) -> TestRunner:
        return self._inner

    async def run(self, spec: RunSpec, progress: ProgressSink | None = None) -> RunReport:
        remaining = await self._acquire(spec.timeout)
        if remaining is None:
            return RunReport(termination=self._busy(), command=(), duration=spec.timeout)
        try:
            return await self._inner.run(spec.model_copy(update={"timeout": remaining}), progress)
        finally:
            self._release()

    async def collect(self, spec: CollectSpec) -> CollectionReport:
        remaining = await self._acquire(spec.timeout)
        if remaining is None:
            return CollectionReport(termination=self._busy(), command=(), duration=spec.timeout)
        try:
            return await self._inner.collect(spec.model_copy(update={"timeout": remaining}))
        finally:
            self._release()

    async def _acquire(self, timeout: float) -> float | None:
        """Take a slot: the seconds left of `timeout` (all of it when a slot was free), or None."""
        if self._slots is None:
            self._slots = anyio.Semaphore(self._limit)
        try:
            self._slots.acquire_nowait()
            return timeout
        except anyio.WouldBlock:
            pass
        started = time.monotonic()
        with anyio.move_on_after(timeout):
            await self._slots.acquire()
            return max(timeout - (time.monotonic() - started), 0.001)
        return None

    def _release(self) -> None:
        assert self._slots is not None
        self._slots.release()

    def _busy(self) -> Termination:
        noun = "run is" if self._limit == 1 else "runs are"
        return Termination(kind="busy", detail=f"{self._limit} {noun} already in progress, the configured maximum")
