"""The runner's counts equal pytest's own terminal summary line, for every fixture and selection."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pytest_mcp.domain.runs import RunReport, RunSpec
from tests.integration.oracle import COUNT_KEYS, SUBTEST_KEYS, PytestOutcome, parse_summary_line, pytest_run
from tests.integration.support import alongside, project, run

pytestmark = pytest.mark.anyio

OUTCOMES = "test_outcomes.py"
IDS = "test_ids.py"

# (fixture project, selection): each one makes pytest print a different summary line.
SELECTIONS = {
    "outcomes-everything": ("outcomes", RunSpec()),
    "outcomes-two-node-ids": (
        "outcomes",
        RunSpec(node_ids=(f"{OUTCOMES}::test_passes", f"{OUTCOMES}::test_passes_then_teardown_errors")),
    ),
    "outcomes-keyword-xfail": ("outcomes", RunSpec(keywords="xfail or xpass")),
    "outcomes-keyword-not": ("outcomes", RunSpec(keywords="not skipped and not error")),
    "outcomes-maxfail-1": ("outcomes", RunSpec(maxfail=1)),
    "outcomes-maxfail-2-verbose": ("outcomes", RunSpec(maxfail=2, verbosity=2)),
    "outcomes-quiet": ("outcomes", RunSpec(verbosity=-2)),
    "ids-everything": ("ids", RunSpec()),
    "ids-marker-slow": ("ids", RunSpec(markers="slow")),
    "ids-marker-db-and-not-slow": ("ids", RunSpec(markers="db and not slow")),
    "ids-keyword-inner": ("ids", RunSpec(keywords="TestInner")),
    "ids-marker-and-keyword": ("ids", RunSpec(markers="slow or db", keywords="not flavours")),
    "ids-keyword-matches-nothing": ("ids", RunSpec(keywords="nothing_matches_this_keyword")),
    "ids-class-node-id": ("ids", RunSpec(node_ids=(f"{IDS}::TestOuter",))),
    "unicode-ids-everything": ("unicode_ids", RunSpec()),
    "collection-error-everything": ("collection_error", RunSpec()),
    "collection-error-good-file-only": ("collection_error", RunSpec(node_ids=("test_fine.py",))),
    "empty-project": ("empty", RunSpec()),
}


@pytest.fixture(params=list(SELECTIONS), ids=list(SELECTIONS))
def selection(request: pytest.FixtureRequest) -> str:
    return request.param


# One plain-pytest run and one runner run per (interpreter, selection), shared by the tests below.
_OBSERVED: dict[tuple[Path, str], tuple[PytestOutcome, RunReport]] = {}


async def observe(python: Path, make_runner, name: str) -> tuple[PytestOutcome, RunReport]:
    key = (python, name)
    if key not in _OBSERVED:
        project_name, spec = SELECTIONS[name]
        root = project(project_name)
        spec = spec.model_copy(update={"include_passed": True, "timeout": 60.0})
        _OBSERVED[key] = await alongside(lambda: pytest_run(python, root, spec), run(make_runner(python, root), spec))
    return _OBSERVED[key]


async def test_counts_match_pytest_terminal_summary_for_every_key(python, make_runner, selection):
    expected, report = await observe(python, make_runner, selection)
    assert expected.counts is not None, f"oracle found no summary line in:\n{expected.stdout[-3000:]}"

    assert report.summary is not None, f"no summary; stdout tail:\n{report.stdout[-3000:]}\n{report.stderr[-3000:]}"
    got = {key: getattr(report.summary, key) for key in COUNT_KEYS}
    assert got == expected.counts, f"pytest said: {expected.stdout.strip().splitlines()[-1]}"


async def test_exit_code_matches_plain_pytest(python, make_runner, selection):
    expected, report = await observe(python, make_runner, selection)

    assert report.termination.kind == "exited"
    assert report.termination.exit_code == expected.exit_code


async def test_total_is_collected_minus_deselected_as_pytest_reports_it(python, make_runner, selection):
    expected, report = await observe(python, make_runner, selection)
    assert expected.selected is not None, f"oracle found no 'collected' line in:\n{expected.stdout[:2000]}"

    assert report.summary is not None
    assert report.summary.total == expected.selected


async def test_reported_tests_tally_to_pytest_counts_when_passed_reports_are_included(python, make_runner, selection):
    expected, report = await observe(python, make_runner, selection)
    assert expected.counts is not None

    tally = Counter(test.outcome for test in report.tests)
    got = {
        "passed": tally["passed"],
        "failed": tally["failed"],
        "skipped": tally["skipped"],
        "xfailed": tally["xfailed"],
        "xpassed": tally["xpassed"],
        "errors": tally["error"] + len(report.collection_errors),
    }
    want = {key: value for key, value in expected.counts.items() if key in got}
    assert got == want


def test_oracle_reads_every_count_from_pytest_summary_lines():
    line = "==== 3 failed, 2 passed, 2 skipped, 1 xfailed, 1 xpassed, 1 warning, 2 errors, 4 deselected in 0.58s ===="
    assert parse_summary_line(f"noise\n{line}\n") == {
        "passed": 2, "failed": 3, "skipped": 2, "xfailed": 1, "xpassed": 1, "errors": 2, "deselected": 4,
        "warnings": 1, "subtests_passed": 0, "subtests_failed": 0, "subtests_skipped": 0,
    }  # fmt: skip
    line = "2 failed, 1 passed, 1 skipped, 1 subtests passed, 3 subtests failed, 1 subtests skipped in 0.02s"
    assert parse_summary_line(line) == dict.fromkeys(COUNT_KEYS, 0) | {
        "failed": 2, "passed": 1, "skipped": 1, "subtests_passed": 1, "subtests_failed": 3, "subtests_skipped": 1,
    }  # fmt: skip
    assert parse_summary_line("1 error in 1.00s (0:00:01)") == dict.fromkeys(COUNT_KEYS, 0) | {"errors": 1}
    assert parse_summary_line("no tests ran in 0.01s") == dict.fromkeys(COUNT_KEYS, 0)
    assert parse_summary_line("!!! Interrupted: 1 error during collection !!!") is None


async def test_outcomes_fixture_makes_pytest_report_every_kind_of_count(python, make_runner):
    """Guards the fixture: the comparison above is only as strong as the counts pytest prints."""
    expected, _ = await observe(python, make_runner, "outcomes-everything")
    assert expected.counts is not None
    others = ("deselected", *SUBTEST_KEYS)  # proved by the ids fixture below and the subtests fixture
    assert all(expected.counts[key] > 0 for key in COUNT_KEYS if key not in others), expected.counts
    expected, _ = await observe(python, make_runner, "ids-marker-slow")
    assert expected.counts is not None
    assert expected.counts["deselected"] > 0
