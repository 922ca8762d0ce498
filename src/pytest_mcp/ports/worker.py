"""The worker port: where a call's CPU and file work runs, away from the event loop (issue 46)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar, TypeVarTuple

R = TypeVar("R")
Ts = TypeVarTuple("Ts")


class Worker(Protocol):
    """Runs a plain function somewhere the event loop does not wait on, and awaits its result.

    Promises:
    - `run(function, *args)` returns what `function(*args)` returns, or raises what it raises;
    - the function runs to its end even when the awaiting task is cancelled (the cancellation
      is then raised), so nothing is left half-done, and no other awaiting task is delayed;
    - at most a bounded number of functions run at once, whatever the number of calls: the
      others wait their turn without holding up the loop;
    - the function is called with nothing shared but its arguments: it must not touch the loop.
    """

    async def run(self, function: Callable[[*Ts], R], *args: *Ts) -> R: ...


class Inline(Worker):
    """Calls the function where the caller is: for code without an event loop to keep free."""

    async def run(self, function: Callable[[*Ts], R], *args: *Ts) -> R:
        return function(*args)
