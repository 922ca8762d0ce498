"""Selection by node id, keyword (-k) and marker (-m): the fake selects exactly what pytest selects."""

from __future__ import annotations

from typing import Any

import pytest

from tests.contract.conftest import Side
from tests.contract.script import ALL_TESTS, OUTCOMES, SELECTION

pytestmark = pytest.mark.anyio

NESTED = "tests/sub/test_nested.py::test_in_a_subdirectory"
TOTAL = f"{SELECTION}::TestCart::test_total"
CHECKOUT = f"{SELECTION}::TestCart::test_checkout"
PERCENT = f"{SELECTION}::TestCart::TestDiscounts::test_percent"
SMALL = f"{SELECTION}::test_sizes[small]"
LARGE = f"{SELECTION}::test_sizes[Large]"
QUERY = f"{SELECTION}::test_database_query"
CONNECT = f"{SELECTION}::test_database_connect"
IN_SELECTION = [TOTAL, CHECKOUT, PERCENT, SMALL, LARGE, QUERY, CONNECT]
IN_OUTCOMES = [test for test in ALL_TESTS if test.startswith(OUTCOMES)]


def node_ids_of_run(result: dict[str, Any]) -> list[str]:
    seen: list[str] = []
    for test in result["tests"]:
        if test["node_id"] not in seen:
            seen.append(test["node_id"])
    return seen


@pytest.mark.parametrize(
    ("node_ids", "expected"),
    [
        ([f"{SELECTION}::TestCart"], [TOTAL, CHECKOUT, PERCENT]),
        ([f"{SELECTION}::TestCart::TestDiscounts"], [PERCENT]),
        ([f"{SELECTION}::test_sizes"], [SMALL, LARGE]),
        ([LARGE], [LARGE]),
        (["tests/sub/"], [NESTED]),
        (["./tests/sub"], [NESTED]),
        ([PERCENT, "tests/sub/test_nested.py", TOTAL], [PERCENT, NESTED, TOTAL]),
        ([QUERY, SELECTION], IN_SELECTION),
        ([LARGE, f"{SELECTION}::test_sizes", QUERY], [SMALL, LARGE, QUERY]),
    ],
    ids=[
        "a-class-and-its-nested-class",
        "a-nested-class",
        "every-parameter-of-a-function",
        "one-parameter",
        "a-directory-with-a-slash",
        "a-dot-relative-directory",
        "in-argument-order",
        "a-file-absorbs-its-own-node-id",
        "a-function-absorbs-its-parameters",
    ],
)
async def test_node_ids_select_by_file_class_function_and_parameter(
    side: Side, node_ids: list[str], expected: list[str]
) -> None:
    result = await side.result("execute_tests", {"node_ids": node_ids, "detail": "all"})

    assert node_ids_of_run(result) == expected
    assert result["summary"]["total"] == len(expected)


@pytest.mark.parametrize(
    ("keywords", "expected"),
    [
        ("cart", [TOTAL, CHECKOUT, PERCENT]),
        ("large", [LARGE]),
        ("test_sizes[small]", [SMALL]),
        ("outcomes.py", IN_OUTCOMES),
        ("tests", ALL_TESTS),
        ("slow", [CHECKOUT, QUERY]),
        ("parametrize", [SMALL, LARGE]),
        ("TESTCART and not discounts", [TOTAL, CHECKOUT]),
        (
            "xfail or skip",
            [
                f"{OUTCOMES}::{name}"
                for name in ("test_skipped_by_marker", "test_skips_itself", "test_xfails", "test_xpasses")
            ],
        ),
        ("test_selection.py and (database or sizes) and not connect", [SMALL, LARGE, QUERY]),
        ("  sub", [NESTED]),
        ("nothing_matches_this", []),
    ],
    ids=[
        "a-class-name-case-insensitively",
        "a-parameter-id",
        "a-name-with-its-parameter",
        "a-module-file-name",
        "a-directory-name",
        "a-marker-name",
        "the-parametrize-marker",
        "not-and",
        "or",
        "parentheses",
        "leading-blanks",
        "nothing",
    ],
)
async def test_keywords_match_names_parents_and_markers_as_pytest_does(
    side: Side, keywords: str, expected: list[str]
) -> None:
    result = await side.result("discover_tests", {"keywords": keywords})

    assert [test["node_id"] for test in result["tests"]] == expected
    assert (result["total"], result["deselected"]) == (len(expected), len(ALL_TESTS) - len(expected))
    assert result["exit_code"] == (0 if expected else 5)


@pytest.mark.parametrize(
    ("markers", "expected"),
    [
        ("slow", [CHECKOUT, QUERY]),
        ("db and not slow", [CONNECT]),
        (
            "skip or xfail",
            [f"{OUTCOMES}::{name}" for name in ("test_skipped_by_marker", "test_xfails", "test_xpasses")],
        ),
        (
            "not (db or parametrize or xfail or skip)",
            [
                test
                for test in ALL_TESTS
                if test
                not in (
                    QUERY,
                    CONNECT,
                    SMALL,
                    LARGE,
                    f"{OUTCOMES}::test_skipped_by_marker",
                    f"{OUTCOMES}::test_xfails",
                    f"{OUTCOMES}::test_xpasses",
                )
            ],
        ),
        ("SLOW", []),
    ],
    ids=["a-marker", "and-not", "or", "not-parentheses", "case-sensitive"],
)
async def test_markers_match_marker_names_exactly(side: Side, markers: str, expected: list[str]) -> None:
    result = await side.result("discover_tests", {"markers": markers})

    assert [test["node_id"] for test in result["tests"]] == expected
    assert (result["total"], result["deselected"]) == (len(expected), len(ALL_TESTS) - len(expected))


async def test_path_keywords_and_markers_combine(side: Side) -> None:
    result = await side.result("discover_tests", {"path": SELECTION, "keywords": "cart or database", "markers": "slow"})

    assert [test["node_id"] for test in result["tests"]] == [CHECKOUT, QUERY]
    assert result["deselected"] == 5
    assert result["command"][1:] == [
        "-m",
        "pytest",
        "--color=no",
        "--collect-only",
        "-q",
        "-mslow",
        "-kcart or database",
        "--",
        SELECTION,
    ]
