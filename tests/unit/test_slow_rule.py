"""The slow rule (tests/README.md): from a profile, the tests over it, and the list the suite marks slow."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from bench.suite_time import SLOW_OVER, listed_slow, over_the_rule, per_test, without_fast_tests
from tests.conftest import SLOW, pytest_itemcollected

PROFILE = """
============================= slowest durations ==============================
7.00s call     tests/e2e/test_x.py::test_long[a b]
0.50s setup    tests/e2e/test_x.py::test_long[a b]
3.00s call     tests/e2e/test_x.py::test_short
0.01s teardown tests/unit/test_y.py::test_quick
(12 durations < 0.005s hidden.  Use -vv to show these durations.)
"""


def test_a_tests_phases_are_summed_under_its_node_id() -> None:
    assert per_test(PROFILE) == {
        "tests/e2e/test_x.py::test_long[a b]": 7.5,
        "tests/e2e/test_x.py::test_short": 3.0,
        "tests/unit/test_y.py::test_quick": 0.01,
    }


def test_a_loaded_profile_is_scaled_to_the_idle_machine_the_rule_is_about() -> None:
    seconds = per_test(PROFILE)
    assert set(over_the_rule(seconds, load_factor=1.0)) == {
        "tests/e2e/test_x.py::test_long[a b]",
        "tests/e2e/test_x.py::test_short",
    }
    assert over_the_rule(seconds, load_factor=3.0) == {"tests/e2e/test_x.py::test_long[a b]": 2.5}
    assert SLOW_OVER == 2.0


def test_a_directory_left_with_no_fast_test_is_named() -> None:
    seconds = per_test(PROFILE)
    assert without_fast_tests(seconds, {"tests/e2e/test_x.py::test_long[a b]"}) == []
    everything_in_e2e = {"tests/e2e/test_x.py::test_long[a b]", "tests/e2e/test_x.py::test_short"}
    assert without_fast_tests(seconds, everything_in_e2e) == ["tests/e2e"]


def test_the_suite_marks_what_the_list_holds() -> None:
    assert listed_slow() == SLOW
    assert all("::" in node_id for node_id in SLOW)


class CollectedItem:
    """What the collection hook reads of an item and does to it."""

    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid
        self.markers: list[Any] = []

    def add_marker(self, marker: Any) -> None:
        self.markers.append(marker)


def test_a_listed_test_is_marked_slow_as_it_is_collected_and_another_is_not() -> None:
    listed, other = CollectedItem(sorted(SLOW)[0]), CollectedItem("tests/unit/test_slow_rule.py::test_x")
    for item in (listed, other):
        pytest_itemcollected(item)  # type: ignore[arg-type]
    assert [marker.name for marker in listed.markers] == ["slow"]
    assert listed.markers == [pytest.mark.slow]
    assert other.markers == []


def test_every_listed_slow_test_is_still_defined_where_the_list_says() -> None:
    """A renamed or moved test would silently leave the list and come back into the quick check."""
    root = Path(__file__).resolve().parents[2]
    stale = []
    for node_id in sorted(SLOW):
        path, *names = node_id.split("::")
        function = names[-1].split("[", 1)[0]
        module = root / path
        # A test class may inherit its tests from a base class beside it (the client matrix's).
        places = [module] if len(names) == 1 else [module, *module.parent.glob("*.py")]
        sources = (place.read_text(encoding="utf-8") for place in places if place.is_file())
        if not any(re.search(rf"^\s*(async\s+)?def {re.escape(function)}\(", text, re.MULTILINE) for text in sources):
            stale.append(node_id)
    assert stale == []
