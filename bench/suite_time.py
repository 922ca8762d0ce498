"""Where the suite's minutes go: a `pytest --durations=0` output summed per directory and per module.

    .venv/bin/python bench/suite_time.py PROFILE.txt              # the tables, for bench/results/suite-time.md
    .venv/bin/python bench/suite_time.py PROFILE.txt --write-costs  # also rewrites tests/module_costs.txt
    .venv/bin/python bench/suite_time.py NOTSLOW.txt --check-slow --load-factor 3.5  # the slow rule
    .venv/bin/python bench/suite_time.py NOTSLOW.txt --write-slow --load-factor 3.5  # adds to tests/slow_tests.txt

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
SLOW_LIST = REPO / "tests" / "slow_tests.txt"
# Seconds of one test on an idle 2-core machine from which it is slow: the not-slow subset is then a
# few minutes (tests/README.md).
SLOW_OVER = 2.0
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


def per_test(text: str) -> Counter[str]:
    """Seconds per test (node id): its setup, call and teardown summed."""
    seconds: Counter[str] = Counter()
    for line in text.splitlines():
        if (match := _LINE.match(line)) and match["rest"]:
            seconds[match["module"] + match["rest"]] += float(match["seconds"])
    return seconds


def listed_slow(path: Path = SLOW_LIST) -> set[str]:
    """The node ids tests/slow_tests.txt marks slow."""
    if not path.exists():
        return set()
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return {line for line in lines if line and not line.startswith("#")}


def over_the_rule(seconds: Counter[str], load_factor: float, slow_over: float = SLOW_OVER) -> dict[str, float]:
    """The tests of the profile whose time, scaled to an idle machine, is at least `slow_over`."""
    return {test: spent / load_factor for test, spent in seconds.items() if spent / load_factor >= slow_over}


def without_fast_tests(seconds: Counter[str], slow: set[str]) -> list[str]:
    """Directories of the profile all of whose tests are slow: the not-slow subset would not reach them."""
    directories = {test.split("::", 1)[0].rsplit("/", 1)[0] for test in seconds}
    fast = {test.split("::", 1)[0].rsplit("/", 1)[0] for test in seconds if test not in slow}
    return sorted(directories - fast)


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
    parser.add_argument("--load-factor", type=float, default=1.0, help="the profile's wall time over an idle run's")
    parser.add_argument("--check-slow", action="store_true", help="fail on a not-slow test over the slow rule")
    parser.add_argument("--write-slow", action="store_true", help="add the tests over the rule to the slow list")
    args = parser.parse_args()
    text = args.profile.read_text(errors="replace")
    seconds, tests = per_module(text)
    if args.check_slow or args.write_slow:
        raise SystemExit(slow_rule(per_test(text), args.load_factor, write=args.write_slow))
    print(tables(seconds, args.limit))
    if args.write_costs:
        header = (
            "# Seconds of work per test module (setup + call + teardown of its tests) and its number of tests,\n"
            "# from a whole-suite profile (bench/suite_time.py --write-costs; bench/results/suite-time.md).\n"
            "# tests/conftest.py deals the longest modules to the xdist workers first; only the order uses it.\n"
        )
        rows = [f"{spent:.1f} {tests[name]} {name}" for name, spent in seconds.most_common()]
        COSTS.write_text(header + "\n".join(rows) + "\n", encoding="utf-8")


def slow_rule(seconds: Counter[str], load_factor: float, *, write: bool) -> int:
    """Print the tests over the slow rule not yet listed; with `write`, list them. 1 if the rule is broken."""
    listed = listed_slow()
    over = over_the_rule(seconds, load_factor)
    unlisted = {test: spent for test, spent in over.items() if test not in listed}
    for test, spent in sorted(unlisted.items(), key=lambda item: -item[1]):
        print(f"{spent:6.1f} s  {test}")
    print(f"{len(unlisted)} tests of the profile over {SLOW_OVER} s on an idle machine and not in {SLOW_LIST.name}")
    if write:
        header = [line for line in SLOW_LIST.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
        SLOW_LIST.write_text("\n".join([*header, *sorted(listed | set(unlisted))]) + "\n", encoding="utf-8")
        listed |= set(unlisted)
        unlisted = {}
    bare = without_fast_tests(seconds, listed)
    for directory in bare:
        print(f"{directory}: every test is slow, so the not-slow subset does not reach it")
    return 1 if unlisted or bare else 0


if __name__ == "__main__":
    main()
