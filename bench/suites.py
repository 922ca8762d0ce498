"""Generated pytest suites for the benchmark: N tests in files of 100, with 0 or 3 failures.

Each file holds plain test functions and one parametrised test, the two shapes real suites are
made of. The three failures are of three kinds an agent meets: an integer assertion, a string
assertion inside a parametrised test, and an exception raised in a helper two frames down.
A separate ten-test suite mixes every outcome pytest counts, to check each server's counts.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

PER_FILE = 100
HEADER = """import pytest


def add(a, b):
    return a + b


def label(i):
    return f"item-{i}"


def parse_price(text):
    return round(float(text), 2)


def checkout(prices):
    return sum(parse_price(p) for p in prices)

"""

MIXED_SUITE = """import pytest


@pytest.fixture
def database():
    raise RuntimeError("could not connect to the test database")


@pytest.mark.parametrize("i", range(5))
def test_passes(i):
    assert i >= 0


def test_fails():
    assert sum([1, 2, 3]) == 7


def test_errors_in_setup(database):
    pass


@pytest.mark.skip(reason="not on this platform")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known rounding bug")
def test_xfails():
    assert 0.1 + 0.2 == 0.3


@pytest.mark.xfail(reason="maybe fixed")
def test_xpasses():
    assert True
"""
MIXED_TRUTH = {"passed": 5, "failed": 1, "errors": 1, "skipped": 1, "xfailed": 1, "xpassed": 1}


@dataclass(frozen=True)
class Suite:
    name: str
    path: Path
    tests: int
    failures: int

    @property
    def truth(self) -> dict[str, int]:
        if self.name == "mixed":
            return dict(MIXED_TRUTH)
        return {
            "passed": self.tests - self.failures,
            "failed": self.failures,
            "errors": 0,
            "skipped": 0,
            "xfailed": 0,
            "xpassed": 0,
        }

    @property
    def label(self) -> str:
        if self.name == "mixed":
            return "10 tests, every outcome"
        return f"{self.tests:,} tests, {'all pass' if not self.failures else f'{self.failures} failures'}"


def _file_source(first: int, count: int, fail_at: set[int]) -> str:
    """`count` tests numbered from `first`: half plain functions, half one parametrised test."""
    functions = count - count // 2
    cases = count // 2
    parts = [HEADER]
    for offset in range(functions):
        number = first + offset
        if number in fail_at and fail_at and number == min(fail_at):
            body = f"    assert add({number}, 1) == {number + 2}\n"
        elif number in fail_at:
            body = '    assert checkout(["12.50", "3,20", "1.05"]) == 16.75\n'
        else:
            body = f"    assert add({number}, 1) == {number + 1}\n"
        parts.append(f"def test_case_{number}():\n{body}\n\n")
    if cases:
        failing = [i for i in range(cases) if first + functions + i in fail_at]
        expected = 'f"item-{i}"'
        if failing:
            expected = f'("item-x" if i == {failing[0]} else f"item-{{i}}")'
        parts.append(
            f'@pytest.mark.parametrize("i", range({cases}))\n'
            f"def test_labels_{first}(i):\n    assert label(i) == {expected}\n"
        )
    return "".join(parts)


def _failure_numbers(tests: int, failures: int) -> set[int]:
    """Test numbers that fail: the first plain function, a parametrised case mid-run, the last function."""
    if not failures:
        return set()
    files = max(1, -(-tests // PER_FILE))
    last_file_first = (files - 1) * PER_FILE
    last_count = tests - last_file_first
    middle_file = files // 2
    middle_first = middle_file * PER_FILE
    middle_count = min(PER_FILE, tests - middle_first)
    middle_case = middle_first + (middle_count - middle_count // 2) + (middle_count // 2) // 2
    last_function = last_file_first + (last_count - last_count // 2) - 1
    chosen = {0, middle_case, last_function}
    if failures > 3 and tests >= 100 * failures:  # many failures: plain functions spread over the files
        plain = [first + offset for first in range(0, tests, PER_FILE) for offset in range(1, PER_FILE // 2 - 1)]
        spare = [number for number in plain if number not in chosen]
        chosen |= set(spare[:: max(1, len(spare) // (failures - 3))][: failures - 3])
    if len(chosen) < failures:  # tiny suites: take the next plain functions
        chosen |= set(range(1, failures - len(chosen) + 1))
    return chosen


def generate(root: Path, tests: int, failures: int) -> Suite:
    """Write the suite under `root` (once: an unchanged suite keeps its files and their .pyc)."""
    name = f"{tests}-{'pass' if not failures else f'fail{failures}'}"
    path = root / name
    fail_at = _failure_numbers(tests, failures)
    sources = {}
    for first in range(0, tests, PER_FILE):
        count = min(PER_FILE, tests - first)
        sources[f"tests/test_part_{first // PER_FILE:04d}.py"] = _file_source(first, count, fail_at)
    _write_if_changed(path, sources)
    return Suite(name, path, tests, failures)


def generate_mixed(root: Path) -> Suite:
    path = root / "mixed"
    _write_if_changed(path, {"tests/test_mixed.py": MIXED_SUITE})
    return Suite("mixed", path, 10, 1)


def _write_if_changed(path: Path, sources: dict[str, str]) -> None:
    sources = {"pytest.ini": "[pytest]\n", **sources}
    digest = hashlib.sha256(repr(sorted(sources.items())).encode()).hexdigest()
    stamp = path / ".bench-digest"
    if stamp.exists() and stamp.read_text() == digest:
        return
    shutil.rmtree(path, ignore_errors=True)
    for relative, source in sources.items():
        target = path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source)
    stamp.write_text(digest)
