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
