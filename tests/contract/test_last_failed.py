"""`last_failed` and `failed_first` act on the previous runs: pytest's cache, the fake's memory (finding 3).

Each test starts from a copy of the contract project without a cache. A "fix" edits the real
project's file and re-scripts the fake's test, as an agent's edit and its test would.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.answers import ToolErrorSeen
from tests.contract.conftest import Side, terminal_lines
from tests.contract.script import ALL_TESTS, OUTCOMES, SELECTION

pytestmark = pytest.mark.anyio

FAILING = [
    f"{OUTCOMES}::test_fails",
    f"{OUTCOMES}::test_setup_errors",
    f"{OUTCOMES}::test_teardown_errors",
    f"{OUTCOMES}::test_prints_then_fails",
]
BROKEN = "failures/test_collection_error.py"
EXCEPTION = "ModuleNotFoundError: No module named 'module_that_does_not_exist_contract'"


def counts(result: dict[str, Any]) -> dict[str, int]:
    return {key: value for key, value in result["summary"].items() if value and key not in ("duration", "total")}


async def run(side: Side, **arguments: Any) -> dict[str, Any]:
    """A run's counts and whole output (detail "summary": the output is not cut at the failures)."""
    return await side.result("execute_tests", {"detail": "summary", "verbosity": 0, **arguments})


async def listed(side: Side, **arguments: Any) -> list[str]:
    """The node ids a run ran, in order."""
    result = await side.result("execute_tests", {"detail": "all", **arguments})
    return list(dict.fromkeys(test["node_id"] for test in result["tests"]))


def header(error: ToolErrorSeen) -> list[str]:
    """The `collected` line and the `run-last-failure:` line pytest prints at verbosity 0.

    A run's text is cut to its end when it fails; an interrupted run's output tail keeps its start.
    """
    return terminal_lines(error.data["stdout_tail"])[:2]


def fix_test_fails(side: Side) -> None:
    if side.fake:
        side.fake.script(f"{OUTCOMES}::test_fails", line=23)
    else:
        module = side.root / OUTCOMES
        module.write_text(module.read_text().replace("assert total == 5", "assert total == 4  # fixed"))


async def test_last_failed_reruns_what_failed_and_follows_each_fix(fresh_side: Side) -> None:
    side = fresh_side
    await side.result("execute_tests", {})

    rerun = await run(side, last_failed=True)
    fix_test_fails(side)
    after_the_fix = await run(side, last_failed=True)
    still_failing = await listed(side, last_failed=True)

    # --lf filters while collecting: the files without a failure are skipped, nothing is deselected.
    assert (rerun["summary"]["total"], counts(rerun)) == (4, {"failed": 2, "passed": 1, "errors": 2})
    # The fixed test passes on the rerun after the fix, and is no longer among the failures.
    assert (after_the_fix["summary"]["total"], counts(after_the_fix)) == (4, {"passed": 2, "failed": 1, "errors": 2})
    assert still_failing == FAILING[1:]


async def test_failed_first_runs_the_failures_then_the_rest(fresh_side: Side) -> None:
    await fresh_side.result("execute_tests", {})

    order = await listed(fresh_side, failed_first=True)

    assert order == FAILING + [test for test in ALL_TESTS if test not in FAILING]


async def test_last_failed_runs_everything_it_is_given_when_no_failure_is_among_it(fresh_side: Side) -> None:
    nothing_yet = await run(fresh_side, last_failed=True, node_ids=[SELECTION])
    await fresh_side.result("execute_tests", {})
    elsewhere = await run(fresh_side, last_failed=True, node_ids=[SELECTION])
    named_file = await run(fresh_side, last_failed=True, node_ids=[OUTCOMES])
    named_file_ran = await listed(fresh_side, last_failed=True, node_ids=[OUTCOMES])

    assert (nothing_yet["exit_code"], nothing_yet["summary"]["total"]) == (0, 7)
    assert (elsewhere["exit_code"], elsewhere["summary"]["total"]) == (0, 7)
    # A file named on the command line is collected whole; its passing tests are deselected.
    assert (named_file["summary"]["total"], named_file["summary"]["deselected"]) == (4, 5)
    assert named_file_ran == FAILING


