"""Failure groups and skip reasons (domain.groups): what a signature masks, what it keeps, how members read."""

from __future__ import annotations

import pytest

from pytest_mcp.domain.groups import (
    MAX_MEMBER_ENTRIES,
    cause_key,
    compress_node_ids,
    failure_groups,
    frames_of,
    masked,
    signature_of,
    skip_reasons,
    symptom_groups,
    with_paged_members,
)
from pytest_mcp.domain.models import Culprit, Outcome, Phase, ReportedTest

CULPRIT = Culprit(
    file="pkg/a.py",
    function="f",
    lines="1-2",
    score=1.0,
    failing=2,
    failing_total=2,
    passing=0,
    passing_total=0,
    changed=True,
)


def report(
    node_id: str,
    message: str | None = "assert 1 == 2",
    *,
    outcome: Outcome = "failed",
    phase: Phase = "call",
    crash: str | None = "tests/test_a.py:5",
    exception: str | None = None,
    traceback: str | None = None,
) -> ReportedTest:
    return ReportedTest(
        node_id=node_id,
        outcome=outcome,
        phase=phase,
        location="tests/test_a.py:3",
        message=message,
        crash=crash,
        exception=exception,
        traceback=traceback,
    )


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("assert 81 == 80", "assert <n> == <n>"),
        ("ValueError: value -3.5e10 rejected", "ValueError: value <n> rejected"),
        ("KeyError: 'GBP'", "KeyError: <str>"),
        ('TypeError: "abc" is not "def"', "TypeError: <str> is not <str>"),
        ("<Cart object at 0x7f3a2b9c10d0> is empty", "<Cart object at <addr>> is empty"),
        ("FileNotFoundError: /tmp/pytest-of-ci/pytest-7/test_x0/data.csv", "FileNotFoundError: <tmp>"),
        ("no file C:\\Users\\ci\\AppData\\Local\\Temp\\x1\\a.txt here", "no file <tmp> here"),
        ("assert 1 == 2\n +  where 1 = f(3)", "assert <n> == <n>"),
        ("test_3 and v2 stay", "test_3 and v2 stay"),  # digits inside a name are not a value
    ],
)
def test_a_signature_masks_the_variable_parts_of_a_message(message: str, expected: str) -> None:
    assert masked(message) == expected


def test_a_parameter_id_in_the_message_is_masked_as_a_whole_word_only() -> None:
    node_id = "tests/test_a.py::test_currency[GBP-retail]"

    assert masked("unknown pair GBP-retail", node_id) == "unknown pair <param>"
    assert masked("unknown pair GBP-retailer", node_id) == "unknown pair GBP-retailer"


def test_one_bug_failing_many_parameters_is_one_group_with_a_range_of_members() -> None:
    reports = [report(f"tests/test_a.py::test_double[{x}]", f"assert {2 * x + 1} == {2 * x}") for x in range(40, 220)]

    (group,) = failure_groups(reports)

    assert group.count == 180
    assert group.members == ("tests/test_a.py::test_double[{40-219}]",)
    assert group.compressed.startswith("integer parameters as ranges in braces")
    assert group.title == "180 tests fail the same way: AssertionError at tests/test_a.py:5"
    assert group.representative == reports[0]
    assert symptom_groups(reports) == {group.id: [test.node_id for test in reports]}
    assert failure_groups(reports, compress=False)[0].members == tuple(test.node_id for test in reports)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"crash": "src/pkg/a.py:10"}, {"crash": "src/pkg/a.py:11"}),  # another line
        ({"exception": "KeyError"}, {"exception": "IndexError"}),  # another exception
        ({"message": "assert x is None"}, {"message": "assert x is not None"}),  # another assertion
        ({"phase": "setup", "outcome": "error"}, {"phase": "teardown", "outcome": "error"}),  # another phase
        ({"outcome": "failed"}, {"outcome": "error"}),
        ({"message": "ValueError: bad unit 'kg'"}, {"message": "ValueError: bad currency 'EUR'"}),
    ],
)
def test_reports_that_differ_in_any_part_of_the_signature_are_never_one_group(
    first: dict[str, str], second: dict[str, str]
) -> None:
    reports = [report("tests/test_a.py::test_one", **first), report("tests/test_a.py::test_two", **second)]  # type: ignore[arg-type]

    assert [group.count for group in failure_groups(reports)] == [1, 1]


def test_without_a_crash_site_the_tests_own_location_keeps_unrelated_failures_apart() -> None:
    one = report("tests/test_a.py::test_one", "boom", crash=None).model_copy(update={"location": "tests/test_a.py:3"})
    two = report("tests/test_b.py::test_two", "boom", crash=None).model_copy(update={"location": "tests/test_b.py:9"})

    assert [signature_of(test).crash for test in (one, two)] == ["tests/test_a.py:3", "tests/test_b.py:9"]
    assert len(failure_groups([one, two])) == 2
    assert [group.crash for group in failure_groups([one, two], compress=False)] == [
        "tests/test_a.py:3",
        "tests/test_b.py:9",
    ]


