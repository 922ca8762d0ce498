"""Each ReportedTest says what pytest said about that test, in the right phase, with its output."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mcp.domain.models import ReportedTest
from pytest_mcp.domain.runs import RunReport, RunSpec
from tests.integration.oracle import pytest_says
from tests.integration.support import project, run, run_once

pytestmark = pytest.mark.anyio

OUTCOMES = "test_outcomes.py"


def reports_for(report: RunReport, name: str) -> list[ReportedTest]:
    return [test for test in report.tests if test.node_id == f"{OUTCOMES}::{name}"]


def only(reports: list[ReportedTest], outcome: str) -> ReportedTest:
    matching = [test for test in reports if test.outcome == outcome]
    assert len(matching) == 1, f"expected one {outcome!r} report, got {reports}"
    return matching[0]


@pytest.fixture
async def outcomes_report(python: Path, make_runner) -> RunReport:
    root = project("outcomes")
    spec = RunSpec(include_passed=True, show_capture=True, timeout=60)
    return await run_once(make_runner(python, root), python, root, spec)


async def test_each_outcome_is_reported_with_the_outcome_and_phase_pytest_gives_it(outcomes_report):
    phases = {
        ("test_passes", "passed"): "call",
        ("test_fails_with_diff", "failed"): "call",
        ("test_skipped", "skipped"): "call",
        ("test_skipped_by_marker", "skipped"): "setup",
        ("test_xfails", "xfailed"): "call",
        ("test_xpasses", "xpassed"): "call",
        ("test_strict_xpass_counts_as_failed", "failed"): "call",
        ("test_setup_error", "error"): "setup",
        ("test_passes_then_teardown_errors", "passed"): "call",
        ("test_passes_then_teardown_errors", "error"): "teardown",
        ("test_prints_then_fails", "failed"): "call",
        ("test_passes_with_a_warning", "passed"): "call",
    }
    got = {}
    for test in outcomes_report.tests:
        name = test.node_id.removeprefix(f"{OUTCOMES}::")
        got[(name, test.outcome)] = test.phase
    assert got == phases


async def test_a_test_passing_then_failing_teardown_is_one_pass_and_one_error(outcomes_report):
    reports = reports_for(outcomes_report, "test_passes_then_teardown_errors")
    assert sorted(test.outcome for test in reports) == ["error", "passed"]
    error = only(reports, "error")
    assert "teardown exploded" in f"{error.message}\n{error.traceback}"
    assert outcomes_report.summary is not None
    assert outcomes_report.summary.passed == 3
    assert outcomes_report.summary.errors == 2
    assert outcomes_report.summary.warnings == 1


async def test_setup_error_carries_the_fixture_exception(outcomes_report):
    error = only(reports_for(outcomes_report, "test_setup_error"), "error")
    assert "RuntimeError" in (error.message or "")
    assert "setup exploded" in (error.message or "")


async def test_assertion_failure_carries_pytests_diff(python, outcomes_report):
    plain = pytest_says(python, project("outcomes"), [f"{OUTCOMES}::test_fails_with_diff"])
    assert "Differing items" in plain.stdout, "pytest itself shows a diff for this assertion"

    failure = only(reports_for(outcomes_report, "test_fails_with_diff"), "failed")
    assert "AssertionError" in (failure.message or "")
    assert "Differing items" in (failure.traceback or "")
    assert "[1, 2, 4]" in (failure.traceback or "")


async def test_strict_xpass_is_a_failure_naming_xpass_strict(outcomes_report):
    failure = only(reports_for(outcomes_report, "test_strict_xpass_counts_as_failed"), "failed")
    assert failure.is_failure
    assert "XPASS(strict)" in f"{failure.message}\n{failure.traceback}"


async def test_failing_test_carries_its_captured_stdout_and_stderr(outcomes_report):
    failure = only(reports_for(outcomes_report, "test_prints_then_fails"), "failed")
    assert failure.stdout is not None
    assert "OUT-MARKER: hello from stdout" in failure.stdout
    assert failure.stderr is not None
    assert "ERR-MARKER: hello from stderr" in failure.stderr
    assert "OUT-MARKER" not in failure.stderr
    assert "failed after printing" in (failure.message or "")


async def test_skip_reason_is_the_message(outcomes_report):
    skipped = only(reports_for(outcomes_report, "test_skipped"), "skipped")
    assert "not on this machine" in (skipped.message or "")


async def test_every_report_locates_its_test_in_the_fixture_file(outcomes_report):
    assert outcomes_report.tests
    for test in outcomes_report.tests:
        assert test.location is not None, test
        file, _, line = test.location.rpartition(":")
        assert file == OUTCOMES, test
        assert line.isdigit(), test


async def test_passed_reports_are_left_out_unless_asked_for(python, make_runner):
    root = project("outcomes")
    report = await run(make_runner(python, root), RunSpec(include_passed=False, timeout=60))

    assert report.summary is not None
    assert report.summary.passed == 3
    assert all(test.outcome != "passed" for test in report.tests)
    assert {test.outcome for test in report.tests} == {"failed", "error", "skipped", "xfailed", "xpassed"}
