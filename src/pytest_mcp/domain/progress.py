"""Progress rules: updates are rate-limited, the last one always goes out; a run's progress so far
can be watched, for an answer given while it goes on."""

from __future__ import annotations

import time
from collections.abc import Callable

from pytest_mcp.domain.models import ReportedTest, RunProgress, RunResult, Summary
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

    async def reported(self, test: ReportedTest) -> None:
        await self._sink.reported(test)  # not rate-limited: one per listed report, and never dropped

    async def flush(self) -> None:
        """Send the latest state if the throttle held it back: the final update always goes out."""
        if self._latest is not None and self._latest != self._sent:
            await self._send(self._latest)

    async def _send(self, state: tuple[int, int, int]) -> None:
        await self._sink.update(*state)
        self._sent = state  # once it is sent: a send that failed or was cut short is sent again by `flush`


class RunWatch(ProgressSink):
    """What a run has reported so far (every update), passed on, rate-limited, to whoever listens.

    The listener changes while a run goes on: the execute_tests call that started it, then,
    after it detached, each get_test_run call that waits for it with a progress token.

    `summary()` counts the tests finished so far from their reports, as pytest counts them: one
    count per listed report by its outcome, and as passed each finished test with no report
    other than a teardown one. Exact for what has finished; the final answer has pytest's own.

    A watched run has a `run_id`; when it ends with non-passing reports, the use case `keep`s
    its full result here, for get_test_run to page through.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, *, follow: bool = True) -> None:
        self.follow = follow
        """Whether the run is followed test by test while it goes on; a run that can neither detach
        nor report progress is not, and costs what an unwatched run costs."""
        self.run_id: str | None = None
        self.kept: RunResult | None = None
        self._clock = clock
        self._started = clock()
        self.done = 0
        self.total = 0
        self.failed = 0
        self.tests: list[ReportedTest] = []
        self._listener: ThrottledProgress | None = None

    async def listen(self, sink: ProgressSink | None) -> None:
        """From now on pass updates to `sink` (None: to no one), starting with the state so far."""
        if self._listener is not None:
            await self._listener.flush()
        self._listener = ThrottledProgress(sink) if sink is not None else None
        if self._listener is not None and self.done:
            await self._listener.update(self.done, self.total, self.failed)

    async def update(self, done: int, total: int, failed: int) -> None:
        self.done, self.total, self.failed = done, total, failed
        if self._listener is not None:
            await self._listener.update(done, total, failed)

    async def reported(self, test: ReportedTest) -> None:
        self.tests.append(test)

    def keep(self, result: RunResult) -> None:
        """The finished run's result with every non-passing report in full."""
        self.kept = result

    def progress(self) -> RunProgress:
        return RunProgress(done=self.done, total=self.total, elapsed=self._clock() - self._started)

    def summary(self) -> Summary:
        counts = dict.fromkeys(("passed", "failed", "skipped", "xfailed", "xpassed", "error"), 0)
        not_passed = set()
        for test in self.tests:
            counts[test.outcome] += 1
            if test.phase != "teardown" and test.outcome != "passed":
                not_passed.add(test.node_id)
        counts["passed"] += max(0, self.done - len(not_passed) - counts["passed"])
        return Summary.from_counts(counts, total=self.total, duration=self._clock() - self._started)
