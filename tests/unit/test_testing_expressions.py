"""The fake's -k/-m language is pytest's: the same verdicts and the same errors, checked against pytest itself."""

from __future__ import annotations

import itertools

import pytest
from _pytest.mark.expression import Expression

from pytest_mcp.adapters.fake.expressions import ExpressionError, Value, compile_expression

EXPRESSIONS = [
    "a",
    "not a",
    "a and b",
    "a or b and c",
    "(a or b) and not c",
    "not not a",
    "a and (b or (c and not a))",
    "x::y",
    "test_[a-b].py",
    "True",
    "None or a",
    "m(x=1)",
    "m(x='s', y=-2, z=True, w=None)",
    "a or m(x=1) and not b",
    "é and 日本",
]
MALFORMED = [
    "",
    " ",
    "a,b",
    "(a",
    "a)",
    "and",
    "a or",
    "not",
    "a b",
    "a$b",
    "m(",
    "m(x)",
    "m(x=)",
    "m(1=2)",
    "m(if=2)",
    "m(x=foo)",
    "m(x='oops)",
    'm(x="a\\b")',
    "m(x=1,)",
    "m(x=1 y=2)",
    "a ☃",
]


class Recorder:
    """A matcher that answers from a truth table and remembers what it was asked."""

    def __init__(self, truths: dict[str, bool]) -> None:
        self.truths = truths
        self.asked: list[tuple[str, tuple[tuple[str, Value], ...]]] = []

    def __call__(self, name: str, /, **kwargs: Value) -> bool:
        self.asked.append((name, tuple(sorted(kwargs.items()))))
        return self.truths.get(name, False) and kwargs.get("x", 1) == 1


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_every_truth_assignment_gives_pytests_verdict_and_asks_the_same_questions(text: str) -> None:
    ours = compile_expression(text)
    theirs = Expression.compile(text)
    names = sorted(theirs.idents())
    assert ours.identifiers == theirs.idents()

    for values in itertools.product([False, True], repeat=len(names)):
        truths = dict(zip(names, values, strict=True))
        mine, pytests = Recorder(truths), Recorder(truths)
        assert ours.evaluate(mine) == theirs.evaluate(pytests), truths
        # pytest may ask the same question twice (it evaluates Python's `and`/`or` objects, then
        # their truth); which questions are asked is what matters, as a matcher may raise.
        assert list(dict.fromkeys(mine.asked)) == list(dict.fromkeys(pytests.asked)), truths


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_expressions_fail_at_pytests_column_with_pytests_words(text: str) -> None:
    try:
        theirs = Expression.compile(text)
    except SyntaxError as exc:
        expected = f"{exc.text}: at column {exc.offset}: {exc.msg}"
    else:
        assert text.strip() == "", "only blank input is valid in this list"
        assert not compile_expression(text).evaluate(lambda name, **kwargs: True)
        assert not theirs.evaluate(lambda name, **kwargs: True)
        return

    with pytest.raises(ExpressionError) as caught:
        compile_expression(text)

    assert str(caught.value) == expected
