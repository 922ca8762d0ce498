"""A failure scripted for a test or a module behaves like the real thing: it strikes every call that
selects it, and no other, call after call (issue 20, finding 1).

On the real side the project itself is broken (`failures/`); on the fake side the test scripts the
same failure once, scoped to its node id, and the sequence of calls must give the same answers.
"""

from __future__ import annotations

import pytest

from tests.contract.conftest import Side, terminal_lines
from tests.contract.script import CONTRACT_ROOT, OUTCOMES

pytestmark = pytest.mark.anyio

PASSES = f"{OUTCOMES}::test_passes"
BROKEN = "failures/test_collection_error.py"
EXCEPTION = "ModuleNotFoundError: No module named 'module_that_does_not_exist_contract'"
INTERRUPTED = f"pytest was interrupted: 1 error during collection\n- {BROKEN}: {EXCEPTION}"
CRASH = "failures/test_crash.py"
SEGFAULTS = f"{CRASH}::test_segfaults"
CRASHED = "pytest was killed by SIGSEGV while running test_segfaults (test_crash.py:5); no results are available"
HANG = "failures/test_hang.py::test_hangs"


async def test_a_broken_module_interrupts_every_call_that_collects_it_and_no_other(side: Side) -> None:
    if side.fake:
        side.fake.fail_with("collection_error", EXCEPTION, node_id=BROKEN)

    elsewhere = await side.result("execute_tests", {"node_ids": [PASSES]})
    discovered = await side.result("discover_tests", {"path": "tests"})
    with_it = await side.error("execute_tests", {"node_ids": [PASSES, BROKEN]})
    again = await side.error("execute_tests", {"node_ids": [BROKEN]})
    deselected_anyway = await side.error("execute_tests", {"node_ids": [BROKEN], "keywords": "nothing"})
    discovery = await side.result("discover_tests", {"path": BROKEN})

    assert (elsewhere["exit_code"], elsewhere["summary"]["passed"]) == (0, 1)
    assert (discovered["exit_code"], discovered["collection_errors"]) == (0, [])
    # pytest imports the module before -k deselects anything, and nothing runs after it failed.
    assert [error.message for error in (with_it, again, deselected_anyway)] == [INTERRUPTED] * 3
    assert [e["node_id"] for e in with_it.data["collection_errors"]] == [BROKEN]
    assert (discovery["exit_code"], discovery["tests"]) == (2, [])
    assert [(e["node_id"], e["message"]) for e in discovery["collection_errors"]] == [(BROKEN, EXCEPTION)]


async def test_a_test_named_inside_a_broken_module_is_found_by_no_collector(side: Side) -> None:
    if side.fake:
        side.fake.fail_with("collection_error", EXCEPTION, node_id=BROKEN)

    error = await side.error("execute_tests", {"node_ids": [f"{BROKEN}::test_never_collected"]})

    assert error.message == (
        f"pytest reported a usage error: ERROR: found no collectors for {CONTRACT_ROOT}/{BROKEN}::test_never_collected"
    )
    assert (error.data["reason"], error.data["exit_code"]) == ("usage_error", 4)
    assert [e["node_id"] for e in error.data["collection_errors"]] == [BROKEN]
    assert terminal_lines(error.data["stdout_tail"], start="= short test summary info") == [
        "= short test summary info",
        f"ERROR {BROKEN}",
        "1 error in Ns",
    ]


async def test_a_crash_in_a_test_spares_runs_without_it_and_strikes_each_run_with_it(side: Side) -> None:
    if side.fake:
        side.fake.script(SEGFAULTS, line=4).fail_with("crash", node_id=SEGFAULTS)

    spared = await side.result("execute_tests", {"node_ids": [PASSES]})
    first = await side.error("execute_tests", {"node_ids": [PASSES, CRASH]})
    second = await side.error("execute_tests", {"node_ids": [CRASH]})

    assert (spared["exit_code"], spared["summary"]["passed"]) == (0, 1)
    assert [first.message, second.message] == [CRASHED, CRASHED]
    assert [first.data["signal"], second.data["signal"]] == ["SIGSEGV", "SIGSEGV"]


async def test_a_hanging_test_times_out_every_run_that_selects_it(side: Side) -> None:
    if side.fake:
        side.fake.script(HANG, line=4).fail_with("timeout", node_id=HANG)

    # The limit leaves pytest time to start and reach the hang on a loaded machine (at 1 s, a load of 12
    # made the spared run time out, and the message name no test, since pytest had not reached one yet).
    spared = await side.result("execute_tests", {"node_ids": [PASSES], "timeout": 30})
    first = await side.error("execute_tests", {"node_ids": [PASSES, HANG], "timeout": 4})
    second = await side.error("execute_tests", {"node_ids": [HANG], "timeout": 4})

    assert spared["exit_code"] == 0
    assert [first.reason, second.reason] == ["timeout", "timeout"]
    assert first.message == second.message
    assert first.message.startswith("pytest did not finish within 4s and was stopped with all its child processes")
    assert "while running test_hangs (test_hang.py:5)" in first.message
