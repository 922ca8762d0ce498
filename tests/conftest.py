"""The order in which pytest-xdist deals test modules to its workers: the longest first.

With `--dist loadfile` each module goes whole to one worker, so the run ends when the last module
does: a long module dealt last keeps one worker busy while the other idles. xdist's own order is by
number of tests (`--loadscope-reorder`), which puts the few long tests of the real suites, the browser
and the packaging last; scripts/test turns it off (`--no-loadscope-reorder`) and this hook orders the
modules by their measured work (tests/module_costs.txt, from bench/suite_time.py), scaled by the share
of their tests selected. Tests keep their order within a module; only the dealing changes.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

COSTS = Path(__file__).with_name("module_costs.txt")
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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    costs = measured()
    selected = Counter(item.nodeid.split("::", 1)[0] for item in items)

    def cost(module: str) -> float:
        seconds, tests = costs.get(module, (UNKNOWN_PER_TEST * selected[module], selected[module]))
        return seconds * min(1.0, selected[module] / max(tests, 1))

    first_seen = {module: index for index, module in enumerate(selected)}
    order = {module: rank for rank, module in enumerate(sorted(selected, key=lambda m: (-cost(m), first_seen[m])))}
    items.sort(key=lambda item: order[item.nodeid.split("::", 1)[0]])
