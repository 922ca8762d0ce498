"""Where the suite's minutes go: a `pytest --durations=0` output summed per directory and per module.

    .venv/bin/python bench/suite_time.py PROFILE.txt              # the tables, for bench/results/suite-time.md
    .venv/bin/python bench/suite_time.py PROFILE.txt --write-costs  # also rewrites tests/module_costs.txt

The sums are of each test's setup, call and teardown as pytest measured them on its worker: the work
a module gives one worker, not wall time. tests/module_costs.txt feeds tests/conftest.py, which deals
the longest modules to pytest-xdist's workers first.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COSTS = REPO / "tests" / "module_costs.txt"
_LINE = re.compile(r"\s*(?P<seconds>[\d.]+)s (?P<phase>setup|call|teardown)\s+(?P<module>[^:\s]+)(?P<rest>::\S.*)?$")


def per_module(text: str) -> tuple[Counter[str], Counter[str]]:
    """Seconds per module, and the number of distinct tests pytest listed per module."""
    seconds: Counter[str] = Counter()
    tests: dict[str, set[str]] = {}
    for line in text.splitlines():
        if match := _LINE.match(line):
            seconds[match["module"]] += float(match["seconds"])
            tests.setdefault(match["module"], set()).add(match["rest"] or "")
    return seconds, Counter({module: len(names) for module, names in tests.items()})


def tables(seconds: Counter[str], limit: int) -> str:
    directories: Counter[str] = Counter()
    for module, spent in seconds.items():
        directories[module.rsplit("/", 1)[0]] += spent
    total = sum(seconds.values())
    summed = f"Work summed over all tests: {total:,.0f} s ({total / 60:.1f} min"
    lines = [f"{summed}; over 2 workers at best {total / 120:.1f} min)", ""]
    lines += ["| directory | s | share |", "|---|---:|---:|"]
    lines += [f"| {name} | {spent:,.0f} | {spent / total:.0%} |" for name, spent in directories.most_common()]
    lines += ["", f"The {limit} longest modules:", "", "| module | s |", "|---|---:|"]
    lines += [f"| {name} | {spent:,.0f} |" for name, spent in seconds.most_common(limit)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--write-costs", action="store_true")
    args = parser.parse_args()
    seconds, tests = per_module(args.profile.read_text(errors="replace"))
    print(tables(seconds, args.limit))
    if args.write_costs:
        header = (
            "# Seconds of work per test module (setup + call + teardown of its tests) and its number of tests,\n"
            "# from a whole-suite profile (bench/suite_time.py --write-costs; bench/results/suite-time.md).\n"
            "# tests/conftest.py deals the longest modules to the xdist workers first; only the order uses it.\n"
        )
        rows = [f"{spent:.1f} {tests[name]} {name}" for name, spent in seconds.most_common()]
        COSTS.write_text(header + "\n".join(rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
