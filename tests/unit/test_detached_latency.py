"""A detached run ends when pytest ends (issue 31): the answer waits on the run's end, never on a timer.

A waiting get_test_run is answered as the run ends, and one made after it ended is answered at
once. Both are shown by counting turns of the event loop, not by timing: the call must be
answered within TURNS turns (each a `checkpoint`, a few microseconds; the in-memory round trip
takes a few dozen), far sooner than any timer of a polling wait could fire. A loaded machine
slows the turns down, which can only let a timer fire in time, never fail a correct wait. The
wall time is bounded only loosely; bench/large.py measures it against a real pytest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from mcp import Client

from pytest_mcp.testing import FakeTestRunner, connect

pytestmark = pytest.mark.anyio

DETACH = 0.2
"""The longest a call waits: execute_tests detaches after it, and get_test_run waits at most it."""
TURNS = 1000
"""Event-loop turns the answer may take once the run ended: about 10 ms, against a 0.1 s poll."""
LOOSE = 5.0
"""Wall-time bound for a loaded machine; the property itself is shown by the task states."""


def project() -> FakeTestRunner:
    runner = FakeTestRunner()
    for number in range(1, 6):
        runner.script(f"tests/test_a.py::test_{number}", "failed" if number == 2 else "passed")
    return runner


async def turns_until(answered: Call, most: int = TURNS) -> int:
    """Turns of the event loop, none of them a wait for a timer, until the call is answered (or `most`)."""
    for turn in range(most):
        if answered.answer is not None:
            return turn
        await anyio.lowlevel.checkpoint()
    return most


class Call:
    """One get_test_run in a task of its own: its answer and the loop time it arrived."""

    def __init__(self) -> None:
        self.answer: dict[str, Any] | None = None
        self.at: float | None = None

    async def make(self, client: Client, arguments: dict[str, Any]) -> None:
        result = await client.call_tool("get_test_run", arguments)
        assert not result.is_error, result.content
        self.answer = result.structured_content
        self.at = anyio.current_time()


async def detached(client: Client) -> str:
    running = await client.call_tool("execute_tests", {})
    answer = running.structured_content
    assert answer is not None
    assert answer["status"] == "running", running.content
    return str(answer["run_id"])


@pytest.mark.parametrize("wait", [None, 60.0], ids=["default-wait", "wait-cut-to-the-limit"])
async def test_a_waiting_get_test_run_is_answered_as_the_run_ends(tmp_path: Path, wait: float | None) -> None:
    runner = project().hold(after=3)
    async with connect(runner, root=tmp_path, detach_after=DETACH) as client, anyio.create_task_group() as group:
        run_id = await detached(client)
        call = Call()
        arguments: dict[str, Any] = {"run_id": run_id} | ({} if wait is None else {"wait": wait})
        group.start_soon(call.make, client, arguments)
        assert await turns_until(call) == TURNS  # it waits: the run is held

        runner.release()
        ended = anyio.current_time()
        turns = await turns_until(call)

        # Answered, with the final answer, before any timer could fire: the run's end woke it.
        assert turns < TURNS, "the waiting call was not answered when the run ended"
        assert call.answer is not None
        assert call.answer.get("status") != "running"  # a final answer has no status
        assert call.answer["summary"]["failed"] == 1
        assert call.at is not None
        assert call.at - ended < LOOSE


async def test_a_run_that_ended_between_two_polls_is_answered_at_the_next_poll_at_once(tmp_path: Path) -> None:
    runner = project().hold(after=3)
    async with connect(runner, root=tmp_path, detach_after=DETACH) as client, anyio.create_task_group() as group:
        run_id = await detached(client)
        first = await client.call_tool("get_test_run", {"run_id": run_id, "wait": 0})
        assert (first.structured_content or {}).get("status") == "running"
        runner.release()
        for _ in range(TURNS):  # the run ends between the two polls
            await anyio.lowlevel.checkpoint()

        call = Call()
        asked = anyio.current_time()
        group.start_soon(call.make, client, {"run_id": run_id})  # the default wait: the longest there is
        turns = await turns_until(call)

        assert turns < TURNS, "the next poll waited although the run had ended"
        assert call.answer is not None
        assert call.answer.get("status") != "running"  # a final answer has no status
        assert call.at is not None
        assert call.at - asked < LOOSE
