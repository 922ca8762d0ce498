"""The test double's second pass (issue 38): scripted functions, changes and flaky tests name culprits.

The pass is what a run on Python 3.11 and earlier gets (ADR 0020): `shop()` scripts such an interpreter.
From 3.12 the run records itself (tests/unit/test_testing_tree.py)."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest
from mcp_types import CallToolResult

from pytest_mcp.domain.localization import Spectrum
from pytest_mcp.domain.runs import LocalizeSpec, RunSpec
from pytest_mcp.testing import FakeTestRunner, ScriptError, connect

pytestmark = pytest.mark.anyio

GROSS = "shop/price.py::gross_price"
NET = "shop/price.py::net_price"
TOTAL = "shop/cart.py::Cart.total"
PRICE_10 = "tests/test_price.py::test_gross[10]"
PRICE_20 = "tests/test_price.py::test_gross[20]"
NET_TEST = "tests/test_price.py::test_net"
CART = "tests/test_cart.py::test_total"
EMPTY = "tests/test_cart.py::test_empty"
ELSEWHERE = "tests/test_other.py::test_other"
RATES = "shop/rates.py::Rates.__init__"


def shop() -> FakeTestRunner:
    """A wrong gross price that fails tests in two files, at two assertion sites, on Python 3.11."""
    runner = FakeTestRunner().script_environment(python_version="3.11.9")
    for node_id, got in ((PRICE_10, "13.0 == 12.0"), (PRICE_20, "25.0 == 24.0")):
        runner.script(node_id, "failed", message=f"assert {got}", line=4, runs=[GROSS])
    runner.script(NET_TEST, line=8, runs=[NET])
    runner.script(CART, "failed", message="assert 26.0 == 24.0", line=3, runs=[TOTAL, GROSS])
    runner.script(EMPTY, line=7, runs=[TOTAL])
    runner.script(ELSEWHERE, runs=[NET])
    return runner.define(GROSS, "10-11")


def localize(*failing: str, others: int = 50, **run: Any) -> LocalizeSpec:
    modules = tuple(dict.fromkeys(node_id.split("::")[0] for node_id in failing))
    return LocalizeSpec(run=RunSpec(**run), failing=failing, modules=modules, others=others, seconds=5.0)


async def structured(call: Awaitable[CallToolResult]) -> dict[str, Any]:
    result = await call
    assert result.structured_content is not None, result.content
    return result.structured_content


async def answer(runner: FakeTestRunner, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    async with connect(runner, root=Path.cwd()) as client:
        return await structured(client.call_tool("execute_tests", arguments or {}))


async def test_the_pass_repeats_the_failing_tests_first_then_the_rest_of_their_modules() -> None:
    spectrum = await shop().localize(localize(CART, PRICE_10, PRICE_20))

    assert isinstance(spectrum, Spectrum)
    traces = [
        (trace.node_id, trace.outcome, [spectrum.functions[i].key for i in trace.functions]) for trace in spectrum.tests
    ]
    assert traces == [
        (CART, "failed", [TOTAL, GROSS]),
        (PRICE_10, "failed", [GROSS]),
        (PRICE_20, "failed", [GROSS]),
        (EMPTY, "passed", [TOTAL]),
        (NET_TEST, "passed", [NET]),
    ]  # not tests/test_other.py: no test of it failed
    assert (spectrum.recorder, spectrum.stopped, spectrum.test_modules) == (
        "sys.setprofile",
        None,
        ("tests/test_cart.py", "tests/test_price.py"),
    )
    gross = spectrum.functions[1]
    assert (gross.lines, gross.at_head, gross.digest == gross.head) == ("10-11", True, True)
    assert spectrum.functions[0].lines == "1"  # not defined: line 1


async def test_the_pass_runs_only_its_count_of_other_tests_as_the_real_one_does() -> None:
    spectrum = await shop().localize(localize(CART, PRICE_10, PRICE_20, others=1))

    assert isinstance(spectrum, Spectrum)
    assert [trace.node_id for trace in spectrum.tests] == [CART, PRICE_10, PRICE_20, EMPTY]
    assert spectrum.stopped is None, "a count is the plan, not a stop"


async def test_the_pass_counts_a_share_of_every_test_the_run_ran_not_only_of_those_the_answer_lists() -> None:
    # Passing tests are listed only with detail "all": the count is half the summary's 121 tests.
    runner = FakeTestRunner().script_environment(python_version="3.11.9")
    runner.script("tests/test_many.py::test_fails", "failed", message="assert 1 == 2", runs=[GROSS])
    for i in range(120):
        runner.script(f"tests/test_many.py::test_{i:03}", runs=[NET])

    result = await answer(runner)

    assert result["localization"]["repeated"] == 1 + 61


async def test_the_pass_keeps_the_runs_keywords_and_markers() -> None:
    spectrum = await shop().localize(localize(PRICE_10, keywords="gross"))

    assert isinstance(spectrum, Spectrum)
    assert [trace.node_id for trace in spectrum.tests] == [PRICE_10, PRICE_20]


async def test_one_wrong_value_is_one_cause_named_by_its_culprit_with_a_symptom_per_assertion_site() -> None:
    result = await answer(shop())

    culprit = {
        "file": "shop/price.py",
        "function": "gross_price",
        "lines": "10-11",
        "score": 1.0,
        "failing": 3,
        "failing_total": 3,
        "passing": 0,
        "passing_total": 2,
        "changed": False,
    }
    assert result["culprits"] == [culprit]
    [cause] = result["groups"]
    assert cause["title"] == "3 tests fail from one likely cause, at 2 sites: shop/price.py::gross_price (lines 10-11)"
    assert cause["culprit"] == culprit
    # One masked message at two assertion sites: one symptom, its first site, and the count of sites.
    assert [(s["count"], s["crash"], s["sites"]) for s in cause["symptoms"]] == [(3, "tests/test_price.py:4", 2)]
    assert cause["since"] == {"unknown": 3}, "the project's first run: nothing is known of before"
    assert result["localization"] == {"recorder": "sys.setprofile", "repeated": 5, "seconds": 0.0}


async def test_a_changed_function_stays_changed_until_its_tests_pass_and_comes_first() -> None:
    runner = shop().change(TOTAL)  # the cart's total changed, though the wrong value is gross_price's

    async with connect(runner, root=Path.cwd()) as client:
        first = await structured(client.call_tool("execute_tests", {"node_ids": [CART]}))
        second = await structured(client.call_tool("execute_tests", {"node_ids": [CART]}))
        runner.change(TOTAL)
        third = await structured(client.call_tool("execute_tests", {"node_ids": [CART]}))

    assert [(c["function"], c["changed"]) for c in first["culprits"]] == [("Cart.total", True)]
    # Its failing test has not passed since the edit: the edit is still the first suspect.
    assert [(c["function"], c["changed"]) for c in second["culprits"]] == [("Cart.total", True)]
    assert [(c["function"], c["changed"]) for c in third["culprits"]] == [("Cart.total", True)]
    assert [group["since"] for group in second["groups"]] == [{"preexisting": 1}]  # zeros left out


async def test_a_flaky_test_passes_when_repeated_and_its_group_says_so() -> None:
    runner = shop().script(CART, "failed", message="assert 26.0 == 24.0", line=3, runs=[TOTAL, GROSS], flaky=True)

    spectrum = await runner.localize(localize(CART))
    result = await answer(runner, {"node_ids": [CART]})

    assert isinstance(spectrum, Spectrum)
    assert [(trace.node_id, trace.outcome) for trace in spectrum.tests] == [(CART, "passed"), (EMPTY, "passed")]
    assert result["groups"][0]["since"] == {"flaky": 1}
    assert result.get("culprits", []) == []
    assert result["localization"]["reason"] == "no failure was repeated"


async def test_without_scripted_functions_the_reason_says_how_to_script_them() -> None:
    runner = FakeTestRunner().script("tests/test_a.py::test_x", "failed", message="assert 1 == 2")

    result = await answer(runner)

    assert result.get("culprits", []) == []
    assert result["localization"]["reason"] == (
        "the fake runner was told no function a test runs: script(..., runs=['shop/price.py::gross_price']) "
        "or trace(node_id, 'shop/price.py::gross_price') scripts them"
    )


async def test_trace_gives_a_test_from_a_script_or_a_recording_its_functions() -> None:
    runner = FakeTestRunner.from_dict({CART: {"outcome": "failed", "line": 3}, EMPTY: "passed"})
    runner.trace(CART, TOTAL, GROSS).trace(EMPTY, TOTAL)

    result = await answer(runner)

    assert [c["function"] for c in result["culprits"]] == ["gross_price"]
    assert runner.trace(EMPTY).tests[1].runs == ()


async def test_a_pass_slower_than_its_safety_stops_there_and_the_note_says_so() -> None:
    runner = shop()
    for node_id in (EMPTY, NET_TEST, "tests/test_price.py::test_net_of_zero"):
        runner.script(node_id, duration=3.0, runs=[NET])

    spectrum = await runner.localize(localize(CART, PRICE_10, PRICE_20))  # a 5 s safety
    result = await answer(runner)

    assert isinstance(spectrum, Spectrum)
    # As the real pass: NET_TEST starts at 3 s (before the last quarter), is under way at the 5 s
    # safety and is killed with the pass, unrecorded.
    assert [trace.node_id for trace in spectrum.tests] == [CART, PRICE_10, PRICE_20, EMPTY]
    assert (spectrum.stopped, spectrum.seconds) == ("stopped before it finished", 5.0)
    # Through the server the run took 9.25 s (0.25 s of start-up): the pass's share is half of it, its
    # safety four times that share, 18.5 s. Slow tests change nothing of what it records: all six.
    assert result["localization"]["repeated"] == 6
    assert "time limit" not in result["localization"].get("reason", "")


async def test_no_test_starts_in_the_pass_budgets_last_quarter() -> None:
    runner = shop()
    for node_id in (EMPTY, NET_TEST, "tests/test_price.py::test_net_of_zero"):
        runner.script(node_id, duration=1.0, runs=[NET])

    spectrum = await runner.localize(localize(CART, PRICE_10, PRICE_20))  # 5 s: none starts after 3.75 s

    assert isinstance(spectrum, Spectrum)
    assert [trace.node_id for trace in spectrum.tests][3:] == [EMPTY, NET_TEST, "tests/test_price.py::test_net_of_zero"]
    assert spectrum.stopped is None  # three 1 s tests end at 3 s, before the last quarter
    runner.script(NET_TEST, line=8, duration=2.9, runs=[NET])
    runner.script("tests/test_price.py::test_net_of_zero", duration=0.5, runs=[NET])
    again = await runner.localize(localize(CART, PRICE_10, PRICE_20))
    assert isinstance(again, Spectrum)
    # NET_TEST ends at 3.9 s: the last test would end at 4.4 s, within the budget, but does not start.
    assert (len(again.tests), again.stopped, again.seconds) == (5, "deadline", 3.9)


async def test_a_test_that_hangs_or_crashes_stops_the_pass_where_it_would() -> None:
    hangs = shop().fail_with("timeout", node_id=EMPTY)
    crashes_first = shop().fail_with("crash", node_id=CART)

    stopped = await hangs.localize(localize(CART))
    nothing = await crashes_first.localize(localize(CART))

    assert isinstance(stopped, Spectrum)
    assert ([trace.node_id for trace in stopped.tests], stopped.stopped) == ([CART], "stopped before it finished")
    assert nothing == "the second pass ended with exit code -11 before a test was repeated"


async def test_runs_flaky_and_functions_round_trip_through_a_recording_and_a_script(tmp_path: Path) -> None:
    runner = shop().change(GROSS).script(CART, "failed", line=3, runs=[TOTAL, GROSS], flaky=True)
    runner.run_at_import(RATES).define(RATES, "2-3")
    path = tmp_path / "run.json"
    path.write_text(json.dumps(runner.to_recording()))

    replayed = FakeTestRunner.from_recording(path)
    scripted = FakeTestRunner.from_dict(
        {test.node_id: test.model_dump(exclude={"node_id"}) for test in runner.tests},
        functions=runner.to_recording()["functions"],
    )

    assert runner.to_recording()["functions"] == {
        GROSS: {"lines": "10-11", "changed": True},
        RATES: {"lines": "2-3", "at_import": True},
    }
    for other in (replayed, scripted):
        assert other.tests == runner.tests
        assert other.to_recording() == runner.to_recording()


@pytest.mark.parametrize(
    ("script", "problem"),
    [
        (
            lambda r: r.script(CART, runs=GROSS),
            r"invalid test .*: runs: must be a list of function keys, not the string",
        ),
        (lambda r: r.script(CART, runs=["price.gross"]), r"runs: \[0\] 'price.gross' is not a function's key"),
        (lambda r: r.script(CART, "passed", flaky=True), r"flaky: only a failing test .* passes when repeated"),
        (
            lambda r: r.trace("tests/test_x.py::test_y", GROSS),
            r"node_id: 'tests/test_x.py::test_y' is not a scripted test",
        ),
        (lambda r: r.trace(CART, "/abs/price.py::f"), r"functions\[0\]: '/abs/price.py::f' is not a function's key"),
        (lambda r: r.define("shop/tax.py::vat", "1-2"), r"function: no scripted test runs 'shop/tax.py::vat'"),
        (lambda r: r.define(GROSS, "11-10"), r"lines: '11-10' is not a range of lines from 1 on"),
        (lambda r: r.define(GROSS, "ten"), r"lines: 'ten' is not a line range like '12-19'"),
        (lambda r: r.change(GROSS, "shop/tax.py::vat"), r"functions\[1\]: no scripted test runs 'shop/tax.py::vat'"),
        (lambda r: r.run_at_import(RATES, "rates.Rates"), r"functions\[1\]: 'rates.Rates' is not a function's key"),
    ],
    ids=[
        "runs-string",
        "runs-key",
        "flaky-pass",
        "trace-node",
        "trace-key",
        "define-unknown",
        "lines-order",
        "lines-text",
        "change",
        "at-import-key",
    ],
)
def test_bad_scripting_is_refused_naming_the_argument(script: Any, problem: str) -> None:
    with pytest.raises(ScriptError, match=problem):
        script(shop())


def test_bad_functions_in_a_script_or_a_recording_are_refused_naming_the_field() -> None:
    with pytest.raises(ScriptError) as caught:
        FakeTestRunner.from_dict(
            {CART: {"outcome": "failed", "runs": [GROSS]}},
            functions={
                GROSS: {"lines": 0, "changed": "yes"},
                "shop/tax.py::vat": {},
                NET: {"line": 3},
                TOTAL: {"at_import": "yes"},
            },
        )
    document = shop().to_recording() | {"functions": [GROSS]}
    with pytest.raises(ScriptError, match=r"recording: functions: must be an object of function key to its fields"):
        FakeTestRunner.from_recording(document)

    message = str(caught.value)
    assert f"functions[{GROSS!r}].lines: 0 is not a range of lines from 1 on" in message
    assert "functions['shop/tax.py::vat']: no scripted test runs 'shop/tax.py::vat'" in message
    assert f"functions[{NET!r}].line: unknown field; the fields are lines, changed, at_import" in message
    assert f"functions[{TOTAL!r}].at_import: must be true or false, not 'yes'" in message


async def test_a_function_whose_own_doctest_fails_is_still_blamed() -> None:
    doctest = "shop/price.py::shop.price.gross_price"
    runner = shop()
    runner.script(doctest, "failed", message="Expected: 12.0 Got: 13.0", line=9, runs=[GROSS])

    spectrum = await runner.localize(localize(doctest, CART, PRICE_10, PRICE_20))
    result = await answer(runner)

    assert isinstance(spectrum, Spectrum)
    assert spectrum.test_modules == ("tests/test_cart.py", "tests/test_price.py")  # not shop/price.py
    assert [culprit["function"] for culprit in result["culprits"]][:1] == ["gross_price"]


async def test_the_culprit_of_new_failures_comes_before_one_whose_failures_were_already_there() -> None:
    runner = FakeTestRunner()
    runner.script(PRICE_10, "failed", message="assert 13.0 == 12.0", line=4, runs=[GROSS])
    runner.script(PRICE_20, "failed", message="assert 25.0 == 24.0", line=4, runs=[GROSS])
    runner.script(NET_TEST, line=8, runs=[NET])
    runner.script(ELSEWHERE, runs=[NET])

    async with connect(runner, root=Path.cwd()) as client:
        await structured(client.call_tool("execute_tests", {}))  # gross_price's two failures, first seen
        runner.script(NET_TEST, "failed", message="assert 9.0 == 10.0", line=8, runs=[NET])
        result = await structured(client.call_tool("execute_tests", {}))
        text = (await client.call_tool("execute_tests", {})).content[0].text  # type: ignore[union-attr]

    # net_price's failure is the agent's own; gross_price's were there before, more numerous as they are.
    assert [(c["function"], c.get("preexisting", False)) for c in result["culprits"]] == [
        ("net_price", False),
        ("gross_price", True),
    ]
    assert "; its failures were already failing" in text


PARSE = "shop/parse.py::parse_price"


async def test_one_cause_under_a_dozen_symptoms_is_one_group_of_one_line_each_within_4_kb() -> None:
    runner = FakeTestRunner()
    fields = ["name", "sku", "price", "tax", "unit", "size", "color", "brand", "stock", "weight", "origin", "code"]
    for site, field in enumerate(fields):  # twelve helpers, each raising its own error, all behind one parser
        helper = f"shop/h{site}.py::render"
        for n in range(3):
            runner.script(
                f"tests/test_h{site}.py::test_{n}",
                "failed",
                message=f"ValueError: bad {field}",
                crash=f"shop/h{site}.py:{site + 3}",
                runs=[PARSE, helper],
            )
        runner.script(f"tests/test_h{site}.py::test_ok", runs=[helper])
    for n in range(4):  # and a wrong value asserted in the tests
        runner.script(f"tests/test_parse.py::test_{n}", "failed", message=f"assert {n}.5 == {n}.0", runs=[PARSE])
    runner.define(PARSE, "3-9").change(PARSE)

    async with connect(runner, root=Path.cwd()) as client:
        called = await client.call_tool("execute_tests", {})
    result = called.structured_content
    assert result is not None

    [cause] = result["groups"]
    assert cause["culprit"]["function"] == "parse_price"
    assert cause["count"] == 40
    assert len(cause["symptoms"]) == 6, "at most six symptoms, one line each; the title counts every site"
    assert cause["omitted_symptoms"] == 7, "the rarer ways are counted"
    assert sum(symptom["count"] for symptom in cause["symptoms"]) == 4 + 5 * 3
    assert "    ... 7 rarer ways, 21 tests: the group's members page them\n" in called.content[0].text  # type: ignore[union-attr]
    assert "at 13 sites" in cause["title"]
    assert len(json.dumps(cause)) <= 4096
    assert len(called.content[0].text) <= 4096  # type: ignore[union-attr]
