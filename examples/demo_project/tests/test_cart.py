"""A small suite with one real bug, so the demo shows what an agent sees."""

import pytest


def total(prices, discount=0.0):
    return round(sum(prices) * (1 - discount), 2)


def test_total_of_empty_cart_is_zero():
    assert total([]) == 0


@pytest.mark.parametrize(("prices", "expected"), [([1.5, 2.5], 4.0), ([10], 10)])
def test_total_adds_prices(prices, expected):
    assert total(prices) == expected


def test_discount_is_applied():
    # The bug an agent should find: 10% off 20.00 is 18.00.
    assert total([20.0], discount=0.1) == 19.0


@pytest.mark.slow
def test_large_cart():
    assert total([0.01] * 10_000) == 100.0


@pytest.mark.skip(reason="checkout is not built yet")
def test_checkout():
    raise NotImplementedError
