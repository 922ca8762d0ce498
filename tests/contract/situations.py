"""An agent's situations (issue 43), one project described once: written out for real pytest, scripted for the fake.

A small shop: `gross_price` and `net_price` in shop/price.py, a `total` in each of shop/a.py, b.py and
c.py that sums gross prices, tests of each total in three files, a test of `net_price`; optionally a
test that fails only the first time it runs, 400 cases of `gross_price`, and a table of rates built
as its module is imported (`RATES = Rates()`), with a test that reads it. A function is right or
wrong; the real side writes the code so, in a git repository whose HEAD is the situation's start, and
the fake scripts the outcomes the tests then have, with `change()` for every edit since.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_mcp.testing import FakeTestRunner

GROSS = "shop/price.py::gross_price"
NET = "shop/price.py::net_price"
FILES = ("a", "b", "c")
FLAKY = "tests/test_flaky.py::test_fails_the_first_time"
RATES_INIT = "shop/rates.py::Rates.__init__"
VAT = "tests/test_rates.py::test_vat"
MANY = 400

PRICE = """\
def gross_price(net):
    return round(net * {gross}, 2)


def net_price(gross):
    return round(gross / {net}, 2)
"""
TOTAL = """\
from shop.price import gross_price


def total(items):
    result = 0.0
    for item in items:
        result += gross_price(item)
    return result
"""
TEST_TOTAL = """\
import pytest

from shop.{name} import total


@pytest.mark.parametrize(("items", "expected"), [([10], 12.0), ([10, 10], 24.0)])
def test_total(items, expected):
    assert total(items) == expected
"""
TEST_NET = """\
from shop.price import net_price


def test_net():
    assert net_price(12.0) == 10.0
"""
TEST_FLAKY = """\
from pathlib import Path

from shop.price import net_price

RAN = Path(__file__).with_name(".ran-once")


def test_fails_the_first_time():
    first = not RAN.exists()
    RAN.touch()
    assert net_price(12.0) == 10.0
    assert not first, "fails the first time it runs"
"""
TEST_MANY = f"""\
import pytest

from shop.price import gross_price


@pytest.mark.parametrize(("net", "expected"), [(n, round(n * 1.2, 2)) for n in range(1, {MANY + 1})])
def test_gross(net, expected):
    assert gross_price(net) == expected
"""
RATES = """\
class Rates:
    def __init__(self):
        self.vat = {vat}


RATES = Rates()
"""
TEST_RATES = """\
from shop.rates import RATES


def test_vat():
    vat = RATES.vat
    assert vat == 1.2
"""
LINES = {GROSS: "1-2", NET: "5-6", RATES_INIT: "2-3", **{f"shop/{name}.py::total": "4-8" for name in FILES}}
"""Where each function is, as the real files have it."""
BODY = {GROSS: (2,), NET: (6,), **{f"shop/{name}.py::total": (5, 6, 7, 8) for name in FILES}}
"""The lines a test that enters each function runs of it, as a run on Python 3.12 and later records them."""


def ran(*functions: str) -> list[str]:
    """A scripted test's `runs`: each function with the lines it runs of it."""
    return [f"{function}:{line}" for function in functions for line in BODY[function]]


