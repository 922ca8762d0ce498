"""Outcomes, counts, reports and pytest's own text: the same for the fake and the real runner."""

from __future__ import annotations

import re

import pytest

from pytest_mcp.domain.text import CAPTURE_LINES, EVIDENCE_LINES, evidence_lines, last_lines
from tests.answers import signature_row
from tests.contract.conftest import Side, normalized, open_side, terminal_lines
from tests.contract.script import CONTRACT_ROOT, OUTCOMES, SELECTION

pytestmark = pytest.mark.anyio

SUMMARY = {
    "total": 17,
    "passed": 10,
    "failed": 2,
    "skipped": 2,
    "xfailed": 1,
    "xpassed": 1,
    "errors": 2,
    "deselected": 0,
    "warnings": 0,
    "subtests_passed": 0,
    "subtests_failed": 0,
    "subtests_skipped": 0,
    "rerun": 0,
    "other_statuses": {},
}

# node_id, outcome, phase, location, message: every non-passing report, in pytest's order.
NON_PASSING = [
    (f"{OUTCOMES}::test_fails", "failed", "call", f"{OUTCOMES}:23", "assert 4 == 5"),
    (f"{OUTCOMES}::test_skipped_by_marker", "skipped", "setup", f"{OUTCOMES}:28", "Skipped: not on this platform"),
    (f"{OUTCOMES}::test_skips_itself", "skipped", "call", f"{OUTCOMES}:33", "Skipped: no network"),
    (f"{OUTCOMES}::test_xfails", "xfailed", "call", f"{OUTCOMES}:37", "known bug"),
    (f"{OUTCOMES}::test_xpasses", "xpassed", "call", f"{OUTCOMES}:42", "fixed upstream"),
    (f"{OUTCOMES}::test_setup_errors", "error", "setup", f"{OUTCOMES}:47", "RuntimeError: setup exploded"),
    (f"{OUTCOMES}::test_teardown_errors", "error", "teardown", f"{OUTCOMES}:51", "RuntimeError: teardown exploded"),
    (f"{OUTCOMES}::test_prints_then_fails", "failed", "call", f"{OUTCOMES}:55", "ValueError: bad value"),
]


def without_duration(summary: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in summary.items() if key != "duration"}


async def test_a_run_counts_every_outcome_as_pytests_summary_does(side: Side) -> None:
    result = await side.result("execute_tests", {})

    assert result["exit_code"] == 1
    assert without_duration(result["summary"]) == SUMMARY
    assert normalized(result["_text"].splitlines()[0]) == (
        "2 failed, 10 passed, 2 skipped, 1 xfailed, 1 xpassed, 2 errors in Ns (exit code 1)"
    )


async def test_each_non_passing_report_has_its_outcome_phase_location_and_message(side: Side) -> None:
    result = await side.result("execute_tests", {"detail": "all"})

    reports = [(t["node_id"], t["outcome"], t["phase"], t.get("location"), t.get("message")) for t in result["tests"]]
    assert [report for report in reports if report[1] != "passed"] == NON_PASSING


# (count, outcome, phase, exception, masked message, crash site, members): every failure, error and xpass.
GROUPS = [
    (1, "failed", "call", "AssertionError", "assert <n> == <n>", f"{OUTCOMES}:25", [f"{OUTCOMES}::test_fails"]),
    (1, "xpassed", "call", None, "fixed upstream", f"{OUTCOMES}:42", [f"{OUTCOMES}::test_xpasses"]),
    (
        1,
        "error",
        "setup",
        "RuntimeError",
        "RuntimeError: setup exploded",
        f"{OUTCOMES}:10",
        [f"{OUTCOMES}::test_setup_errors"],
    ),
    (
        1,
        "error",
        "teardown",
        "RuntimeError",
        "RuntimeError: teardown exploded",
        f"{OUTCOMES}:16",
        [f"{OUTCOMES}::test_teardown_errors"],
    ),
    (
        1,
        "failed",
        "call",
        "ValueError",
        "ValueError: bad value",
        f"{OUTCOMES}:57",
        [f"{OUTCOMES}::test_prints_then_fails"],
    ),
]


