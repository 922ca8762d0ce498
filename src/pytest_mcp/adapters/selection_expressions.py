"""pytest's `-k`/`-m` expression grammar (`and`, `or`, `not`, parentheses), evaluated in memory."""

from __future__ import annotations

import re
from collections.abc import Callable

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")

Matcher = Callable[[str], bool]
Expression = Callable[[Matcher], bool]


class ExpressionError(ValueError):
    """The expression is not valid pytest selection syntax."""


def _either(left: Expression, right: Expression) -> Expression:
    return lambda match: left(match) or right(match)


def _both(left: Expression, right: Expression) -> Expression:
    return lambda match: left(match) and right(match)


def _negate(inner: Expression) -> Expression:
    return lambda match: not inner(match)


def _identifier(name: str) -> Expression:
    return lambda match: match(name)


def compile_expression(text: str) -> Expression:
    """Parse `text` once; the result evaluates it with a matcher for bare identifiers."""
    tokens = [found.group(1) for found in _TOKEN.finditer(text)]
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        position += 1
        return tokens[position - 1]

    def parse_or() -> Expression:
        expression = parse_and()
        while peek() == "or":
            take()
            expression = _either(expression, parse_and())
        return expression

    def parse_and() -> Expression:
        expression = parse_not()
        while peek() == "and":
            take()
            expression = _both(expression, parse_not())
        return expression

    def parse_not() -> Expression:
        lexeme = peek()
        if lexeme == "not":
            take()
            return _negate(parse_not())
        if lexeme == "(":
            take()
            inner = parse_or()
            if peek() != ")":
                raise ExpressionError(f"expected ')' in {text!r}")
            take()
            return inner
        if lexeme is None or lexeme in (")", "and", "or"):
            raise ExpressionError(f"expected an identifier in {text!r}")
        return _identifier(take())

    if not tokens:
        return lambda match: True
    expression = parse_or()
    if position != len(tokens):
        raise ExpressionError(f"unexpected {tokens[position]!r} in {text!r}")
    return expression
