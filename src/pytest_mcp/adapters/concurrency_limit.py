"""At most N processes of ours at once: pytest runs, collections and environment probes share the slots."""

from __future__ import annotations

import time

import anyio

from pytest_mcp.domain.environment import ProbeReport
from pytest_mcp.domain.localization import Spectrum
from pytest_mcp.domain.runs import CollectionReport, CollectSpec, LocalizeSpec, RunReport, RunSpec, Termination
from pytest_mcp.ports.environment_probe import EnvironmentProbe
from pytest_mcp.ports.progress import ProgressSink
from pytest_mcp.ports.test_runner import TestRunner


class RunSlots:
    """`--max-concurrent-runs` slots, shared by everything that starts a process for a call.

    A call waits for a free slot for at most its own timeout; the time it waited is taken off
    its deadline, so a call never takes longer than it asked for. A call that gets no slot in
    time is busy, and nothing is started for it. The interpreter is detected inside a slot too
    (it may start python3 once), by the first call that needs it.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"the concurrency limit must be at least 1, not {limit}")
        self.limit = limit
        self._slots: anyio.Semaphore | None = None  # created inside the event loop, on first use
        self._taken = 0
        self._since = time.monotonic()  # when the last slot was given back (or these slots made)

    async def acquire(self, timeout: float) -> float | None:
        """Take a slot: the seconds left of `timeout` (all of it when a slot was free), or None."""
        if self._slots is None:
            self._slots = anyio.Semaphore(self.limit)
        try:
            self._slots.acquire_nowait()
            self._taken += 1
            return timeout
        except anyio.WouldBlock:
            pass
        started = time.monotonic()
        with anyio.move_on_after(timeout):
            await self._slots.acquire()
            self._taken += 1
            return max(timeout - (time.monotonic() - started), 0.001)
        return None

    def release(self) -> None:
        assert self._slots is not None
        self._slots.release()
        self._taken -= 1
        self._since = time.monotonic()

    def idle_seconds(self) -> float:
        """How long no run has held a slot: 0 while one does (the server's heap thaws when idle, ADR 0022)."""
        return 0.0 if self._taken else time.monotonic() - self._since

    def busy(self) -> str:
        noun = "run is" if self.limit == 1 else "runs are"
        return f"{self.limit} {noun} already in progress, the configured maximum"


class ConcurrencyLimitedRunner(TestRunner):
    """Wraps any TestRunner so that its runs and collections take a slot first."""

    def __init__(self, inner: TestRunner, slots: RunSlots) -> None:
        self._inner = inner
        self.slots = slots

    @property
    def inner(self) -> TestRunner:
        return self._inner

    async def run(self, spec: RunSpec, progress: ProgressSink | None = None) -> RunReport:
        remaining = await self.slots.acquire(spec.timeout)
        if remaining is None:
            return RunReport(termination=self._busy(), command=(), duration=spec.timeout)
        try:
            return await self._inner.run(spec.model_copy(update={"timeout": remaining}), progress)
        finally:
            self.slots.release()

    async def collect(self, spec: CollectSpec) -> CollectionReport:
        remaining = await self.slots.acquire(spec.timeout)
        if remaining is None:
            return CollectionReport(termination=self._busy(), command=(), duration=spec.timeout)
        try:
            return await self._inner.collect(spec.model_copy(update={"timeout": remaining}))
        finally:
            self.slots.release()

    async def localize(self, spec: LocalizeSpec) -> Spectrum | str:
        # A second pass waits no longer than its own budget for a slot: it is a hint, never worth a queue.
        remaining = await self.slots.acquire(spec.seconds)
        if remaining is None:
            return f"no run slot was free within the second pass's {spec.seconds:.1f}s ({self.slots.busy()})"
        try:
            return await self._inner.localize(spec.model_copy(update={"seconds": remaining}))
        finally:
            self.slots.release()

    def _busy(self) -> Termination:
        return Termination(kind="busy", detail=self.slots.busy())


class ConcurrencyLimitedProbe(EnvironmentProbe):
    """Wraps any EnvironmentProbe so that each probe takes a slot first.

    200 concurrent check_environment calls once started 77 probe interpreters (about 1.9 GB).
    """

    def __init__(self, inner: EnvironmentProbe, slots: RunSlots) -> None:
        self._inner = inner
        self.slots = slots

    @property
    def inner(self) -> EnvironmentProbe:
        return self._inner

    async def probe(self, timeout: float) -> ProbeReport:
        remaining = await self.slots.acquire(timeout)
        if remaining is None:
            return ProbeReport(command=(), duration=timeout, busy=self.slots.busy())
        try:
            return await self._inner.probe(remaining)
        finally:
            self.slots.release()
