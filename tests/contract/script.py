"""The fake's half of the contract: tests/fixtures/contract/tests, written out by hand as a script.

If FakeTestRunner turns this script into different answers than pytest gives for the project,
the contract suite fails: the fake cannot drift from reality unnoticed. Keep it in pytest's
order (directories and files sorted, definitions in file order).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CONTRACT_ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "contract"

OUTCOMES = "tests/test_outcomes.py"
SELECTION = "tests/test_selection.py"

CONTRACT_SCRIPT: dict[str, str | dict[str, Any]] = {
    "tests/sub/test_nested.py::test_in_a_subdirectory": {"line": 1},
    f"{OUTCOMES}::test_passes": {"line": 19},
    # `crash`: the line the real traceback ends at (the assertion's, the fixture's raise), which groups share.
    f"{OUTCOMES}::test_fails": {"outcome": "failed", "message": "assert 4 == 5", "line": 23, "crash": f"{OUTCOMES}:25"},
    f"{OUTCOMES}::test_skipped_by_marker": {
        "outcome": "skipped",
        "message": "Skipped: not on this platform",
        "markers": ["skip"],
        "line": 28,
    },
    f"{OUTCOMES}::test_skips_itself": {
        "outcome": "skipped",
        "phase": "call",
        "message": "Skipped: no network",
        "line": 33,
    },
    f"{OUTCOMES}::test_xfails": {"outcome": "xfailed", "message": "known bug", "markers": ["xfail"], "line": 37},
    f"{OUTCOMES}::test_xpasses": {"outcome": "xpassed", "message": "fixed upstream", "markers": ["xfail"], "line": 42},
    f"{OUTCOMES}::test_setup_errors": {
        "outcome": "error",
        "message": "RuntimeError: setup exploded",
        "line": 47,
        "crash": f"{OUTCOMES}:10",
    },
    f"{OUTCOMES}::test_teardown_errors": {
        "outcome": "error",
        "phase": "teardown",
        "message": "RuntimeError: teardown exploded",
        "line": 51,
        "crash": f"{OUTCOMES}:16",
    },
    f"{OUTCOMES}::test_prints_then_fails": {
        "outcome": "failed",
        "message": "ValueError: bad value",
        "stdout": "hello from the test\n",
        "line": 55,
        "crash": f"{OUTCOMES}:57",
    },
    f"{SELECTION}::TestCart::test_total": {"line": 7},
    f"{SELECTION}::TestCart::test_checkout": {"markers": ["slow"], "line": 10},
    f"{SELECTION}::TestCart::TestDiscounts::test_percent": {"line": 15},
    f"{SELECTION}::test_sizes[small]": {"markers": ["parametrize"], "line": 19},
    f"{SELECTION}::test_sizes[Large]": {"markers": ["parametrize"], "line": 19},
    f"{SELECTION}::test_database_query": {"markers": ["slow", "db"], "line": 24},
    f"{SELECTION}::test_database_connect": {"markers": ["db"], "line": 30},
}

ALL_TESTS = list(CONTRACT_SCRIPT)


# -- culprits (issue 38): tests/fixtures/culprits, whose HEAD has gross_price right --------------------

CULPRITS_ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "culprits"

CART = "tests/test_cart.py"
PRICE = "tests/test_price.py"
STOCK = "tests/test_stock.py"
FLAKY = "tests/test_flaky.py::test_fails_the_first_time"
GROSS_PRICE = "shop/price.py::gross_price"
NET_PRICE = "shop/price.py::net_price"
DISCOUNTED = "shop/price.py::discounted"
CART_TOTAL = "shop/cart.py::cart_total"
RESERVE = "shop/stock.py::reserve"


def _wrong_value(site: str, got: str, expected: str) -> dict[str, Any]:
    """A failure at an assertion of the test's own, as pytest's traceback ends it."""
    return {
        "outcome": "failed",
        "message": f"assert {got} == {expected}",
        "traceback": f"E       assert {got} == {expected}\n\n{site}: AssertionError",
    }


CULPRITS_SCRIPT: dict[str, str | dict[str, Any]] = {
    f"{CART}::test_cart_total[lines0-24.0]": {
        **_wrong_value(f"{CART}:8", "26.0", "24.0"),
        "markers": ["parametrize"],
        "line": 6,
        "runs": [CART_TOTAL, GROSS_PRICE],
    },
    f"{CART}::test_cart_total[lines1-36.0]": {
        **_wrong_value(f"{CART}:8", "38.0", "36.0"),
        "markers": ["parametrize"],
        "line": 6,
        "runs": [CART_TOTAL, GROSS_PRICE],
    },
    f"{CART}::test_empty_cart": {"line": 11, "runs": [CART_TOTAL]},
    "tests/test_discounts.py::test_no_discount": {"line": 4, "runs": [DISCOUNTED]},
    FLAKY: {
        "outcome": "failed",
        "message": "AssertionError: fails the first time it runs\nassert not True",
        "traceback": "E       AssertionError: fails the first time it runs\n\ntests/test_flaky.py:12: AssertionError",
        "line": 8,
        "runs": [NET_PRICE],
        "flaky": True,
    },
    f"{PRICE}::test_gross_price[10-12.0]": {
        **_wrong_value(f"{PRICE}:8", "13.0", "12.0"),
        "markers": ["parametrize"],
        "line": 6,
        "runs": [GROSS_PRICE],
    },
    f"{PRICE}::test_gross_price[50-60.0]": {
        **_wrong_value(f"{PRICE}:8", "61.0", "60.0"),
        "markers": ["parametrize"],
        "line": 6,
        "runs": [GROSS_PRICE],
    },
    f"{PRICE}::test_net_price": {"line": 11, "runs": [NET_PRICE]},
    f"{PRICE}::test_discounted": {"line": 15, "runs": [DISCOUNTED]},
    f"{STOCK}::test_reserve_some": {"line": 4, "runs": [RESERVE]},
    f"{STOCK}::test_reserve_everything": {
        "outcome": "failed",
        "message": "ValueError: cannot reserve 5 of 5",
        "traceback": (
            f"{STOCK}:9: \n"
            '>           raise ValueError(f"cannot reserve {quantity} of {available}")\n'
            "E           ValueError: cannot reserve 5 of 5\n\n"
            "shop/stock.py:6: ValueError"
        ),
        "line": 8,
        "runs": [RESERVE],
    },
}
CULPRITS_FUNCTIONS: dict[str, dict[str, Any]] = {
    NET_PRICE: {"lines": "6-7"},
    GROSS_PRICE: {"lines": "10-11", "changed": True},  # the edit since HEAD
    DISCOUNTED: {"lines": "14-15"},
    CART_TOTAL: {"lines": "6-10"},
    RESERVE: {"lines": "4-7"},
}
