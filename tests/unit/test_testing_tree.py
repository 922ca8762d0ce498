"""The test double keeps a project's state as a working tree does (issue 43, issue 41 point 9).

`change()` is an edit from the moment it is made, whatever earlier runs saw; `outcomes` play over
successive runs (a flip on the agent's re-run, a fix, a regression); a held run is released by the
agent's own polls. Each run records what a real one records (ADR 0020): its code's digests on every
run, and from Python 3.12 (the fake's default interpreter) the spectrum itself, with no second pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from pytest_mcp.testing import FakeTestRunner, ScriptError, connect

pytestmark = pytest.mark.anyio

GROSS = "shop/price.py::gross_price"
NET = "shop/price.py::net_price"
FILES = ("a", "b", "c")


def three_files() -> FakeTestRunner:
    """gross_price, used by tests in three files (and each file's own helper); net_price by one more test."""
    runner = FakeTestRunner()
    for name in FILES:
        for case in (1, 2):
            runner.script(f"tests/test_{name}.py::test_{case}", runs=[GROSS, f"shop/{name}.py::total"])
    runner.script("tests/test_net.py::test_net", runs=[NET])
    return runner.define(GROSS, "10-11")


def broken(runner: FakeTestRunner) -> FakeTestRunner:
    """The wrong value gross_price now returns, as the tests of the three files see it."""
    for name in FILES:
        for case in (1, 2):
            runner.script(
                f"tests/test_{name}.py::test_{case}",
                "failed",
                message=f"assert {case}3.0 == {case}2.0",
                crash=f"tests/test_{name}.py:{case + 4}",
                runs=[GROSS, f"shop/{name}.py::total"],
            )
    return runner


async def run(client: Client, arguments: dict[str, Any] | None = None, tool: str = "execute_tests") -> dict[str, Any]:
    result = await client.call_tool(tool, arguments or {})
    assert result.structured_content is not None, result.content
    return result.structured_content | {"_text": result.content[0].text}  # type: ignore[union-attr]


async def test_an_edit_after_a_clean_run_is_one_cause_changed_since_that_run(tmp_path: Path) -> None:
    runner = three_files()
    async with connect(runner, root=tmp_path) as client:
        clean = await run(client)
        broken(runner).change(GROSS)  # the edit, made after the session's first run
        answer = await run(client)

    assert clean["exit_code"] == 0
    [culprit] = answer["culprits"]
    assert (culprit["function"], culprit["changed"], culprit["changed_since"]) == ("gross_price", True, "run")
    # The run recorded every test itself: the one passing test counts, nothing ran again.
    assert (culprit["failing"], culprit["failing_total"], culprit["passing_total"]) == (6, 6, 1)
    assert answer["localization"] == {"recorder": "sys.monitoring, in the run", "repeated": 0, "seconds": 0.0}
    [cause] = answer["groups"]
    assert (cause["count"], cause["since"]) == (6, {"new": 6})
    assert "changed since its tests last passed" in answer["_text"]


async def test_an_edit_stays_a_change_until_its_tests_pass_then_a_new_edit_is_one_again(tmp_path: Path) -> None:
    runner = broken(three_files()).change(GROSS)
    async with connect(runner, root=tmp_path) as client:
        first = await run(client)
        again = await run(client)
        for name in FILES:  # the fix: the tests pass again
            for case in (1, 2):
                runner.script(f"tests/test_{name}.py::test_{case}", runs=[GROSS, f"shop/{name}.py::total"])
        runner.change(GROSS)
        await run(client)
        broken(runner).change(GROSS)  # a regression, after the tests passed on the fix
        regression = await run(client)

    assert (first["culprits"][0]["changed_since"], first["groups"][0]["since"]) == ("head", {"unknown": 6})
    assert again["culprits"][0]["changed_since"] == "head", "its tests have not passed since"
    assert again["culprits"][0]["preexisting"] is True
    assert (regression["culprits"][0]["changed_since"], regression["groups"][0]["since"]) == ("run", {"new": 6})


async def test_a_passing_run_names_the_edited_function_no_test_of_it_ran(tmp_path: Path) -> None:
    runner = three_files()
    async with connect(runner, root=tmp_path) as client:
        await run(client)
        runner.change(NET)
        answer = await run(client, {"node_ids": ["tests/test_a.py::test_1"]})

    assert answer["exit_code"] == 0
    assert answer["changed_untested"] == [NET]


async def test_outcomes_play_over_successive_runs_a_flip_a_fix_and_a_regression(tmp_path: Path) -> None:
    runner = FakeTestRunner()
    runner.script("tests/test_x.py::test_flips", outcomes=["failed", "passed"], message="assert 0 == 1")
    runner.script("tests/test_x.py::test_regresses", outcomes=["passed", "passed", "failed"], message="assert 2 == 3")
    runner.script("tests/test_x.py::test_skips_then_fails", outcomes=["skipped", "error"], message="not yet")
    async with connect(runner, root=tmp_path) as client:
        answers = [await run(client) for _ in range(4)]
        rerun = await run(client, {"node_ids": ["tests/test_x.py::test_flips"]})

    def outcomes(answer: dict[str, Any]) -> tuple[int, int, int, int]:
        summary = answer["summary"]
        return tuple(summary.get(outcome, 0) for outcome in ("passed", "failed", "skipped", "errors"))  # type: ignore[return-value]

    assert [outcomes(answer) for answer in answers] == [(1, 1, 1, 0), (2, 0, 0, 1), (1, 1, 0, 1), (1, 1, 0, 1)]
    assert answers[0]["groups"][0]["representative"]["message"] == "assert 0 == 1"
    assert answers[1]["groups"][0]["representative"]["message"] == "RuntimeError: fixture failed"
    assert outcomes(rerun) == (1, 0, 0, 0), "the last outcome repeats"


async def test_a_test_scripted_again_starts_its_outcomes_afresh(tmp_path: Path) -> None:
    runner = FakeTestRunner().script("tests/test_x.py::test_flips", outcomes=["failed", "passed"])
    async with connect(runner, root=tmp_path) as client:
        await run(client)
        runner.script("tests/test_x.py::test_flips", outcomes=["failed", "passed"])
        answer = await run(client)

    assert answer["summary"]["failed"] == 1


async def test_before_python_3_12_a_second_pass_records_and_a_flaky_test_passes_when_it_repeats(
    tmp_path: Path,
) -> None:
    runner = broken(three_files()).script_environment(python_version="3.11.9").change(GROSS)
    runner.script("tests/test_net.py::test_net", "failed", message="assert 1 == 2", runs=[NET], flaky=True)
    async with connect(runner, root=tmp_path) as client:
        answer = await run(client)

    assert answer["localization"]["recorder"] == "sys.setprofile"
    assert answer["localization"]["repeated"] == 7
    assert answer["culprits"][0]["function"] == "gross_price"
    assert [group["since"] for group in answer["groups"]] == [{"unknown": 6}, {"flaky": 1}]


async def test_a_held_run_is_released_by_the_agents_own_polls(tmp_path: Path) -> None:
    runner = broken(three_files()).hold(after=2, polls=2)
    async with connect(runner, root=tmp_path, detach_after=0.05) as client:
        running = await run(client)
        polled = await run(client, {"run_id": running["run_id"], "wait": 0}, tool="get_test_run")
        final = await run(client, {"run_id": running["run_id"], "wait": 5}, tool="get_test_run")

    assert (running["status"], polled["status"]) == ("running", "running")
    assert "status" not in final
    assert final["summary"]["failed"] == 6


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"outcomes": ["failed", "exploded"]}, r"outcomes\[1\]: input should be 'passed', .* \(got 'exploded'\)"),
        ({"outcomes": "failed"}, r"outcomes: must be a list of outcomes, not the string 'failed'"),
        ({"outcome": "failed", "outcomes": ["passed", "failed"]}, r"outcome: 'failed' is not the first of outcomes"),
        ({"outcomes": ["failed", "passed"], "flaky": True, "phase": "call"}, None),
    ],
    ids=["unknown-outcome", "a-string", "outcome-not-first", "fine"],
)
def test_bad_outcomes_are_refused_naming_the_field(fields: dict[str, Any], problem: str | None) -> None:
    runner = FakeTestRunner()
    if problem is None:
        runner.script("tests/test_x.py::test_y", **fields)
        return
    with pytest.raises(ScriptError, match=problem):
        runner.script("tests/test_x.py::test_y", **fields)