@dataclass
class Shop:
    """The project at a situation's start: which functions are wrong, and which optional tests it has."""

    wrong: set[str] = field(default_factory=set)
    flaky: bool = False
    many: bool = False
    rates: bool = False

    def factors(self, wrong: Iterable[str]) -> dict[str, str]:
        wrong = set(wrong)
        return {"gross": "1.3" if GROSS in wrong else "1.2", "net": "1.3" if NET in wrong else "1.2"}

    # -- the real side ----------------------------------------------------------------------------

    def write(self, root: Path) -> Path:
        """The project on disk, committed: its git HEAD is the situation's start."""
        (root / "shop").mkdir(parents=True)
        (root / "tests").mkdir()
        (root / "shop" / "__init__.py").write_text("")
        (root / "shop" / "price.py").write_text(PRICE.format(**self.factors(self.wrong)))
        for name in FILES:
            (root / "shop" / f"{name}.py").write_text(TOTAL)
            (root / "tests" / f"test_{name}.py").write_text(TEST_TOTAL.format(name=name))
        (root / "tests" / "test_price.py").write_text(TEST_NET)
        if self.flaky:
            (root / "tests" / "test_flaky.py").write_text(TEST_FLAKY)
        if self.many:
            (root / "tests" / "test_many.py").write_text(TEST_MANY)
        if self.rates:
            self.edit_real(root, self.wrong)
            (root / "tests" / "test_rates.py").write_text(TEST_RATES)
        (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n')
        (root / ".gitignore").write_text(".ran-once\n__pycache__/\n.pytest_cache/\n")
        identity = ["-c", "user.name=pytest-mcp", "-c", "user.email=tests@pytest-mcp.invalid"]
        identity += ["-c", "commit.gpgsign=false"]
        for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
            subprocess.run(["git", *identity, *command], cwd=root, check=True, capture_output=True)
        return root.resolve()

    def edit_real(self, root: Path, wrong: Iterable[str]) -> None:
        wrong = set(wrong)
        (root / "shop" / "price.py").write_text(PRICE.format(**self.factors(wrong)))
        if self.rates:
            (root / "shop" / "rates.py").write_text(RATES.format(vat=12 if RATES_INIT in wrong else 1.2))

    # -- the fake side ----------------------------------------------------------------------------

    def script(self, runner: FakeTestRunner, wrong: Iterable[str]) -> FakeTestRunner:
        """Every test as the code makes it end (the flaky one only the first time: it plays its own sequence)."""
        wrong = set(wrong)
        for name in FILES:
            helper = f"shop/{name}.py::total"
            for index, (items, expected) in enumerate((([10], 12.0), ([10, 10], 24.0))):
                node_id = f"tests/test_{name}.py::test_total[items{index}-{expected}]"
                fields: dict[str, Any] = {"markers": ["parametrize"], "line": 7, "runs": ran(helper, GROSS)}
                if GROSS in wrong:
                    got = round(sum(round(item * 1.3, 2) for item in items), 2)
                    fields |= failed(f"tests/test_{name}.py:8", got, expected)
                runner.script(node_id, **fields)
        if self.flaky and FLAKY not in {test.node_id for test in runner.tests}:
            runner.script(
                FLAKY,
                outcomes=["failed", "passed"],  # the agent's re-run passes
                flaky=True,  # and so does a second pass's repeat (Python 3.11 and earlier)
                message="AssertionError: fails the first time it runs\nassert not True",
                traceback=(
                    "E       AssertionError: fails the first time it runs\n\ntests/test_flaky.py:12: AssertionError"
                ),
                line=8,
                runs=ran(NET),
            )
        if self.many:
            for n in range(1, MANY + 1):
                expected = round(n * 1.2, 2)
                fields = {"markers": ["parametrize"], "line": 7, "runs": ran(GROSS)}
                if GROSS in wrong:
                    fields |= failed("tests/test_many.py:8", round(n * 1.3, 2), expected)
                runner.script(f"tests/test_many.py::test_gross[{n}-{expected}]", **fields)
        net = failed("tests/test_price.py:5", 9.23, 10.0) if NET in wrong else {}
        runner.script("tests/test_price.py::test_net", line=4, runs=ran(NET), **net)
        if self.rates:
            runner.run_at_import(RATES_INIT)  # no test enters it: it runs as test_rates.py is imported
            vat = failed("tests/test_rates.py:6", 12, 1.2) if RATES_INIT in wrong else {}
            runner.script(VAT, line=4, **vat)
        for function, lines in LINES.items():
            if any(function in test.functions for test in runner.tests) or (self.rates and function == RATES_INIT):
                runner.define(function, lines)
        return runner


def failed(site: str, got: float, expected: float) -> dict[str, Any]:
    """A wrong value at a test's own assertion, as pytest's report words it."""
    return {
        "outcome": "failed",
        "message": f"assert {got} == {expected}",
        "traceback": f"E       assert {got} == {expected}\n\n{site}: AssertionError",
    }