async def test_the_default_answer_gives_failures_by_group_and_skips_by_reason_and_lists_no_test(side: Side) -> None:
    result = await side.result("execute_tests", {})

    assert [signature_row(g) for g in result["groups"]] == GROUPS
    assert [(r["outcome"], r["reason"], r["count"]) for r in result["reasons"]] == [
        ("skipped", "not on this platform", 1),
        ("skipped", "no network", 1),
        ("xfailed", "known bug", 1),
    ]
    assert result["tests"] == []
    # Each group's evidence is its first member's report as the text shows it (ADR 0020): the whole
    # report, as detail='all' lists it, but the traceback's evidence lines and the last captured ones.
    everything = await side.result("execute_tests", {"detail": "all"})
    reports = {(t["node_id"], t["phase"]): t for t in everything["tests"]}
    for group in result["groups"]:
        shown = group["representative"]
        listed = reports[(shown["node_id"], shown["phase"])]
        trimmed = {"traceback": None, "stdout": None, "stderr": None}
        assert without_duration(shown) | trimmed == without_duration(listed) | trimmed
        if listed["traceback"]:
            assert shown["traceback"] == "\n".join(evidence_lines(listed["traceback"], EVIDENCE_LINES))
        for stream in ("stdout", "stderr"):
            if listed[stream]:
                assert shown[stream] == "\n".join(last_lines(listed[stream], CAPTURE_LINES))
    text = result["_text"]
    last = result["groups"][-1]["id"]
    assert f"[{last}] FAILED {OUTCOMES}::test_prints_then_fails ({OUTCOMES}:55); no earlier run\n" in text
    assert "2 skipped (2 reasons):\n  1 not on this platform\n  1 no network" in text


async def test_every_report_carries_its_duration_as_sent_zero_included(side: Side) -> None:
    """A field is on every report or on none: the real runner's reports under 0.5 ms (0.0) and the fake's."""
    everything = await side.wire("execute_tests", {"detail": "all"})
    default = await side.wire("execute_tests", {})
    reports = [*everything["tests"], *(group["representative"] for group in default["groups"])]

    assert len(reports) == 18 + 5  # every report (a teardown error is a second one), and each group's
    assert [report["node_id"] for report in reports if "duration" not in report] == []
    assert all(isinstance(report["duration"], float) for report in reports)


async def test_the_same_scripted_failure_has_the_same_group_id_on_both_sides(monkeypatch: pytest.MonkeyPatch) -> None:
    """A group's id is made of what both sides know: outcome, phase, exception, masked message and crash
    site. Scripted with the crash site the real run names, a failure gets the real run's id."""
    ids = {}
    for name in ("fake", "subprocess"):
        async with open_side(name, monkeypatch) as side:
            result = await side.result("execute_tests", {})
        ids[name] = [(group["id"], group["crash"], group["members"]) for group in result["groups"]]

    assert len(ids["fake"]) == len(GROUPS)
    assert ids["fake"] == ids["subprocess"]


async def test_failures_carry_a_traceback_ending_in_the_exception_and_their_captured_output(side: Side) -> None:
    result = await side.result("execute_tests", {"detail": "all"})

    failing = {t["node_id"]: t for t in result["tests"] if t["outcome"] in ("failed", "error")}
    for test in failing.values():
        last = test["traceback"].splitlines()[-1]
        assert re.fullmatch(rf"{re.escape(OUTCOMES)}:\d+: (AssertionError|RuntimeError|ValueError)", last), last
        assert f"E       {test['message']}" in test["traceback"]
    assert failing[f"{OUTCOMES}::test_prints_then_fails"]["stdout"] == "hello from the test\n"
    assert all(t["traceback"] is None for t in result["tests"] if t["outcome"] not in ("failed", "error"))


async def test_detail_all_lists_every_report_including_a_pass_before_a_teardown_error(side: Side) -> None:
    result = await side.result("execute_tests", {"detail": "all", "node_ids": [OUTCOMES]})

    reports = [(t["node_id"].split("::")[1], t["outcome"], t["phase"]) for t in result["tests"]]
    assert reports == [
        ("test_passes", "passed", "call"),
        ("test_fails", "failed", "call"),
        ("test_skipped_by_marker", "skipped", "setup"),
        ("test_skips_itself", "skipped", "call"),
        ("test_xfails", "xfailed", "call"),
        ("test_xpasses", "xpassed", "call"),
        ("test_setup_errors", "error", "setup"),
        ("test_teardown_errors", "passed", "call"),
        ("test_teardown_errors", "error", "teardown"),
        ("test_prints_then_fails", "failed", "call"),
    ]


async def test_detail_summary_keeps_the_counts_and_lists_no_reports(side: Side) -> None:
    result = await side.result("execute_tests", {"detail": "summary"})

    assert result["tests"] == []
    assert without_duration(result["summary"]) == SUMMARY


async def test_show_capture_off_drops_captured_output(side: Side) -> None:
    result = await side.result(
        "execute_tests", {"node_ids": [f"{OUTCOMES}::test_prints_then_fails"], "show_capture": False}
    )

    assert [(g["representative"]["stdout"], g["representative"]["outcome"]) for g in result["groups"]] == [
        (None, "failed")
    ]
    assert result["command"][1:] == [
        "-m",
        "pytest",
        "--color=no",
        "-q",
        "--show-capture=no",
        "--",
        f"{OUTCOMES}::test_prints_then_fails",
    ]