def test_a_hold_counts_polls_from_one_on() -> None:
    with pytest.raises(ScriptError, match="polls: must be a number of get_test_run calls, 1 or more"):
        FakeTestRunner().hold(polls=0)


async def test_trace_gives_every_outcome_of_a_played_test_its_functions(tmp_path: Path) -> None:
    runner = FakeTestRunner().script("tests/test_x.py::test_y", outcomes=["passed", "failed"], message="assert 0")
    async with connect(runner, root=tmp_path) as client:
        await run(client)
        runner.trace("tests/test_x.py::test_y", GROSS).define(GROSS, "3-4")
        answer = await run(client)

    assert [culprit["function"] for culprit in answer["culprits"]] == ["gross_price"]


async def test_a_test_that_passed_and_fails_with_nothing_it_runs_changed_is_suspect_flaky(tmp_path: Path) -> None:
    # As a real run labels it (ADR 0020): the fake notes the passing tests and digests the test functions.
    runner = FakeTestRunner()
    runner.script(
        "tests/test_a.py::test_flips", outcomes=["passed", "failed"], message="assert 'off' == 'on'", runs=[GROSS]
    )
    runner.script("tests/test_b.py::test_edited", outcomes=["passed", "failed"], message="assert 1 == 2", runs=[NET])
    async with connect(runner, root=tmp_path) as client:
        await run(client)
        runner.change(NET)  # what test_edited runs changed; nothing test_flips runs did
        answer = await run(client)

    labels = {group["representative"]["node_id"]: group["since"] for group in answer["groups"]}
    assert labels == {"tests/test_a.py::test_flips": {"suspect_flaky": 1}, "tests/test_b.py::test_edited": {"new": 1}}
    assert "is suspect flaky (passed last run; nothing it runs changed)" in answer["_text"]


