"""Where the fake's runs pause until released (FakeTestRunner.hold): while collecting, or after some tests."""

from __future__ import annotations

import anyio

from pytest_mcp.adapters.fake.script import ScriptError


class RunHold:
    """At most one hold at a time; every run started while it is set pauses at it until `release()`.

    A paused run can be cancelled like any awaiting task: the cancellation reaches it where it waits.
    """

    def __init__(self) -> None:
        self._held: tuple[int | None, anyio.Event] | None = None  # (tests before the hold; None: collecting)
        self._polls: int | None = None  # asks for a held run left before it is released by itself

    def hold(self, after: object, collecting: object, polls: object = None) -> None:
        if polls is not None and (isinstance(polls, bool) or not isinstance(polls, int) or polls < 1):
            raise ScriptError(f"polls: must be a number of get_test_run calls, 1 or more, or None; got {polls!r}")
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            raise ScriptError(f"after: must be a number of tests, 0 or more; got {after!r}")
        if not isinstance(collecting, bool):
            raise ScriptError(f"collecting: must be True or False; got {collecting!r}")
        if collecting and after:
            raise ScriptError(f"after: a run held while collecting has run no test; leave after out (got {after!r})")
        self._held = (None if collecting else after, anyio.Event())
        self._polls = polls

    def polled(self) -> None:
        """The agent asked for a detached run (get_test_run): the `polls`-th ask releases the hold, and
        that ask, given a `wait`, gets the run's final answer."""
        if self._held is None or self._polls is None:
            return
        self._polls -= 1
        if self._polls == 0:
            self.release()

    def release(self) -> None:
        if self._held is None:
            raise ScriptError("release: no run is held; call hold() first")
        self._held[1].set()
        self._held = None
        self._polls = None

    async def while_collecting(self) -> None:
        """Pause here if runs are held before pytest has collected: nothing is known of the run yet."""
        if self._held is not None and self._held[0] is None:
            await self._held[1].wait()

    async def before_test(self, number: int) -> None:
        """Pause before the run's `number`th test (from 1) if runs are held after the ones before it."""
        if self._held is not None and self._held[0] == number - 1:
            await self._held[1].wait()