def test_the_exception_and_crash_site_are_read_from_a_pytest_traceback_when_the_report_does_not_say() -> None:
    traceback = (
        "def test_total():\n>       assert checkout(['3,20']) == 3.2\n\ntests/test_shop.py:12: \n"
        "src/shop.py:5: in checkout\n    return parse(p)\n\n>   return float(text)\nE   ValueError: x\n\n"
        "/usr/lib/python3.11/json/decoder.py:353: ValueError"
    )
    signature = signature_of(report("tests/test_shop.py::test_total", "ValueError: x", crash=None, traceback=traceback))

    assert (signature.exception, signature.crash) == ("ValueError", "src/shop.py:5")


def test_groups_are_largest_first_and_ids_are_stable_and_unique() -> None:
    small = [report("tests/test_a.py::test_x", crash="tests/test_a.py:1")]
    large = [report(f"tests/test_b.py::test_y[{i}]", crash="tests/test_b.py:2") for i in range(3)]

    groups = failure_groups(small + large)
    again = failure_groups(large + small)

    assert [group.count for group in groups] == [3, 1]
    assert [group.id for group in groups] == [group.id for group in again]
    assert len({group.id for group in groups}) == 2
    assert set(symptom_groups(small + large)) == {group.id for group in groups}


def test_a_subtest_member_names_its_subtest_and_a_repeated_node_id_is_listed_once() -> None:
    subtests = [report("tests/test_a.py::test_parity", f"subtest [parity] (i={i}): assert 1 == 0") for i in (1, 3)]
    teardown = [
        report("tests/test_a.py::test_both", "RuntimeError: x", outcome="error", phase="teardown"),
        report("tests/test_a.py::test_both", "RuntimeError: x", outcome="error", phase="teardown"),
    ]

    parity, both = failure_groups(subtests + teardown)

    assert parity.members == (
        "tests/test_a.py::test_parity [parity] (i=1)",
        "tests/test_a.py::test_parity [parity] (i=3)",
    )
    assert parity.exception == "AssertionError"
    assert both.members == ("tests/test_a.py::test_both",)
    assert both.compressed == "a node id reported more than once listed once"


def test_many_members_are_counted_by_module_and_the_answer_says_so() -> None:
    ids = [f"tests/test_m{m}.py::test_{t}" for m in range(20) for t in range(3)]

    members, compressed = compress_node_ids(ids)

    assert len(members) == MAX_MEMBER_ENTRIES
    assert members[0] == "tests/test_m0.py (3 tests)"
    assert (
        members[-1]
        == f"... {3 * (20 - MAX_MEMBER_ENTRIES + 1)} more tests in {20 - MAX_MEMBER_ENTRIES + 1} more modules"
    )
    assert "counted by module" in compressed


def test_node_ids_that_no_pattern_fits_are_listed_as_they_are() -> None:
    ids = ["tests/test_a.py::test_x[a]", "tests/test_a.py::test_x[b]", "tests/test_a.py::test_x[007]"]

    assert compress_node_ids(ids) == (tuple(ids), "")


def test_skips_and_xfails_are_counted_by_their_exact_reason_largest_first() -> None:
    reports = [
        report(f"t.py::test_{i}", "Skipped: needs network", outcome="skipped", phase="setup") for i in range(3)
    ] + [
        report("t.py::test_x", "known bug", outcome="xfailed"),
        report("t.py::test_y", "Skipped: needs python 3.13", outcome="skipped", phase="setup"),
        report("t.py::test_z", "Skipped: needs python 3.12", outcome="skipped", phase="setup"),
    ]

    reasons = [(reason.outcome, reason.reason, reason.count) for reason in skip_reasons(reports)]

    assert reasons == [
        ("skipped", "needs network", 3),
        ("xfailed", "known bug", 1),
        ("skipped", "needs python 3.13", 1),
        ("skipped", "needs python 3.12", 1),
    ]
    assert failure_groups(reports) == ()


def test_a_causes_other_symptoms_give_their_messages_head_its_representative_the_whole() -> None:
    # more-itertools' cause had ten symptoms whose diffs of lists ran to 120 characters each: 2.4 KB.
    long = "AssertionError: Lists differ: [" + ", ".join(["'A'"] * 30) + "] != []"
    reports = [
        report("tests/test_a.py::test_long", long, crash="tests/test_a.py:5"),
        report("tests/test_a.py::test_short", "assert 1 == 2", crash="tests/test_a.py:9"),
    ]
    causes = {signature_of(test).id: CULPRIT for test in reports}

    (group,) = failure_groups(reports, causes, merge={group_id: cause_key(CULPRIT) for group_id in causes})

    heads = {symptom.crash: symptom.message for symptom in group.symptoms}
    assert heads["tests/test_a.py:9"] == "assert <n> == <n>"
    assert len(heads["tests/test_a.py:5"]) == 64
    assert heads["tests/test_a.py:5"].startswith("Lists differ: [<str>, <str>,")  # its exception is a field
    assert heads["tests/test_a.py:5"].endswith("…")
    assert group.representative.message == long  # the representative's is whole