async def test_a_test_that_starts_a_process_is_never_suspect_flaky(tmp_path: Path) -> None:
    """Its subprocess (a CLI run as a user runs it) may run changed code that no recording shows: a
    failure after a clean run is new, as the real server labels it."""
    runner = FakeTestRunner()
    runner.script(
        "tests/test_cli.py::test_cli", outcomes=["passed", "failed"], message="assert 'b' == 'a'", starts_process=True
    )
    runner.script("tests/test_b.py::test_b", runs=[NET])
    async with connect(runner, root=tmp_path) as client:
        await run(client)
        answer = await run(client)

    assert [group["since"] for group in answer["groups"]] == [{"new": 1}]
    assert "suspect flaky" not in answer["_text"]


WRAP = "lex/lexer.py::Lexer.wrap"


async def test_one_raise_met_in_a_class_set_up_and_in_calls_is_one_cause_with_every_failure(tmp_path: Path) -> None:
    """lark, in the double: a grammar helper raises. A class loads the grammar in its set-up, so its first
    test errors there and pytest re-raises the error for its other tests, which enter nothing; other tests
    meet the same raise in their call. One cause, one group: the set-up's re-raised errors count the
    helper their traceback shows running, and the same raise at the same line is one failure, set-up
    or call."""
    runner = FakeTestRunner()
    message = "lex.errors.GrammarError: bad literal"
    site = "lex/lexer.py:20"
    runner.script("tests/test_py.py::TestPy::test_a", "error", message, phase="setup", crash=site, runs=[WRAP])
    for name in ("b", "c", "d"):
        runner.script(f"tests/test_py.py::TestPy::test_{name}", "error", message, phase="setup", crash=site)
    for name in ("e", "f"):
        runner.script(f"tests/test_quote.py::test_{name}", "failed", message, crash=site, runs=[WRAP])
    for n in range(40):
        runner.script(f"tests/test_ok.py::test_{n}", runs=[WRAP])
    runner.script("tests/test_ok.py::test_other", runs=["lex/other.py::helper"])
    runner.define(WRAP, "10-30")

    async with connect(runner, root=tmp_path) as client:
        answer = await run(client)

    assert answer["culprits"][0]["function"] == "Lexer.wrap"
    assert (answer["culprits"][0]["failing"], answer["culprits"][0]["failing_total"]) == (6, 6)
    assert [group["count"] for group in answer["groups"]] == [6]
    assert answer["groups"][0]["culprit"]["function"] == "Lexer.wrap"


