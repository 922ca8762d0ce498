from __future__ import annotations

import pytest

from pytest_mcp.domain.progress import ThrottledProgress

pytestmark = pytest.mark.anyio


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[int, int, int]] = []

    async def update(self, done: int, total: int, failed: int) -> None:
        self.sent.append((done, total, failed))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_updates_are_rate_limited_and_the_final_state_is_always_sent() -> None:
    sink, clock = Recorder(), Clock()
    throttled = ThrottledProgress(sink, interval=0.25, clock=clock)

    for done in range(1, 11):  # ten updates 0.1 s apart
        await throttled.update(done, 10, done // 4)
        clock.now += 0.1
    await throttled.flush()

    assert sink.sent == [(1, 10, 0), (4, 10, 1), (7, 10, 1), (10, 10, 2)]


async def test_flush_sends_nothing_twice() -> None:
    sink = Recorder()
    throttled = ThrottledProgress(sink, interval=0.25, clock=Clock())

    await throttled.update(3, 3, 0)
    await throttled.flush()
    await throttled.flush()

    assert sink.sent == [(3, 3, 0)]


async def test_an_update_whose_send_failed_is_sent_again_by_flush() -> None:
    """A send that raised (or was cut short) did not reach the client: the final state still goes out."""

    class FailsOnce(Recorder):
        failed = False

        async def update(self, done: int, total: int, failed: int) -> None:
            if not self.failed:
                self.failed = True
                raise OSError("the stream was busy")
            await super().update(done, total, failed)

    sink = FailsOnce()
    throttled = ThrottledProgress(sink, interval=0.25, clock=Clock())

    with pytest.raises(OSError, match="busy"):
        await throttled.update(3, 3, 0)
    await throttled.flush()

    assert sink.sent == [(3, 3, 0)]