def test_a_symptoms_head_leaves_out_the_exception_it_names_so_the_message_fits() -> None:
    # cssselect: "cssselect.parser.SelectorSyntaxError: " took 38 of the head's 64 characters, and the
    # three symptoms of one raise read alike, cut before what told them apart.
    qualified = "cssselect.parser.SelectorSyntaxError: Expected string or ident, got <STRING '4' at 5>"
    reports = [
        report("tests/test_a.py::test_q", qualified, crash="pkg/a.py:1", exception="SelectorSyntaxError"),
        report("tests/test_a.py::test_v", "ValueError: bad field", crash="pkg/a.py:2", exception="ValueError"),
        report("tests/test_a.py::test_a", "assert 1 == 2", crash="tests/test_a.py:9", exception="AssertionError"),
        report("tests/test_a.py::test_o", "pkg.OtherError: no", crash="pkg/a.py:3", exception="SelectorSyntaxError"),
    ]
    causes = {signature_of(test).id: CULPRIT for test in reports}

    (group,) = failure_groups(reports, causes, merge={group_id: cause_key(CULPRIT) for group_id in causes})

    heads = {symptom.crash: (symptom.exception, symptom.message) for symptom in group.symptoms}
    assert heads == {
        "pkg/a.py:1": ("SelectorSyntaxError", "Expected string or ident, got <STRING <str> at <n>>"),
        "pkg/a.py:2": ("ValueError", "bad field"),
        "tests/test_a.py:9": ("AssertionError", "assert <n> == <n>"),
        "pkg/a.py:3": ("SelectorSyntaxError", "pkg.OtherError: no"),  # another exception's name is the message's
    }
    assert group.representative.message == qualified  # the representative's is whole


def test_a_kept_runs_group_lists_its_first_members_within_120_characters_and_counts_the_rest() -> None:
    names = [f"tests/test_a.py::test_double[{x}]" for x in range(40)] + [
        f"tests/test_b.py::test_{'x' * 55}_{i}" for i in range(5)
    ]
    (group,) = failure_groups([report(name) for name in names])

    paged = with_paged_members(group, names)

    # 431 characters of entries: the range (40 ids) and the first long id fit in 120; the other four are counted.
    assert paged.members == ("tests/test_a.py::test_double[{0-39}]", names[40])
    assert paged.omitted_members == 4
    assert paged.compressed.startswith("integer parameters as ranges in braces")
    # The first entry is listed whatever its length.
    long = [f"tests/test_c.py::test_{'y' * 150}_{i}" for i in range(3)]
    (alone,) = failure_groups([report(name) for name in long])
    assert with_paged_members(alone, long).members == (long[0],)
    assert with_paged_members(alone, long).omitted_members == 2
    # Entries that fit in twice 120 characters are all listed: the call that pages them would cost as much.
    four = [f"tests/test_d.py::test_{'w' * 25}_{i}" for i in range(4)]  # 4 of 49 characters
    (small,) = failure_groups([report(name) for name in four])
    assert with_paged_members(small, four) == small


def test_a_paged_group_still_says_a_node_id_reported_twice_was_listed_once() -> None:
    # A subtest that fails twice under one description (in a loop) is one member name, reported twice.
    subtests = [report(f"tests/test_a.py::test_{'z' * 80}", "subtest [s]: assert 1 == 2") for _ in range(2)] + [
        report(f"tests/test_a.py::test_other_{i}_{'z' * 80}", "assert 1 == 2") for i in range(2)
    ]
    (group,) = failure_groups(subtests)
    names = list(failure_groups(subtests, compress=False)[0].members)

    paged = with_paged_members(group, names)

    assert len(names) == 3
    assert len(paged.members) == 1
    assert paged.omitted_members == 2
    assert paged.compressed == "a node id reported more than once listed once"


def test_a_failures_frames_are_its_project_frames_in_order_and_its_crash_site() -> None:
    traceback = (
        "tests/test_python.py:234: \n"
        "lark/lark.py:612: in open_from_package\n"
        "    return cls(text, **options)\n"
        "/usr/lib/python3.12/ast.py:66: in literal_eval\n"
        ".venv/lib/python3.12/site-packages/regex/regex.py:353: in compile\n"
        "[... 1,467 characters cut by pytest-mcp ...]\n"
        "lark/load_grammar.py:585: in _literal_to_pattern\n"
        "E   lark/fake.py:1: not a frame\n"
        "lark/lark.py:612: in open_from_package\n"
    )
    test = ReportedTest(
        node_id="tests/test_python.py::test_x",
        outcome="failed",
        phase="setup",
        traceback=traceback,
        crash="lark/load_grammar.py:561",
    )

    assert frames_of(test) == (
        "tests/test_python.py:234",
        "lark/lark.py:612",
        "lark/load_grammar.py:585",
        "lark/load_grammar.py:561",
    )
    assert frames_of(ReportedTest(node_id="t.py::t", outcome="failed", phase="call")) == ()