async def test_two_lines_raising_in_the_cause_keep_their_groups(tmp_path: Path) -> None:
    """A cause raising at two of its lines fails in two ways of its own: each keeps its group (set-up or
    call), both naming the cause, and its wrong values keep theirs. Only one raise (a line and an
    exception) is one."""
    runner = FakeTestRunner()
    for name in ("a", "b"):
        runner.script(
            f"tests/test_py.py::test_{name}",
            "error",
            "lex.errors.LexError: bad literal",
            phase="setup",
            crash="lex/lexer.py:20",
            runs=[WRAP],
        )
    for name in ("c", "d"):
        runner.script(
            f"tests/test_py.py::test_{name}",
            "failed",
            "lex.errors.LexError: unexpected end",
            crash="lex/lexer.py:24",
            runs=[WRAP],
        )
    for name in ("e", "f", "g"):  # and a wrong value, which sits under neither way of raising
        runner.script(f"tests/test_quote.py::test_{name}", "failed", "assert 'a' == 'b'", runs=[WRAP])
    for n in range(40):
        runner.script(f"tests/test_ok.py::test_{n}", runs=[WRAP])
    runner.define(WRAP, "10-30")

    async with connect(runner, root=tmp_path) as client:
        answer = await run(client)

    assert sorted(group["count"] for group in answer["groups"]) == [2, 2, 3]
    assert {group["culprit"]["function"] for group in answer["groups"]} == {"Lexer.wrap"}


async def test_one_raise_whose_message_tells_its_input_is_one_way_to_fail(tmp_path: Path) -> None:
    """cssselect: the broken attribute parser raises at one line, its message naming the token it
    choked on. Messages that differ only in what they quote are still one raise: one cause, one group,
    a symptom line per message, beside the wrong values it causes."""
    runner = FakeTestRunner()
    tokens = {"a": "'4'", "b": "'4'", "c": "'4'", "d": "'''", "e": "''\"''"}  # as its tokens print themselves
    for name, token in tokens.items():
        runner.script(
            f"tests/test_select.py::test_{name}",
            "failed",
            f"lex.errors.SelectorSyntaxError: Expected string or ident, got <STRING {token} at 5>",
            crash="lex/lexer.py:20",
            runs=[WRAP],
        )
    for name in ("f", "g"):
        runner.script(f"tests/test_quote.py::test_{name}", "failed", "assert 'a' == 'b'", runs=[WRAP])
    for n in range(40):
        runner.script(f"tests/test_ok.py::test_{n}", runs=[WRAP] if n < 4 else ["lex/other.py::helper"])
    runner.define(WRAP, "10-30")

    async with connect(runner, root=tmp_path) as client:
        answer = await run(client)

    (group,) = answer["groups"]
    assert (group["count"], group["culprit"]["function"]) == (7, "Lexer.wrap")
    assert sum(symptom["count"] for symptom in group["symptoms"]) == 7
    assert len(group["symptoms"]) >= 2


