"""Culprits, causes and labels (issue 38): the same from the fake's script as from a real second pass.

The real side runs a copy of tests/fixtures/culprits in a git repository whose HEAD has
`gross_price` right, with the regression edited in since; the fake plays CULPRITS_SCRIPT with that
edit as `change`. The domain ranks both. The real side may take ten times the run's wall time for its
second pass (the most `--localize` allows), so that no deadline on a busy machine cuts it short.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pytest_mcp.testing import FakeTestRunner, connect
from tests.contract.conftest import Side, plain_pytest_environment, project_with_a_regression
from tests.contract.script import (
    CART,
    CULPRITS_FUNCTIONS,
    CULPRITS_SCRIPT,
    FLAKY,
    NET_PRICE,
    PRICE,
)

pytestmark = pytest.mark.anyio

# Each culprit's evidence over all the run's 5 failing tests that failed again (the flaky one passed):
# 4/sqrt(5 * 4) and 1/sqrt(5 * 2), the same in the list and in the groups.
# A second pass (the suite's Python 3.11) records functions, not lines: no culprit has a most telling line.
GROSS = {"file": "shop/price.py", "function": "gross_price", "lines": "10-11", "line": None, "score": 0.89}
RESERVE = {"file": "shop/stock.py", "function": "reserve", "lines": "4-7", "line": None, "score": 0.32}
GROSS_EVIDENCE = {"failing": 4, "failing_total": 5, "passing": 0, "passing_total": 4}
RESERVE_EVIDENCE = {"failing": 1, "failing_total": 5, "passing": 1, "passing_total": 4}
CAUSE = "gf13040aaaf"
RAISES = "g1651787d19"
FLAKY_GROUP = "ga6c1838a13"
WRONG_VALUE_AT = [  # one message at two assertion sites: one symptom, counted at its sites
    {"count": 4, "exception": "AssertionError", "message": "assert <n> == <n>", "crash": f"{CART}:8", "sites": 2},
]
CAUSE_MEMBERS = [
    f"{CART}::test_cart_total[lines0-24.0]",
    f"{CART}::test_cart_total[lines1-36.0]",
    f"{PRICE}::test_gross_price[10-12.0]",
    f"{PRICE}::test_gross_price[50-60.0]",
]


@pytest.fixture(params=["fake", "subprocess"])
async def culprit_side(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, anyio_backend: str
) -> AsyncIterator[Side]:
    root = project_with_a_regression(tmp_path)
    runner = None
    if request.param == "fake":
        runner = FakeTestRunner.from_dict(CULPRITS_SCRIPT, root=root, functions=CULPRITS_FUNCTIONS)
        # As the real side's interpreter records: a second pass before Python 3.12, the run itself from 3.12.
        runner.script_environment(python_version=platform.python_version())
    else:
        plain_pytest_environment(monkeypatch)
        monkeypatch.setenv("PYTEST_MCP_LOCALIZE", "10")
    async with connect(runner, root=root, python=Path(sys.executable)) as client:
        yield Side(request.param, client, runner, root, memo=False)


def causes(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Each group as the contract compares it: id, title, count, members, symptoms, culprit, labels."""
    return [
        (
            group["id"],
            group["title"],
            group["count"],
            (group["members"], group.get("omitted_members", 0)),
            group.get("symptoms", []),
            group.get("culprit"),
            group["since"],
        )
        for group in result["groups"]
    ]


async def test_one_wrong_value_is_one_cause_with_its_symptoms_and_both_culprits_are_named(culprit_side: Side) -> None:
    result = await culprit_side.result("execute_tests", {})

    gross = (
        GROSS | GROSS_EVIDENCE | {"changed": True, "changed_since": "head", "preexisting": False, "before_tests": False}
    )
    reserve = (
        RESERVE
        | RESERVE_EVIDENCE
        | {"changed": False, "changed_since": None, "preexisting": False, "before_tests": False}
    )
    assert result["culprits"] == [gross, reserve]
    assert causes(result) == [
        (
            CAUSE,
            "4 tests fail from one likely cause, at 2 sites: shop/price.py::gross_price (lines 10-11)",
            4,
            (CAUSE_MEMBERS, 0),  # 192 characters of ids: all listed (within twice 120), none left to page
            WRONG_VALUE_AT,
            gross,
            {"new": 0, "preexisting": 0, "flaky": 0, "unknown": 4, "suspect_flaky": 0},  # the project's first run
        ),
        (
            FLAKY_GROUP,
            "",  # a group of one is its report under an id: no title, no members
            1,
            ([], 0),
            [],
            None,
            {"new": 0, "preexisting": 0, "flaky": 1, "unknown": 0, "suspect_flaky": 0},
        ),
        (
            RAISES,  # a helper that raises is its own group, named by its crash site, with its culprit
            "",
            1,
            ([], 0),
            [],
            reserve,
            {"new": 0, "preexisting": 0, "flaky": 0, "unknown": 1, "suspect_flaky": 0},
        ),
    ]
    # The same tests repeated: the failing ones, then the rest of their modules (test_discounts.py is not one).
    assert (result["localization"]["repeated"], result["localization"].get("reason", "")) == (10, "")


async def test_a_cause_pages_its_member_ids(culprit_side: Side) -> None:
    result = await culprit_side.result("execute_tests", {})

    page = await culprit_side.result("get_test_run", {"run_id": result["run_id"], "group": CAUSE})

    assert page["members"] == CAUSE_MEMBERS
    assert page["page"]["next_offset"] is None


async def test_the_next_identical_run_says_the_failures_were_already_failing_and_the_change_still_comes_first(
    culprit_side: Side,
) -> None:
    await culprit_side.result("execute_tests", {})
    if culprit_side.fake is not None:  # the real test fails only the first time it runs
        culprit_side.fake.script(FLAKY, "passed", line=8, runs=[NET_PRICE])

    result = await culprit_side.result("execute_tests", {})

    # gross_price's tests have not passed since its edit: it is still changed, and still first.
    assert result["culprits"] == [
        GROSS | GROSS_EVIDENCE | {"changed": True, "changed_since": "head", "preexisting": True, "before_tests": False},
        RESERVE
        | RESERVE_EVIDENCE
        | {"changed": False, "changed_since": None, "preexisting": True, "before_tests": False},
    ]
    assert [(group["id"], group["since"]) for group in result["groups"]] == [
        (CAUSE, {"new": 0, "preexisting": 4, "flaky": 0, "unknown": 0, "suspect_flaky": 0}),
        (RAISES, {"new": 0, "preexisting": 1, "flaky": 0, "unknown": 0, "suspect_flaky": 0}),
    ]
    assert result["localization"]["repeated"] == 9