async def test_the_run_last_failure_line_and_skipped_files_are_pytests(fresh_side: Side) -> None:
    side = fresh_side
    if side.fake:
        side.fake.fail_with("collection_error", EXCEPTION, node_id=BROKEN)
    await side.result("execute_tests", {"node_ids": ["tests"]})

    # The broken module is a file without a failure: once a failure was collected, it is skipped.
    skipped = await run(side, last_failed=True, node_ids=["tests", BROKEN])
    failed_first = await side.error(
        "execute_tests", {"failed_first": True, "verbosity": 0, "node_ids": ["tests", BROKEN]}
    )
    # Now the broken module is a failure too, and --lf collects it.
    last_failed = await side.error(
        "execute_tests", {"last_failed": True, "verbosity": 0, "node_ids": ["tests", BROKEN]}
    )
    elsewhere = await side.error(
        "execute_tests", {"last_failed": True, "verbosity": 0, "node_ids": [SELECTION, BROKEN]}
    )

    assert (skipped["exit_code"], skipped["summary"]["total"]) == (1, 4)
    assert header(failed_first) == ["collected 17 items / 1 error", "run-last-failure: rerun previous 4 failures first"]
    assert header(last_failed) == [
        "collected 4 items / 1 error",
        "run-last-failure: rerun previous 4 failures (skipped 2 files)",
    ]
    assert header(elsewhere) == [
        "collected 7 items / 1 error",
        "run-last-failure: 5 known failures not in selected tests",
    ]


async def test_a_module_that_imports_again_has_its_tests_rerun_as_failures(fresh_side: Side) -> None:
    side = fresh_side
    if side.fake:
        side.fake.fail_with("collection_error", EXCEPTION, node_id=BROKEN)
    await side.error("execute_tests", {"node_ids": [BROKEN]})
    if side.fake:
        side.fake.clear_failures(BROKEN).script(f"{BROKEN}::test_never_collected", line=4)
    else:
        module = side.root / BROKEN
        module.write_text(module.read_text().replace("import module_that_does_not_exist_contract", "import os"))

    rerun = await run(side, last_failed=True, node_ids=["tests", BROKEN])

    assert (rerun["exit_code"], rerun["summary"]["total"], rerun["summary"]["passed"]) == (0, 1, 1)


# The last_failed tool: execute_tests' use case with pytest's --lf and no selection of its own.
LAST_FAILED = "last_failed"


async def test_the_last_failed_tool_reruns_what_failed_as_execute_tests_with_last_failed_does(
    fresh_side: Side,
) -> None:
    side = fresh_side
    await side.result("execute_tests", {})

    tool = await side.result(LAST_FAILED, {"detail": "summary", "verbosity": 0})
    field = await run(side, last_failed=True)
    listed_by_the_tool = await side.result(LAST_FAILED, {"detail": "all"})

    assert (tool["summary"]["total"], counts(tool)) == (4, {"failed": 2, "passed": 1, "errors": 2})
    assert counts(tool) == counts(field)
    assert list(dict.fromkeys(test["node_id"] for test in listed_by_the_tool["tests"])) == FAILING


async def test_the_last_failed_tool_runs_every_test_when_no_failure_is_recorded(fresh_side: Side) -> None:
    result = await fresh_side.result(LAST_FAILED, {"detail": "summary"})

    assert result["summary"]["total"] == len([t for t in ALL_TESTS if t.startswith("tests/")])


async def test_the_last_failed_tool_takes_no_selection_and_names_itself_in_its_errors(side: Side) -> None:
    error = await side.error(LAST_FAILED, {"node_ids": ["tests"], "maxfail": 0})

    assert error.message.startswith(f"invalid arguments for {LAST_FAILED}: ")
    assert {problem["field"] for problem in error.data["errors"]} == {"node_ids", "maxfail"}