async def test_the_one_way_a_cause_raises_sits_under_it_with_its_wrong_values(tmp_path: Path) -> None:
    """wsproto: the broken close handler raises for some payloads and answers a wrong close code for
    others. One cause, one group: the raise inside its lines is one of its symptoms, as the wrong values
    asserted in the tests are, since it raises in only one way."""
    runner = FakeTestRunner()
    for name in ("a", "b", "c"):
        runner.script(
            f"tests/test_frames.py::test_{name}",
            "failed",
            "lex.errors.ParseFailed: bad code",
            crash="lex/lexer.py:20",
            runs=[WRAP],
        )
    for name in ("d", "e"):
        runner.script(
            f"tests/test_close.py::test_{name}",
            "failed",
            "AssertionError: assert 1002 == 1000",
            crash="tests/test_close.py:9",
            runs=[WRAP],
        )
    for n in range(40):
        runner.script(f"tests/test_ok.py::test_{n}", runs=[WRAP] if n < 4 else ["lex/other.py::helper"])
    runner.define(WRAP, "10-30")

    async with connect(runner, root=tmp_path) as client:
        answer = await run(client)

    (group,) = answer["groups"]
    assert (group["count"], group["culprit"]["function"]) == (5, "Lexer.wrap")
    assert sorted((symptom["count"], symptom["crash"]) for symptom in group["symptoms"]) == [
        (2, "tests/test_close.py:9"),
        (3, "lex/lexer.py:20"),
    ]


LOOKUP = "emo/names.py::by_name"
TABLE = "emo/table.py::rows"


def cached_lookup() -> FakeTestRunner:
    """emoji, in the double: the name lookup is behind a cache. The first test to ask for a name enters it;
    the later ones get the cache's answer and enter nothing of it, only the table they compare with."""
    runner = FakeTestRunner()
    runner.script("tests/test_core.py::test_first", runs=[LOOKUP, TABLE])
    for name in ("alias", "name", "english"):
        runner.script(f"tests/test_codes.py::test_{name}", runs=[TABLE])
    for n in range(30):
        runner.script(f"tests/test_ok.py::test_{n}", runs=[TABLE])
    return runner.define(LOOKUP, "26-48").define(TABLE, "5-9").cache(LOOKUP)


async def test_failures_a_cache_answered_name_the_changed_cached_function(tmp_path: Path) -> None:
    runner = cached_lookup()
    async with connect(runner, root=tmp_path) as client:
        clean = await run(client)
        runner.change(LOOKUP)
        runner.script("tests/test_core.py::test_first", "failed", "assert None == 'x'", runs=[LOOKUP, TABLE])
        for name in ("alias", "name", "english"):
            runner.script(
                f"tests/test_codes.py::test_{name}",
                "failed",
                f"assert None == '{name}'",
                runs=[TABLE],
                crash=f"tests/test_codes.py:{len(name)}",
            )
        broken = await run(client)

    assert clean["exit_code"] == 0
    assert [(c["function"], c["failing"], c["changed"]) for c in broken["culprits"]] == [("by_name", 4, True)]
    assert [group["culprit"]["function"] for group in broken["groups"]] == ["by_name"]


def test_a_recording_keeps_which_functions_are_behind_a_cache() -> None:
    document = cached_lookup().to_recording()
    again = FakeTestRunner.from_recording(document)

    assert document["functions"][LOOKUP] == {"lines": "26-48", "cached": True}
    assert again.to_recording()["functions"] == document["functions"]
    with pytest.raises(ScriptError, match=r"functions\['emo/names.py::by_name'\]\.cached: must be true or false"):
        FakeTestRunner.from_dict({"tests/t.py::test_a": {"runs": [LOOKUP]}}, functions={LOOKUP: {"cached": "yes"}})


RENDER = "conv/render.py::numbering"


