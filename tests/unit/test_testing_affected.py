"""The test double's affected runs (issue 26): `edit` scripts what an edit touches, as pytest-testmon sees it."""

from __future__ import annotations

import pytest

from pytest_mcp.domain.models import AffectedRun
from pytest_mcp.domain.requests import ExecuteTestsRequest, RequestPolicy
from pytest_mcp.domain.runs import RunSpec
from pytest_mcp.testing import FakeTestRunner, ScriptError

pytestmark = pytest.mark.anyio

ADD = "tests/test_add.py::test_add"
ADD_BIG = "tests/test_add.py::test_add_big"
MUL = "tests/test_mul.py::test_mul"
BROKEN = "tests/test_mul.py::test_broken"


def project() -> FakeTestRunner:
    tests = {ADD: "passed", ADD_BIG: {"markers": ["slow"]}, MUL: "passed", BROKEN: "failed"}
    return FakeTestRunner.from_dict(tests).install("pytest-testmon")


async def affected(runner: FakeTestRunner, **fields: object) -> tuple[list[str], AffectedRun | None, int | None]:
    report = await runner.run(RunSpec(affected=True, include_passed=True, **fields))  # type: ignore[arg-type]
    return [test.node_id for test in report.tests], report.facts.affected, report.termination.exit_code


async def test_the_first_affected_run_runs_everything_and_records_it() -> None:
    ran, figures, _ = await affected(project())

    assert ran == [ADD, ADD_BIG, MUL, BROKEN]
    assert figures == AffectedRun(run=4, not_run=0, ran_everything="no_data")


async def test_then_only_what_an_edit_affects_runs_with_last_times_failures() -> None:
    runner = project()
    await affected(runner)

    unchanged, figures, _ = await affected(runner)
    runner.edit(ADD)
    edited, edited_figures, _ = await affected(runner)
    after, _, _ = await affected(runner)

    assert (unchanged, figures) == ([BROKEN], AffectedRun(run=1, not_run=3))
    assert (edited, edited_figures) == ([ADD, BROKEN], AffectedRun(run=2, not_run=2))
    assert after == [BROKEN]  # the edit was run: recorded again


async def test_an_edit_of_a_file_affects_its_tests_and_selections_still_apply() -> None:
    runner = project()
    await affected(runner)
    runner.edit("tests/test_add.py")

    ran, figures, _ = await affected(runner, markers="not slow")
    report = await runner.run(RunSpec(affected=True, markers="not slow", node_ids=("tests/test_add.py",)))

    assert ran == [ADD, BROKEN]
    assert figures == AffectedRun(run=2, not_run=1)  # MUL: its file is not collected, as testmon does
    # pytest's count: ADD_BIG (still edited, so its file is collected) by -m, and ADD, recorded again, by testmon.
    assert report.summary is not None
    assert (report.summary.deselected, report.summary.total) == (2, 0)


async def test_nothing_affected_is_a_clean_run_as_with_testmon() -> None:
    runner = FakeTestRunner.from_dict({ADD: "passed"}).install("pytest-testmon")
    await affected(runner)

    ran, figures, exit_code = await affected(runner)

    assert (ran, figures, exit_code) == ([], AffectedRun(run=0, not_run=1), 0)


async def test_a_run_without_affected_leaves_the_data_alone() -> None:
    runner = project()
    await runner.run(RunSpec())

    _, figures, _ = await affected(runner)

    assert figures is not None
    assert figures.ran_everything == "no_data"


def test_an_edit_must_name_scripted_tests() -> None:
    runner = project()
    with pytest.raises(ScriptError, match=r"affects\[0\]: 'tests/test_nothing.py' names no scripted test"):
        runner.edit("tests/test_nothing.py")
    with pytest.raises(ScriptError, match=r"affects\[1\]: must be a test's node id"):
        runner.edit(ADD, "/abs")


async def test_affected_without_testmon_is_refused_naming_the_distribution() -> None:
    report = await FakeTestRunner.from_dict({ADD: "passed"}).run(RunSpec(affected=True))

    assert (report.termination.kind, report.termination.detail) == ("plugin_missing", "pytest-testmon")


def test_the_request_takes_affected_as_a_boolean_only(tmp_path: object) -> None:
    policy = RequestPolicy(root=tmp_path)  # type: ignore[arg-type]
    assert ExecuteTestsRequest.parse({"affected": True}, policy).affected
    with pytest.raises(Exception, match="affected"):
        ExecuteTestsRequest.parse({"affected": "yes"}, policy)


def test_the_answer_line_says_what_ran_what_did_not_and_the_way_back() -> None:
    assert AffectedRun(run=38, not_run=4912).line() == (
        "38 affected tests run; 4,912 unaffected not run (they passed when they last ran; affected=false runs "
        "everything)"
    )
    assert AffectedRun(run=1, ran_everything="no_data").line() == (
        "first affected run, no data yet: ran everything (1 test) and recorded what each test uses"
    )
    assert AffectedRun(run=2, ran_everything="packages_changed").line() == (
        "the target environment's packages changed since the last affected run: ran everything (2 tests)"
    )
    eleven = tuple(f"data/{index:02}.json" for index in range(10))
    assert AffectedRun(run=3, ran_everything="files_changed", changed_files=eleven, changed_file_count=11).line() == (
        f"11 files pytest-testmon cannot see changed since the last affected run ({', '.join(eleven)}, and 1 more): "
        "ran everything (3 tests)"
    )
    assert AffectedRun(run=3, ran_everything="files_unrecorded").line() == (
        "no record yet of the files pytest-testmon cannot see (those not Python): ran everything (3 tests) and "
        "recorded them"
    )


async def test_an_edit_of_a_data_file_runs_everything_then_what_the_data_left_out() -> None:
    runner = project()
    await affected(runner)
    runner.edit(files=["tests/data/b.json", "tests/data/a.json"])

    part, figures, _ = await affected(runner, node_ids=("tests/test_add.py",))
    rest, rest_figures, _ = await affected(runner)

    assert part == [ADD, ADD_BIG]
    assert figures == AffectedRun(
        run=2, ran_everything="files_changed", changed_files=("tests/data/a.json", "tests/data/b.json"),
        changed_file_count=2,
    )  # fmt: skip
    # The data was discarded: what the first run did not reach is new to the second.
    assert (rest, rest_figures) == ([MUL, BROKEN], AffectedRun(run=2, not_run=2))


def test_a_data_file_edit_names_a_file_that_is_not_python() -> None:
    runner = project()
    with pytest.raises(ScriptError, match=r"files\[1\]: must be the path of a file that is not Python"):
        runner.edit(files=["data/a.json", "calc.py"])
    with pytest.raises(ScriptError, match=r"files\[0\]: .*got '/etc/passwd'"):
        runner.edit(files=["/etc/passwd"])
