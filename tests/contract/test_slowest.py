"""`slowest`: the N slowest tests, each test's setup, call and teardown summed, the same on both sides.

On the real side the tests of `timed/` sleep in one phase each; on the fake side they are scripted
with those durations.
"""

from __future__ import annotations

import pytest

from tests.contract.conftest import Side

pytestmark = pytest.mark.anyio

TIMED = "timed/test_timed.py"
# Each test's sleep, in the phase the test sleeps in (setup, teardown, call), slowest first.
SLEEPS = {f"{TIMED}::test_slow_setup": 0.4, f"{TIMED}::test_slow_call": 0.25, f"{TIMED}::test_slow_teardown": 0.1}


@pytest.fixture
def timed(side: Side) -> Side:
    if side.fake is not None:  # in the file's order
        for name, line in (
            ("test_quick", 19),
            ("test_slow_teardown", 23),
            ("test_slow_setup", 27),
            ("test_slow_call", 31),
        ):
            node_id = f"{TIMED}::{name}"
            side.fake.script(node_id, duration=SLEEPS.get(node_id, 0.0), line=line)
    return side


async def test_slowest_lists_the_slowest_tests_slowest_first_with_every_phase_summed(timed: Side) -> None:
    result = await timed.result("execute_tests", {"node_ids": [TIMED], "slowest": 3})

    assert [test["node_id"] for test in result["slowest"]] == list(SLEEPS)
    for test in result["slowest"]:
        assert SLEEPS[test["node_id"]] <= test["duration"] < SLEEPS[test["node_id"]] + 1.0, test
    text = result["_text"].splitlines()
    start = text.index("slowest 3 (setup + call + teardown):")
    assert [line.split("s ", 1)[1] for line in text[start + 1 : start + 4]] == list(SLEEPS)


async def test_slowest_lists_every_test_when_there_are_fewer(timed: Side) -> None:
    result = await timed.result("execute_tests", {"node_ids": [TIMED], "slowest": 50})

    assert [test["node_id"] for test in result["slowest"]] == [*SLEEPS, f"{TIMED}::test_quick"]


async def test_without_slowest_the_answer_has_none(timed: Side) -> None:
    result = await timed.result("execute_tests", {"node_ids": [TIMED]})

    assert result["slowest"] == []
    assert "slowest" not in result["_text"]
