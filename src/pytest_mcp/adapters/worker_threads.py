"""ThreadWorker: the Worker port on a few worker threads, shared by every call (issue 46)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, TypeVarTuple

import anyio
import anyio.to_thread

from pytest_mcp.ports.worker import Worker

R = TypeVar("R")
Ts = TypeVarTuple("Ts")

WORKER_THREADS = 2
"""Threads that run calls' CPU and file work at once. Python code runs one thread at a time (the
GIL), so more threads would not finish 20 runs' work sooner: they would only take the GIL from the
event loop more often. Two let one function's file reads overlap another's Python."""


class ThreadWorker(Worker):
    """Runs each function in one of WORKER_THREADS threads, the others waiting their turn.

    The event loop answers while they run: a function holding the GIL gives it up every switch
    interval (5 ms), so even a report of 100,000 tests that takes seconds to read and group
    never stops pings, progress or cancels for more than that. A cancelled caller waits for its
    function to end (it is never abandoned mid-write) and is then cancelled.
    """

    def __init__(self, threads: int = WORKER_THREADS) -> None:
        if threads < 1:
            raise ValueError(f"a worker needs at least 1 thread, not {threads}")
        self.threads = threads
        self._limiter: anyio.CapacityLimiter | None = None  # made inside the event loop, on first use

    async def run(self, function: Callable[[*Ts], R], *args: *Ts) -> R:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.threads)
        return await anyio.to_thread.run_sync(function, *args, limiter=self._limiter)