async def test_maxfail_stops_after_that_many_failures_and_says_so(side: Side) -> None:
    # At verbosity 0 the output outgrows the tail kept (at -q it would all fit). The groups carry the
    # failures by default, with no output tail (ADR 0020); detail='all' keeps the tail.
    result = await side.result("execute_tests", {"maxfail": 1, "verbosity": 0, "detail": "all"})

    assert result["exit_code"] == 1
    assert without_duration(result["summary"]) == {
        **SUMMARY,
        "passed": 2,
        "failed": 1,
        "skipped": 0,
        "xfailed": 0,
        "xpassed": 0,
        "errors": 0,
    }
    assert [signature_row(g)[-1] for g in result["groups"]] == [[f"{OUTCOMES}::test_fails"]]
    # The output is longer than the tail kept, and the failure is listed in `tests`: the tail starts
    # at pytest's short test summary instead of repeating the failure's section.
    assert result["text_output"].startswith("[... ")
    assert terminal_lines(result["text_output"].split("\n", 1)[1], start="") == [
        "= short test summary info",
        "FAILED tests/test_outcomes.py::test_fails - assert 4 == 5",
        "! stopping after 1 failures",
        "= 1 failed, 2 passed in Ns",
    ]
    assert result["command"][1:] == ["-m", "pytest", "--color=no", "--maxfail=1", "--"]


async def test_a_passing_run_is_answered_with_its_exit_code_and_counts_only(side: Side) -> None:
    result = await side.result("execute_tests", {"node_ids": ["tests/sub", SELECTION]})

    assert result["exit_code"] == 0
    assert without_duration(result["summary"]) == {key: 0 for key in SUMMARY} | {
        "total": 8,
        "passed": 8,
        "other_statuses": {},
    }
    assert (result["tests"], result["command"], result["text_output"]) == ([], [], "")
    assert result["_text"] == f"8 passed in {result['summary']['duration']:.2f}s (exit code 0)"


async def test_a_passing_run_with_detail_all_keeps_pytests_progress_and_summary_lines(side: Side) -> None:
    result = await side.result("execute_tests", {"node_ids": ["tests/sub", SELECTION], "detail": "all"})

    assert result["exit_code"] == 0
    assert without_duration(result["summary"]) == {
        **SUMMARY,
        "total": 8,
        "passed": 8,
        "failed": 0,
        "skipped": 0,
        "xfailed": 0,
        "xpassed": 0,
        "errors": 0,
    }
    # When everything passed, only a short tail is kept: the answer's size must not grow with the suite.
    text = result["text_output"]
    assert len(text) <= 240 + len("[... 9,999 characters cut ...]\n")
    assert terminal_lines(text, start="") == [
        "........                                                                 [100%]",
        "8 passed in Ns",
    ]


async def test_the_short_test_summary_is_pytests_trimmed_to_80_columns(side: Side) -> None:
    result = await side.result("execute_tests", {"detail": "all"})

    assert terminal_lines(result["text_output"], start="= short test summary info") == [
        "= short test summary info",
        "FAILED tests/test_outcomes.py::test_fails - assert 4 == 5",
        "FAILED tests/test_outcomes.py::test_prints_then_fails - ValueError: bad value",
        "ERROR tests/test_outcomes.py::test_setup_errors - RuntimeError: setup exploded",
        "ERROR tests/test_outcomes.py::test_teardown_errors - RuntimeError: teardown e...",
        "2 failed, 10 passed, 2 skipped, 1 xfailed, 1 xpassed, 2 errors in Ns",
    ]


async def test_the_failure_sections_are_titled_as_pytest_titles_them(side: Side) -> None:
    result = await side.result("execute_tests", {"node_ids": [OUTCOMES], "detail": "summary"})

    expected = [
        "= ERRORS",
        "_ ERROR at setup of test_setup_errors",
        "_ ERROR at teardown of test_teardown_errors",
        "= FAILURES",
        "_ test_fails",
        "_ test_prints_then_fails",
        "- Captured stdout call",
        "= short test summary info",
    ]
    # text_output keeps only the tail (800 characters when something failed): the titles it
    # does hold must be the last ones pytest printed, in pytest's order. At -q the summary
    # line that ends them is bare.
    lines = [normalized(line) for line in result["text_output"].splitlines()]
    assert lines[-1] == "2 failed, 2 passed, 2 skipped, 1 xfailed, 1 xpassed, 2 errors in Ns"
    titles = [line for line in lines if line[:2] in ("= ", "_ ", "- ")]
    assert len(titles) >= 2
    assert titles == expected[-len(titles) :]


