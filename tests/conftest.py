"""The order in which pytest-xdist deals test modules to its workers: the longest first.

With `--dist loadfile` each module goes whole to one worker, so the run ends when the last module
does: a long module dealt last keeps one worker busy while the other idles. xdist's own order is by
number of tests (`--loadscope-reorder`), which puts the few long tests of the real suites, the browser
and the packaging last; scripts/test turns it off (`--no-loadscope-reorder`) and this hook orders the
modules by their measured work (tests/module_costs.txt, from bench/suite_time.py), scaled by the share
of their tests selected. Tests keep their order within a module; only the dealing changes.

It also marks `slow` the tests tests/slow_tests.txt lists: those the slow rule (tests/README.md) finds
slow in a profile (bench/suite_time.py --write-slow), so that `-m "not slow"` is a quick check.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

COSTS = Path(__file__).with_name("module_costs.txt")
SLOW_LIST = Path(__file__).with_name("slow_tests.txt")
# A module the profile has not seen yet: about the median cost of a test.
UNKNOWN_PER_TEST = 0.5


def measured() -> dict[str, tuple[float, int]]:
    """module path -> (seconds, tests) as last profiled."""
    found = {}
    for line in COSTS.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            seconds, tests, module = line.split(maxsplit=2)
            found[module] = (float(seconds), int(tests))
    return found


def listed_slow() -> frozenset[str]:
    """The node ids the slow rule marks slow (as bench/suite_time.py reads them)."""
    lines = (line.strip() for line in SLOW_LIST.read_text(encoding="utf-8").splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


SLOW = listed_slow()


def pytest_itemcollected(item: pytest.Item) -> None:
    # Marked as it is collected, so `-m "not slow"` deselects it as it does a test decorated slow.
    if item.nodeid in SLOW:
        item.add_marker(pytest.mark.slow)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    costs = measured()
    selected = Counter(item.nodeid.split("::", 1)[0] for item in items)

    def cost(module: str) -> float:
        seconds, tests = costs.get(module, (UNKNOWN_PER_TEST * selected[module], selected[module]))
        return seconds * min(1.0, selected[module] / max(tests, 1))

    first_seen = {module: index for index, module in enumerate(selected)}
    order = {module: rank for rank, module in enumerate(sorted(selected, key=lambda m: (-cost(m), first_seen[m])))}
    items.sort(key=lambda item: order[item.nodeid.split("::", 1)[0]])
