"""Cart totals, with one real bug for the demo to find."""


def subtotal(prices):
    return round(sum(prices), 2)


def discounted(amount, discount):
    # The bug an agent should find: `discount` is a fraction (0.1 is 10 % off), not a percentage.
    return round(amount * (1 - discount / 100), 2)


def total(prices, discount=0.0):
    amount = subtotal(prices)
    return discounted(amount, discount) if discount else amount
