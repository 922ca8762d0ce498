"""Exact counts where pytest's line depends on more than outcomes: subtests, project config, awkward ids.

Fixture projects: `subtests` (pytest 9's built-in subtests and unittest's subTest) and
`project_config` (addopts deselection, --import-mode=importlib, strict xfail, warnings as
errors, ids with escapes, spaces and newlines). Plain pytest is the oracle, as everywhere. The
target is the bare venv (nothing but the latest pytest), which starts fastest; whether
pytest-json-report is installed is covered by test_counts, and older pytest by tests/compat.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pytest_mcp.domain.runs import CollectSpec, RunReport, RunSpec
from pytest_mcp.testing import connect
from tests.integration.oracle import (
    COUNT_KEYS,
    PytestOutcome,
    pytest_collect,
    pytest_says,
    pytest_selects,
    run_args,
    summary_words,
)
from tests.integration.support import alongside, project, run

pytestmark = pytest.mark.anyio

BUILTIN = "test_builtin_subtests.py"
TWO_OF_FOUR = f"{BUILTIN}::test_two_of_four_subtests_fail"
UNITTEST = "test_unittest_subtests.py"
CONFIG = "tests/test_config.py"

_VERBOSITY_FLAGS = {-1: ["-q"], 0: [], 1: ["-v"]}

SELECTIONS = {
    "subtests-verbosity-0": ("subtests", RunSpec(verbosity=0)),
    "subtests-quiet": ("subtests", RunSpec(verbosity=-1)),
    "subtests-verbose": ("subtests", RunSpec(verbosity=1)),
    "subtests-unittest-quiet": ("subtests", RunSpec(node_ids=(UNITTEST,), verbosity=-1)),
    "subtests-one-test-quiet": ("subtests", RunSpec(node_ids=(TWO_OF_FOUR,), verbosity=-1)),
    "config-everything": ("project_config", RunSpec()),
    "config-verbose": ("project_config", RunSpec(verbosity=1)),
    "config-marker-overrides-addopts": ("project_config", RunSpec(markers="stress")),
    "config-keyword-awkward": ("project_config", RunSpec(keywords="awkward")),
}  # fmt: skip


@pytest.fixture(params=list(SELECTIONS), ids=list(SELECTIONS))
def selection(request: pytest.FixtureRequest) -> str:
    return request.param


_OBSERVED: dict[tuple[Path, str], tuple[PytestOutcome, RunReport]] = {}


async def observe(python: Path, make_runner, name: str) -> tuple[PytestOutcome, RunReport]:
    key = (python, name)
    if key not in _OBSERVED:
        project_name, spec = SELECTIONS[name]
        root = project(project_name)
        spec = spec.model_copy(update={"include_passed": True, "timeout": 60.0})
        args = [*_VERBOSITY_FLAGS[spec.verbosity], *run_args(spec)]
        _OBSERVED[key] = await alongside(lambda: pytest_says(python, root, args), run(make_runner(python, root), spec))
    return _OBSERVED[key]


async def test_counts_and_exit_code_equal_pytests_own(bare_python, make_runner, selection):
    expected, report = await observe(bare_python, make_runner, selection)
    assert expected.counts is not None, expected.stdout[-3000:]
    assert report.summary is not None, report.stdout[-3000:] + report.stderr[-3000:]

    assert {key: getattr(report.summary, key) for key in COUNT_KEYS} == expected.counts
    assert report.termination.exit_code == expected.exit_code


async def test_the_summary_line_we_print_has_pytests_words_in_pytests_order(bare_python, make_runner, selection):
    expected, report = await observe(bare_python, make_runner, selection)
    assert report.summary is not None

    assert report.summary.line().rsplit(" in ", 1)[0].split(", ") == summary_words(expected.stdout)


async def test_total_is_what_pytest_selects(bare_python, make_runner, selection):
    expected, report = await observe(bare_python, make_runner, selection)
    assert report.summary is not None

    project_name, spec = SELECTIONS[selection]
    selected = expected.selected
    if selected is None:  # quiet runs print no `collected` header
        selected = pytest_selects(bare_python, project(project_name), run_args(spec))
    assert report.summary.total == selected


async def test_listed_reports_tally_to_the_test_counts(bare_python, make_runner, selection):
    """Subtest reports are listed only where the line counts them as tests (a failing subtest is `failed`)."""
    expected, report = await observe(bare_python, make_runner, selection)
    assert expected.counts is not None

    tally = Counter(test.outcome for test in report.tests)
    outcomes = ("passed", "failed", "skipped", "xfailed", "xpassed")
    assert {key: tally[key] for key in outcomes} == {key: expected.counts[key] for key in outcomes}
    assert tally["error"] + len(report.collection_errors) == expected.counts["errors"]


# From here on pytest >= 9 is assumed: the bare venv links the dev venv's pytest, the latest (tests/compat: older).


async def test_passing_subtests_are_counted_only_when_pytests_line_counts_them(bare_python, make_runner):
    plain, report = await observe(bare_python, make_runner, "subtests-verbosity-0")
    assert report.summary is not None
    assert report.summary.subtests_passed == 0
    assert "subtests" not in plain.stdout.strip().splitlines()[-1]

    quiet, report = await observe(bare_python, make_runner, "subtests-quiet")
    assert report.summary is not None
    assert report.summary.subtests_passed == 14, quiet.stdout.strip().splitlines()[-1]
    assert report.summary.failed == 6  # four SUBFAILED lines and two enclosing tests


async def test_a_failing_subtest_is_listed_under_its_tests_node_id_with_its_description(bare_python, make_runner):
    _, report = await observe(bare_python, make_runner, "subtests-quiet")

    failures = [(test.node_id, test.message) for test in report.tests if test.outcome == "failed"]
    assert failures == [
        (f"{BUILTIN}::test_two_of_four_subtests_fail", "subtest [parity] (i=1): assert (1 % 2) == 0"),
        (f"{BUILTIN}::test_two_of_four_subtests_fail", "subtest [parity] (i=3): assert (3 % 2) == 0"),
        (f"{BUILTIN}::test_two_of_four_subtests_fail", "contains 2 failed subtests"),
        (
            f"{BUILTIN}::test_a_subtest_with_an_awkward_description",
            "subtest [snow \u2603 [a::b]] (path='x/y'): AssertionError: awkward subtest failed\nassert False",
        ),
        (f"{BUILTIN}::test_a_subtest_with_an_awkward_description", "contains 1 failed subtest"),
        (f"{UNITTEST}::TestSubTest::test_one_subtest_fails", "subtest [loop] (i=1): AssertionError: 1 == 1"),
    ]
    skipped = [(test.node_id, test.message) for test in report.tests if test.outcome in ("skipped", "xfailed")]
    assert skipped == [
        (f"{BUILTIN}::test_a_subtest_skips_and_one_xfails", "subtest [skips]: Skipped: not on this platform"),
        (f"{BUILTIN}::test_a_subtest_skips_and_one_xfails", "subtest [xfails]: known bug"),
        (f"{UNITTEST}::TestSubTest::test_a_subtest_skips", "subtest (mode='skip'): Skipped: skipped inside a subTest"),
    ]
    failing = [test for test in report.tests if test.outcome == "failed"]
    assert all(test.traceback for test in failing)


async def test_a_failing_subtests_node_id_runs_its_test_again(bare_python, make_runner):
    _, once = await observe(bare_python, make_runner, "subtests-quiet")
    node_id = next(test.node_id for test in once.tests if (test.message or "").startswith("subtest [parity]"))

    report = await run(make_runner(bare_python, project("subtests")), RunSpec(node_ids=(node_id,), verbosity=-1))
    assert report.summary is not None
    assert (report.summary.total, report.summary.failed, report.summary.subtests_passed) == (1, 3, 2)


async def test_project_config_decides_the_counts(bare_python, make_runner):
    expected, report = await observe(bare_python, make_runner, "config-everything")
    assert report.summary is not None

    assert report.summary.deselected == 3, "addopts = -m 'not stress'"
    outcomes = {test.node_id.split("::")[-1]: test.outcome for test in report.tests}
    assert outcomes["test_strict_xpass_fails"] == "failed", "xfail_strict"
    assert outcomes["test_non_strict_xpass"] == "xpassed"
    assert outcomes["test_a_warning_is_an_error"] == "failed", "filterwarnings = error"
    assert outcomes["test_an_ignored_warning_passes"] == "passed"
    assert outcomes["test_unit_side"] == outcomes["test_functional_side"] == "passed", "--import-mode=importlib"
    assert expected.exit_code == 1


async def test_awkward_node_ids_are_pytests_own_and_run_back_through_the_tool(bare_python):
    """Escapes (`\\u2603`, `\\x1b`, `\\n`), leading and trailing spaces: as pytest prints them, and reusable."""
    root = project("project_config")
    collected = pytest_collect(bare_python, root, CollectSpec(keywords="awkward"))
    async with connect(root=root, python=bare_python) as client:
        first = await client.call_tool("execute_tests", {"keywords": "awkward", "detail": "all"})
        assert first.structured_content is not None
        failing = [test["node_id"] for test in first.structured_content["tests"] if test["outcome"] != "passed"]
        again = await client.call_tool("execute_tests", {"node_ids": failing, "detail": "all"})
        assert again.structured_content is not None

    assert sorted(failing) == sorted(collected.node_ids)
    assert {rf"{CONFIG}::test_awkward_ids[\u2603]", rf"{CONFIG}::test_awkward_ids[\x1b[31mred\x1b[0m]"} < set(failing)
    assert {f"{CONFIG}::test_awkward_ids[ leading]", f"{CONFIG}::test_awkward_ids[trailing ]"} < set(failing)
    assert {rf"{CONFIG}::test_awkward_ids[two\nlines]", rf"{CONFIG}::test_awkward_values[a\nb]"} < set(failing)
    assert again.structured_content["summary"]["total"] == len(failing)
    assert [test["node_id"] for test in again.structured_content["tests"]] == failing