async def test_nothing_selected_exits_5_and_counts_the_deselected(side: Side) -> None:
    result = await side.result("execute_tests", {"keywords": "nothing_matches_this", "detail": "all"})

    assert result["exit_code"] == 5
    assert without_duration(result["summary"]) == {key: 0 for key in SUMMARY} | {"deselected": 17, "other_statuses": {}}
    assert terminal_lines(result["text_output"], start="") == ["", "17 deselected in Ns"]


async def test_discovery_lists_every_test_with_its_file_line_and_markers(side: Side) -> None:
    result = await side.result("discover_tests", {})

    assert result["exit_code"] == 0
    assert result["total"] == 17
    assert [(t["node_id"], t["line"], t["markers"]) for t in result["tests"]][-4:] == [
        (f"{SELECTION}::test_sizes[small]", 19, ["parametrize"]),
        (f"{SELECTION}::test_sizes[Large]", 19, ["parametrize"]),
        (f"{SELECTION}::test_database_query", 24, ["slow", "db"]),
        (f"{SELECTION}::test_database_connect", 30, ["db"]),
    ]
    assert all(t["file"] == t["node_id"].split("::")[0] for t in result["tests"])
    assert result["command"][1:] == ["-m", "pytest", "--color=no", "--collect-only", "-q", "--"]


async def test_discovery_counts_the_collected_tests_by_file_in_collection_order(side: Side) -> None:
    result = await side.result("discover_tests", {})
    narrowed = await side.result("discover_tests", {"keywords": "database or nested"})

    assert result["modules"] == [
        {"file": "tests/sub/test_nested.py", "tests": 1},
        {"file": OUTCOMES, "tests": 9},
        {"file": SELECTION, "tests": 7},
    ]
    assert narrowed["modules"] == [{"file": "tests/sub/test_nested.py", "tests": 1}, {"file": SELECTION, "tests": 2}]


PROGRESS = f"{'.......':<73}[100%]"


@pytest.mark.parametrize(("verbosity", "lines"), [(-1, [PROGRESS, "7 passed in Ns"]), (-2, [PROGRESS])])
async def test_quiet_runs_print_no_header_and_a_bare_summary_line(side: Side, verbosity: int, lines: list[str]) -> None:
    result = await side.result("execute_tests", {"node_ids": [SELECTION], "verbosity": verbosity, "detail": "all"})

    assert [normalized(line) for line in result["text_output"].splitlines()] == lines


async def test_a_failure_whose_text_is_not_source_is_printed_as_it_is(side: Side) -> None:
    edge = "edge/test_edge.py"
    if side.fake:
        # Scripted with the texts pytest reports for them; `<root>` stands for the project's root.
        side.fake.script(
            f"{edge}::test_pytrace_off", "failed", message="Failed: plain words", traceback="plain words", line=11
        )
        side.fake.script(
            f"{edge}::test_missing_fixture",
            "error",
            message=f"<root>/{edge}:15",
            traceback=(
                f"file <root>/{edge}, line 15\n  def test_missing_fixture(nothing_here):\n"
                "E       fixture 'nothing_here' not found\n>       available fixtures: cache\n"
                ">       use 'pytest --fixtures [testpath]' for help on them.\n\n"
                f"<root>/{edge}:15"
            ),
            line=15,
        )

    # One call each: the real fixture error's list of fixtures is long, and a failing run's text is its tail.
    fixture = await side.result("execute_tests", {"node_ids": [f"{edge}::test_missing_fixture"], "detail": "summary"})
    plain = await side.result("execute_tests", {"node_ids": [f"{edge}::test_pytrace_off"], "detail": "summary"})

    lines = terminal_lines(fixture["text_output"], start="_ ERROR at setup")
    assert [line for line in lines if "available fixtures" not in line] == [
        "_ ERROR at setup of test_missing_fixture",
        f"file {CONTRACT_ROOT}/{edge}, line 15",
        "  def test_missing_fixture(nothing_here):",
        "E       fixture 'nothing_here' not found",
        ">       use 'pytest --fixtures [testpath]' for help on them.",
        "",
        f"{CONTRACT_ROOT}/{edge}:15",
        "= short test summary info",
        f"ERROR {edge}::test_missing_fixture",  # a fixture lookup error has no crash line to quote
        "1 error in Ns",
    ]
    assert terminal_lines(plain["text_output"], start="= FAILURES") == [
        "= FAILURES",
        "_ test_pytrace_off",
        "plain words",
        "= short test summary info",
        f"FAILED {edge}::test_pytrace_off - Failed: plain words",
        "1 failed in Ns",
    ]