async def test_failures_of_tests_through_a_process_name_the_changed_function(tmp_path: Path) -> None:
    """html2text, in the double: the same wrong output fails the tests that convert in process and those
    that run the command line in a subprocess, which the run cannot record. Having entered no changed
    code, the latter met the change in the process: one cause, one group."""
    runner = FakeTestRunner()
    for name in ("lists", "nested"):
        runner.script(f"tests/test_module.py::test_{name}", runs=[RENDER])
        runner.script(f"tests/test_command.py::test_{name}", starts_process=True)
    for n in range(20):
        runner.script(f"tests/test_ok.py::test_{n}", runs=[RENDER] if n < 2 else ["conv/other.py::helper"])
    runner.define(RENDER, "175-190")
    async with connect(runner, root=tmp_path) as client:
        clean = await run(client)
        runner.change(RENDER)
        for name in ("lists", "nested"):
            wrong = {"message": f"assert '1. {name}' == '2. {name}'", "outcome": "failed"}
            runner.script(f"tests/test_module.py::test_{name}", **wrong, crash="tests/test_module.py:9", runs=[RENDER])
            runner.script(
                f"tests/test_command.py::test_{name}", **wrong, crash="tests/test_command.py:14", starts_process=True
            )
        broken = await run(client)

    assert clean["exit_code"] == 0
    assert [(c["function"], c["failing"], c["changed"]) for c in broken["culprits"]] == [("numbering", 4, True)]
    (group,) = broken["groups"]
    assert group["count"] == 4


COMPARE = "shop/version.py::compare"
NEWEST = "shop/version.py::newest"


def versions(*, lines: bool) -> FakeTestRunner:
    """tests/integration/test_run_spectrum.py's version project as the fake plays it: `compare` swaps two
    pre-releases' order in its line 12, which only the two failing tests run; every passing test enters it."""

    def ran(function: str, *numbers: int) -> list[str]:
        return [f"{function}:{number}" for number in numbers] if lines else [function]

    runner = FakeTestRunner()
    for case in range(6):  # three of them compare equal numbers, and so run lines 10 and 11
        compared = (7, 8, 10, 11) if case in (2, 3, 4) else (7, 8, 9)
        runner.script(f"tests/test_version.py::test_compare[{case}]", runs=ran(COMPARE, *compared))
    runner.script("tests/test_version.py::test_newest", runs=[*ran(NEWEST, 16, 17), *ran(COMPARE, 7, 8, 9)])
    for case in range(2):
        runner.script(
            f"tests/test_version.py::test_newest_prerelease[{case}]",
            "failed",
            message="AssertionError: assert '1.0-a' == '1.0-b'",
            runs=[*ran(NEWEST, 16, 17), *ran(COMPARE, 7, 8, 10, 12)],
        )
    return runner.define(COMPARE, "6-12").define(NEWEST, "15-20")


async def test_the_fake_ranks_a_function_by_its_most_telling_line_as_a_real_run_does() -> None:
    """The same facts as the real run's (tests/integration/test_run_spectrum.py), the same culprit: `compare`,
    its line 12, run by both failing tests and no passing one. Scripted without lines, the sorter wins."""
    async with connect(versions(lines=True), root=Path.cwd()) as client:
        answer = await run(client)
    top = answer["culprits"][0]
    assert (top["function"], top["line"], top["failing"], top["passing"], top["score"]) == ("compare", 12, 2, 0, 1.0)

    async with connect(versions(lines=False), root=Path.cwd()) as client:
        answer = await run(client)
    assert answer["culprits"][0]["function"] == "newest"
    assert "line" not in answer["culprits"][0]


def test_a_line_in_runs_must_be_a_function_key_and_a_line_from_1() -> None:
    runner = FakeTestRunner()
    with pytest.raises(ScriptError, match=r"runs: \[0\] 'shop/version.py::compare:0' is not a function's key"):
        runner.script("tests/test_version.py::test_a", runs=[f"{COMPARE}:0"])
    runner.script("tests/test_version.py::test_a", runs=[f"{COMPARE}:7", f"{COMPARE}:8"])
    assert runner.tests[0].functions == (COMPARE,)
    assert runner.tests[0].lines == ((COMPARE, 7), (COMPARE, 8))
