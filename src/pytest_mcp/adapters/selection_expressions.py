"""pytest's `-k`/`-m` expression grammar (`and`, `or`, `not`, parentheses), evaluated in memory."""

from __future__ import annotations

import re
from collections.abc import Callable

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


class ExpressionError(ValueError):
    """The expression is not valid pytest selection syntax."""


def compile_expression(text: str) -> Callable[[Callable[[str], bool]], bool]:
    """Parse `text` once; the result evaluates it with a matcher for bare identifiers."""
    tokens = [match.group(1) for match in _TOKEN.finditer(text)]
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        token = tokens[position]
        position += 1
        return token

    def parse_or() -> Callable[[Callable[[str], bool]], bool]:
        left = parse_and()
        while peek() == "or":
            take()
            right, previous = parse_and(), left
            left = lambda match, a=previous, b=right: a(match) or b(match)  # noqa: E731
        return left

    def parse_and() -> Callable[[Callable[[str], bool]], bool]:
        left = parse_not()
        while peek() == "and":
            take()
            right, previous = parse_not(), left
            left = lambda match, a=previous, b=right: a(match) and b(match)  # noqa: E731
        return left

    def parse_not() -> Callable[[Callable[[str], bool]], bool]:
        if peek() == "not":
            take()
            inner = parse_not()
            return lambda match: not inner(match)
        if peek() == "(":
            take()
            inner = parse_or()
            if peek() != ")":
                raise ExpressionError(f"expected ')' in {text!r}")
            take()
            return inner
        token = peek()
        if token is None or token in (")", "and", "or"):
            raise ExpressionError(f"expected an identifier in {text!r}")
        take()
        return lambda match: match(token)

    if not tokens:
        return lambda match: True
    expression = parse_or()
    if position != len(tokens):
        raise ExpressionError(f"unexpected {tokens[position]!r} in {text!r}")
    return expression
