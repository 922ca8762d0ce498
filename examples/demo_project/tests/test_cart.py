"""A small suite with one real bug in the code it tests, so the demo shows what an agent sees."""

import pytest
from cart.pricing import total


def test_total_of_empty_cart_is_zero():
    assert total([]) == 0


@pytest.mark.parametrize(("prices", "expected"), [([1.5, 2.5], 4.0), ([10], 10)])
def test_total_adds_prices(prices, expected):
    assert total(prices) == expected


def test_discount_is_applied():
    assert total([20.0], discount=0.1) == 18.0  # 10 % off 20.00


@pytest.mark.slow
def test_large_cart():
    assert total([0.01] * 10_000) == 100.0


@pytest.mark.skip(reason="checkout is not built yet")
def test_checkout():
    raise NotImplementedError
