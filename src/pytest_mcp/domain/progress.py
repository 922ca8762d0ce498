"""Progress rules: updates are rate-limited, the last one always goes out."""

from __future__ import annotations

import time
from collections.abc import Callable

from pytest_mcp.ports.progress import ProgressSink

MIN_INTERVAL_SECONDS = 0.25


class ThrottledProgress(ProgressSink):
    """Passes at most one update per `interval` to `sink`; `flush` sends the final state.

    Rules: an update is sent when the interval has passed since the last one sent; updates in
    between are dropped but remembered, so `flush` reports the true final counts even when the
    last update arrived inside the interval.
    """

    def __init__(
        self, sink: ProgressSink, interval: float = MIN_INTERVAL_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._sink = sink
        self._interval = interval
        self._clock = clock
        self._last_sent: float | None = None
        self._latest: tuple[int, int, int] | None = None
        self._sent: tuple[int, int, int] | None = None

    async def update(self, done: int, total: int, failed: int) -> None:
        self._latest = (done, total, failed)
        now = self._clock()
        if self._last_sent is None or now - self._last_sent >= self._interval:
            self._last_sent = now
            await self._send(self._latest)

    async def flush(self) -> None:
        """Send the latest state if the throttle held it back: the final update always goes out."""
        if self._latest is not None and self._latest != self._sent:
            await self._send(self._latest)

    async def _send(self, state: tuple[int, int, int]) -> None:
        self._sent = state
        await self._sink.update(*state)
