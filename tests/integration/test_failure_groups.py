"""Failure groups on real pytest runs: planted bugs are never merged, and each is one group (ADR 0014).

Every test that fails is named after the bug it trips (`test_bugNN_...`). A wrong merge (two
bugs in one group) hides a bug, so precision is asserted exactly; so is recall here (each bug
one group), as every planted bug fails its tests the same way.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from bench.response_sizes import answer, write

pytestmark = pytest.mark.anyio

SHOP = """
import json

RATES = {"EUR": 1.0, "USD": 1.1}
UNITS = {"kg": 1000, "g": 1}
STOCK = 10


def rate(currency):
    return RATES[currency]


def unit(name):
    return UNITS[name]


def label(item):
    return item["name"] + item["number"]


def average(values):
    return sum(values) / len(values)


def find(items, name):
    match = None
    for item in items:
        if item == name:
            match = item
    return match.upper()


def validate(quantity):
    if quantity < 0:
        raise ValueError(f"negative quantity {quantity}")
    if quantity > STOCK:
        raise ValueError(f"quantity {quantity} above stock")
    return quantity


def number(text):
    return int(text)


def settings(text):
    return json.loads(text)


def require(name, config):
    import pytest

    if name not in config:
        pytest.fail(f"missing config: {name}")
    return config[name]
"""

TESTS = """
import pytest
from shop import average, find, label, number, rate, require, settings, unit, validate

VAT = 0.21  # bug 1: should be 0.20


@pytest.fixture
def database():
    raise RuntimeError("database is down")


@pytest.fixture
def session():
    yield "s"
    raise RuntimeError("session left open")


@pytest.mark.parametrize("net", range(1, 11))
def test_bug01_vat(net):
    assert round(net * (1 + VAT), 2) == round(net * 1.2, 2)


@pytest.mark.parametrize("i", range(5))
def test_bug02_rate(i):
    assert rate("GBP") > i


@pytest.mark.parametrize("i", range(5))
def test_bug03_unit(i):
    assert unit("lb") > i


@pytest.mark.parametrize("n", range(5))
def test_bug04_label(n):
    assert label({"name": "item", "number": n})


@pytest.mark.parametrize("i", range(3))
def test_bug05_average(i):
    assert average([]) == i


@pytest.mark.parametrize("name", ["a", "b", "c", "d"])
def test_bug06_find(name):
    assert find(["x", "y"], name)


@pytest.mark.parametrize("i", range(3))
def test_bug07_setup(database, i):
    pass


@pytest.mark.parametrize("i", range(2))
def test_bug08_teardown(session, i):
    pass


@pytest.mark.parametrize("n", range(3))
def test_bug09_total(n):
    total = n + 1
    assert total == n


@pytest.mark.parametrize("q", [-1, -2])
def test_bug10_negative(q):
    validate(q)


@pytest.mark.parametrize("q", [11, 12])
def test_bug11_stock(q):
    validate(q)


@pytest.mark.parametrize("text", ["abc", "x1"])
def test_bug12_not_a_number(text):
    number(text)


@pytest.mark.parametrize("text", [None, 1.5j])
def test_bug13_not_text(text):
    number(text)


@pytest.mark.parametrize("text", ["{", '{"a": 1,'])
def test_bug14_settings(text):
    settings(text)


@pytest.mark.parametrize("name", ["host", "port", "user"])
def test_bug15_config(name):
    require(name, {})


@pytest.mark.parametrize("i", range(2))
@pytest.mark.xfail(reason="fixed upstream")
def test_bug16_xpass(i):
    pass


@pytest.mark.parametrize("i", range(20))
def test_passes(i):
    assert validate(i % 10) == i % 10
"""

PLANTED = 16


async def test_sixteen_planted_bugs_are_sixteen_groups_and_no_group_holds_two(tmp_path: Path) -> None:
    root = write(tmp_path / "suite", {"shop.py": SHOP, "test_shop.py": textwrap.dedent(TESTS)})

    _, structured, text = await answer(root, {})

    groups = structured["groups"]
    bugs_per_group = [{tag for member in g["members"] for tag in re.findall(r"test_bug(\d+)", member)} for g in groups]
    assert all(len(bugs) == 1 for bugs in bugs_per_group), [g["title"] for g in groups]  # precision: no wrong merge
    assert sorted(int(bugs.pop()) for bugs in bugs_per_group) == list(range(1, PLANTED + 1))  # recall: no split
    assert structured.get("omitted_groups", 0) == 0  # left out at its default, as omitted_tests is
    counts = structured["summary"]
    assert sum(g["count"] for g in groups) == counts["failed"] + counts["errors"] + counts["xpassed"]
    # The crash site is the deepest frame in the project, not the test's line, when a helper raised.
    crashes = {re.findall(r"test_bug(\d+)", g["members"][0])[0]: g["crash"] for g in groups}
    assert crashes["02"].startswith("shop.py:")
    assert crashes["14"].startswith("shop.py:")  # json.loads raised, in the standard library
    assert crashes["01"].startswith("test_shop.py:")
    assert text.count("] ") >= PLANTED
