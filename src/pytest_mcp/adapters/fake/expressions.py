"""pytest's `-k`/`-m` match-expression language, evaluated in memory, with pytest's own error messages.

A port of `_pytest.mark.expression` (pytest 8.4-9.x): the same tokens, grammar, keyword arguments
(`-m "mark(key=value)"`) and, when an expression is malformed, the same column and wording.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import NoReturn, Protocol

Value = str | int | bool | None

_IDENT = re.compile(r"(:?\w|:|\+|-|\.|\[|\]|\\|/)+")
_BUILTIN_VALUES: Mapping[str, Value] = {"True": True, "False": False, "None": None}

# Token kinds, named as pytest names them in its "expected ...; got ..." messages.
_LPAREN = "left parenthesis"
_RPAREN = "right parenthesis"
_OR = "or"
_AND = "and"
_NOT = "not"
_IDENTIFIER = "identifier"
_EOF = "end of input"
_EQUAL = "="
_STRING = "string literal"
_COMMA = ","


class Matcher(Protocol):
    """Decides whether one identifier (with optional `name(key=value)` arguments) matches."""

    def __call__(self, name: str, /, **kwargs: Value) -> bool: ...


class ExpressionError(ValueError):
    """The expression is not valid pytest syntax; `str()` reads like pytest's own message.

    pytest reports it as `Wrong expression passed to '-k': <text>: at column <n>: <reason>`.
    """

    def __init__(self, text: str, column: int, reason: str) -> None:
        self.text = text
        self.column = column
        self.reason = reason
        super().__init__(f"{text}: at column {column}: {reason}")


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    value: str
    position: int


def _lex(text: str) -> Iterator[_Token]:
    # A generator, as in pytest: a bad character is reported only when the parser reaches it,
    # so which error wins for an expression with several problems is the same as pytest's.
    position = 0
    singles = {"(": _LPAREN, ")": _RPAREN, "=": _EQUAL, ",": _COMMA}
    while position < len(text):
        character = text[position]
        if character in (" ", "\t"):
            position += 1
        elif character in singles:
            yield _Token(singles[character], character, position)
            position += 1
        elif character in ("'", '"'):
            end = text.find(character, position + 1)
            if end == -1:
                raise ExpressionError(text, position + 1, f'closing quote "{character}" is missing')
            value = text[position : end + 1]
            backslash = value.find("\\")
            if backslash != -1:
                raise ExpressionError(
                    text, position + backslash + 1, 'escaping with "\\" not supported in marker expression'
                )
            yield _Token(_STRING, value, position)
            position += len(value)
        else:
            match = _IDENT.match(text, position)
            if match is None:
                raise ExpressionError(text, position + 1, f'unexpected character "{character}"')
            value = match.group(0)
            kind = value if value in (_OR, _AND, _NOT) else _IDENTIFIER
            yield _Token(kind, value, position)
            position += len(value)
    yield _Token(_EOF, "", position)


Evaluate = Callable[[Matcher], bool]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _lex(text)
        self.current = next(self.tokens)
        self.identifiers: set[str] = set()

    def accept(self, kind: str) -> _Token | None:
        if self.current.kind != kind:
            return None
        token = self.current
        if token.kind != _EOF:
            self.current = next(self.tokens)
        return token

    def expect(self, kind: str) -> _Token:
        token = self.accept(kind)
        if token is None:
            self.reject((kind,))
        return token

    def reject(self, expected: tuple[str, ...]) -> NoReturn:
        raise ExpressionError(
            self.text,
            self.current.position + 1,
            f"expected {' OR '.join(expected)}; got {self.current.kind}",
        )

    def expression(self) -> Evaluate:
        if self.accept(_EOF):
            return lambda match: False
        result = self.or_expression()
        self.expect(_EOF)
        return result

    def or_expression(self) -> Evaluate:
        result = self.and_expression()
        while self.accept(_OR):
            result = _either(result, self.and_expression())
        return result

    def and_expression(self) -> Evaluate:
        result = self.not_expression()
        while self.accept(_AND):
            result = _both(result, self.not_expression())
        return result

    def not_expression(self) -> Evaluate:
        if self.accept(_NOT):
            return _negate(self.not_expression())
        if self.accept(_LPAREN):
            result = self.or_expression()
            self.expect(_RPAREN)
            return result
        identifier = self.accept(_IDENTIFIER)
        if identifier is None:
            self.reject((_NOT, _LPAREN, _IDENTIFIER))
        self.identifiers.add(identifier.value)
        if self.accept(_LPAREN):
            arguments = self.keyword_arguments()
            self.expect(_RPAREN)
            return _call(identifier.value, arguments)
        return _name(identifier.value)

    def keyword_arguments(self) -> dict[str, Value]:
        arguments = dict([self.keyword_argument()])
        while self.accept(_COMMA):
            name, value = self.keyword_argument()
            arguments[name] = value
        return arguments

    def keyword_argument(self) -> tuple[str, Value]:
        name = self.expect(_IDENTIFIER)
        if not name.value.isidentifier():
            raise ExpressionError(self.text, name.position + 1, f"not a valid python identifier {name.value}")
        if keyword.iskeyword(name.value):
            raise ExpressionError(self.text, name.position + 1, f"unexpected reserved python keyword `{name.value}`")
        self.expect(_EQUAL)
        string = self.accept(_STRING)
        if string is not None:
            return name.value, string.value[1:-1]
        token = self.expect(_IDENTIFIER)
        number = token.value
        if number.isdigit() or (number.startswith("-") and number[1:].isdigit()):
            return name.value, int(number)
        if number in _BUILTIN_VALUES:
            return name.value, _BUILTIN_VALUES[number]
        raise ExpressionError(self.text, token.position + 1, f'unexpected character/s "{number}"')


def _either(left: Evaluate, right: Evaluate) -> Evaluate:
    return lambda match: left(match) or right(match)


def _both(left: Evaluate, right: Evaluate) -> Evaluate:
    return lambda match: left(match) and right(match)


def _negate(inner: Evaluate) -> Evaluate:
    return lambda match: not inner(match)


def _name(name: str) -> Evaluate:
    return lambda match: bool(match(name))


def _call(name: str, arguments: dict[str, Value]) -> Evaluate:
    return lambda match: bool(match(name, **arguments))


@dataclass(frozen=True)
class Expression:
    """A parsed expression. `evaluate` short-circuits `and`/`or` exactly as pytest's does."""

    text: str
    identifiers: frozenset[str]
    _evaluate: Evaluate

    def evaluate(self, matcher: Matcher) -> bool:
        return self._evaluate(matcher)


def compile_expression(text: str) -> Expression:
    """Parse `text` once, or raise ExpressionError with pytest's column and reason.

    As in pytest, an empty expression evaluates to False; callers that treat an empty `-k`
    or `-m` as "no filter" (as pytest does) must check for it first.
    """
    parser = _Parser(text)
    evaluate = parser.expression()
    return Expression(text, frozenset(parser.identifiers), evaluate)
