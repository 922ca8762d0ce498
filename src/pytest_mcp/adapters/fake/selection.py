"""Which scripted tests a call selects, by pytest's rules for node ids, `-k` and `-m`."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_mcp.adapters.fake.expressions import ExpressionError, Value, compile_expression
from pytest_mcp.adapters.fake.script import ScriptedTest
from pytest_mcp.domain.node_ids import NodeId


class UsageError(Exception):
    """pytest refuses the selection: its `ERROR:` lines, and how many tests it had collected by then."""

    def __init__(self, lines: Sequence[str], collected: int) -> None:
        self.lines = tuple(lines)
        self.collected = collected
        super().__init__("; ".join(lines))


@dataclass(frozen=True)
class Selection:
    collected: tuple[ScriptedTest, ...]
    selected: tuple[ScriptedTest, ...]

    @property
    def deselected(self) -> int:
        return len(self.collected) - len(self.selected)


def select(
    tests: Sequence[ScriptedTest], targets: Sequence[str], markers: str | None, keywords: str | None, root: str | None
) -> Selection:
    """What pytest would collect for `targets` and then keep after `-k` and `-m`; UsageError as pytest's."""
    collected = _collect(tests, targets, root)
    return Selection(tuple(collected), tuple(deselect(collected, markers, keywords)))


def _collect(tests: Sequence[ScriptedTest], targets: Sequence[str], root: str | None) -> list[ScriptedTest]:
    if not targets:
        return list(tests)
    arguments = [Argument.parse(index, target) for index, target in enumerate(targets)]
    for argument in arguments:
        if not any(_under(test.file, argument.path) for test in tests):
            raise UsageError([f"ERROR: file or directory not found: {argument.text}"], 0)
    chosen: dict[str, ScriptedTest] = {}
    not_found: list[str] = []
    for argument in _without_overlaps(arguments):
        matches = [test for test in tests if argument.selects(test)]
        if not matches:
            not_found.append(_not_found(argument, tests, root))
        for test in matches:
            chosen.setdefault(test.node_id, test)
    if not_found:
        raise UsageError(not_found, len(chosen))
    return list(chosen.values())


def _not_found(argument: Argument, tests: Iterable[ScriptedTest], root: str | None) -> str:
    # pytest names the argument without its parameter id, and the deepest collector it searched.
    shown = argument.text.split("[", 1)[0] if argument.parametrization else argument.text
    location = f"{root}/{shown}" if root else shown
    classes = "::".join(argument.parts[:-1])
    collector = f"<Module {argument.path.rsplit('/', 1)[-1]}>"
    if classes and any(test.node_id.startswith(f"{argument.path}::{classes}::") for test in tests):
        collector = f"<Class {argument.parts[-2]}>"
    return f"ERROR: not found: {location}\n(no match in any of [{collector}])"


class _KeywordsDoNotTakeArguments(Exception):
    """`-k name(x=1)`: pytest refuses call parameters in keyword expressions."""


class _KeywordMatcher:
    def __init__(self, test: ScriptedTest) -> None:
        self._names = [name.lower() for name in test.keywords()]

    def __call__(self, name: str, /, **kwargs: Value) -> bool:
        if kwargs:
            raise _KeywordsDoNotTakeArguments
        wanted = name.lower()
        return any(wanted in candidate for candidate in self._names)


class _MarkMatcher:
    def __init__(self, test: ScriptedTest) -> None:
        self._markers = set(test.markers)

    def __call__(self, name: str, /, **kwargs: Value) -> bool:
        # Scripted markers carry no arguments, so `name(key=value)` cannot match.
        return name in self._markers and not kwargs


def deselect(collected: Sequence[ScriptedTest], markers: str | None, keywords: str | None) -> list[ScriptedTest]:
    """What survives `-k` and then `-m`, or UsageError with pytest's words for a bad expression."""
    selected = list(collected)
    keyword_text = (keywords or "").lstrip()  # pytest strips leading blanks from -k only
    if keyword_text:
        try:
            expression = compile_expression(keyword_text)
            selected = [test for test in selected if expression.evaluate(_KeywordMatcher(test))]
        except ExpressionError as exc:
            raise UsageError([f"ERROR: Wrong expression passed to '-k': {exc}"], len(collected)) from None
        except _KeywordsDoNotTakeArguments:
            raise UsageError(["ERROR: Keyword expressions do not support call parameters."], len(collected)) from None
    if markers:
        try:
            expression = compile_expression(markers)
        except ExpressionError as exc:
            raise UsageError([f"ERROR: Wrong expression passed to '-m': {exc}"], len(collected)) from None
        selected = [test for test in selected if expression.evaluate(_MarkMatcher(test))]
    return selected


def _under(file: str, path: str) -> bool:
    return path in (".", file) or file.startswith(path + "/")


@dataclass(frozen=True)
class Argument:
    """A node id argument split as pytest splits it: path, `::` parts, and a parameter id."""

    index: int
    text: str
    path: str
    parts: tuple[str, ...]
    parametrization: str | None

    @classmethod
    def parse(cls, index: int, text: str) -> Argument:
        node = NodeId.parse(text)
        return cls(index, text, posixpath.normpath(node.path), node.names, node.parameters or None)

    def selects(self, test: ScriptedTest) -> bool:
        if not self.parts:
            return _under(test.file, self.path)
        target = "::".join([self.path, *self.parts]) + (self.parametrization or "")
        return test.node_id == target or test.node_id.startswith((target + "::", target + "["))

    def subsumes(self, other: Argument) -> bool:
        """pytest's `is_collection_argument_subsumed_by(other, self)`."""
        if self.path != other.path:
            return not self.parts and _under(other.path, self.path)
        if len(self.parts) > len(other.parts) or other.parts[: len(self.parts)] != self.parts:
            return False
        return self.parametrization is None or self.parametrization == other.parametrization


def _without_overlaps(arguments: list[Argument]) -> list[Argument]:
    """pytest's `normalize_collection_arguments`: drop arguments another one contains, keep order."""
    ordered = sorted(arguments, key=lambda a: (a.path.split("/"), a.parts, a.parametrization or ""))
    kept: list[Argument] = []
    for argument in ordered:
        if not kept or not kept[-1].subsumes(argument):
            kept.append(argument)
    return sorted(kept, key=lambda a: a.index)


def targets(target: str, test: ScriptedTest) -> bool:
    """Whether the command-line argument `target` selects `test`."""
    return Argument.parse(0, target).selects(test)
