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


def discount(price, percent):
    return round(price * (1 - percent / 1000), 2)  # bug 17: per mille, not per cent


def shipping(weight):
    return 5 + weight * 2  # bug 18: 3 a kg


def price_tag(amount):
    return f"{amount:.2f} EUR"

"""

TESTS = """
import pytest
from shop import average, discount, find, label, number, price_tag, rate, require, settings, shipping, unit
from shop import validate

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


@pytest.mark.parametrize("price", range(10, 60, 10))
def test_bug17_discount(price):
    assert discount(price, 10) == price * 0.9


@pytest.mark.parametrize("price", range(10, 40, 10))
def test_bug17_discount_tag(price):
    assert price_tag(discount(price, 50)).startswith(str(price // 2))


@pytest.mark.parametrize("kg", range(1, 5))
def test_bug18_shipping(kg):
    assert shipping(kg) == 5 + 3 * kg


@pytest.mark.parametrize("kg", range(1, 4))
def test_bug18_shipping_tag(kg):
    assert price_tag(shipping(kg)) == price_tag(5 + 3 * kg)


@pytest.mark.parametrize("i", range(20))
def test_passes(i):
    assert validate(i % 10) == i % 10


@pytest.mark.parametrize("amount", [1, 2.5])
def test_price_tag_passes(amount):
    assert price_tag(amount).endswith(" EUR")

"""

PLANTED = 18
WRONG_VALUES = ("17", "18")
"""Bugs that return a wrong value, each failing at two assertion sites: one cause each."""


async def test_sixteen_planted_bugs_are_sixteen_groups_and_no_group_holds_two(tmp_path: Path) -> None:
    root = write(tmp_path / "suite", {"shop.py": SHOP, "test_shop.py": textwrap.dedent(TESTS)})

    # A generous second pass: this machine's load must not decide whether the culprits are found.
    _, structured, text = await answer(root, {}, localize=10)

    groups = structured["groups"]
    assert not any(g.get("omitted_members") for g in groups)  # every member is listed: the checks read them all
    bugs_per_group = [{tag for member in g["members"] for tag in re.findall(r"test_bug(\d+)", member)} for g in groups]
    assert all(len(bugs) == 1 for bugs in bugs_per_group), [g["title"] for g in groups]  # precision: no wrong merge
    assert sorted(int(bugs.pop()) for bugs in bugs_per_group) == list(range(1, PLANTED + 1))  # recall: no split
    # Each wrong value fails at two assertion sites, and is one cause: its function, with both symptoms.
    causes = {re.findall(r"test_bug(\d+)", g["members"][0])[0]: g for g in groups}
    for bug, function in zip(WRONG_VALUES, ("discount", "shipping"), strict=True):
        assert causes[bug]["culprit"]["function"] == function, causes[bug]["title"]
        assert len(causes[bug]["symptoms"]) == 2
        assert sum(symptom["count"] for symptom in causes[bug]["symptoms"]) == causes[bug]["count"]
    assert {(c["file"], c["function"]) for c in structured["culprits"]} >= {
        ("shop.py", "discount"),
        ("shop.py", "shipping"),
    }
    assert structured.get("omitted_groups", 0) == 0  # left out at its default, as omitted_tests is
    counts = structured["summary"]
    assert sum(g["count"] for g in groups) == counts["failed"] + counts["errors"] + counts["xpassed"]
    # The crash site is the deepest frame in the project, not the test's line, when a helper raised.
    crashes = {re.findall(r"test_bug(\d+)", g["members"][0])[0]: g["crash"] for g in groups}
    assert crashes["02"].startswith("shop.py:")
    assert crashes["14"].startswith("shop.py:")  # json.loads raised, in the standard library
    assert crashes["01"].startswith("test_shop.py:")
    assert text.count("] ") >= PLANTED
