"""Which scripted tests a call selects, by pytest's rules for node ids, `-k` and `-m`."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial

from pytest_mcp.adapters.fake.expressions import ExpressionError, Value, compile_expression
from pytest_mcp.adapters.fake.script import ScriptedTest


class UsageError(Exception):
    """pytest refuses the selection: its `ERROR:` lines, and how many tests it had collected by then."""

    def __init__(self, lines: Sequence[str], collected: int) -> None:
        self.lines = tuple(lines)
        self.collected = collected
        super().__init__("; ".join(lines))


@dataclass(frozen=True)
class Collection:
    """What pytest collects for a call's arguments, before `-k` and `-m`.

    `modules` are the test modules it imported, in order; `broken` those that failed to import
    (each a collection error); `not_found` pytest's `ERROR:` lines for arguments that matched
    nothing, which make the call a usage error once collection is over.
    """

    tests: tuple[ScriptedTest, ...]
    modules: tuple[str, ...]
    broken: tuple[str, ...]
    not_found: tuple[str, ...]


def collect(
    tests: Sequence[ScriptedTest], broken: Iterable[str], targets: Sequence[str], root: str | None
) -> Collection:
    """pytest's collection of `targets` (everything when there are none) over the scripted tests and
    the modules that cannot be imported; UsageError for an argument pytest refuses before collecting."""
    broken = set(broken)
    files = {test.file for test in tests} | broken
    if not targets:
        everything = _ordered_modules(tests, broken, lambda module: True)
        return Collection(
            tuple(test for test in tests if test.file not in broken),
            tuple(everything),
            tuple(module for module in everything if module in broken),
            (),
        )
    arguments = [Argument.parse(index, target) for index, target in enumerate(targets)]
    for argument in arguments:  # pytest resolves every argument before it collects anything
        if not any(_under(file, argument.path) for file in files):
            raise UsageError([f"ERROR: file or directory not found: {argument.text}"], 0)
        if argument.parts and argument.path not in files:
            raise UsageError([f"ERROR: directory argument cannot contain :: selection parts: {argument.text}"], 0)
    chosen: dict[str, ScriptedTest] = {}
    modules: dict[str, None] = {}
    not_found: list[str] = []
    for argument in _without_overlaps(arguments):
        for module in _ordered_modules(tests, broken, partial(_under_path, argument.path)):
            modules.setdefault(module)
        if argument.path in broken and argument.parts:
            not_found.append(f"ERROR: found no collectors for {argument.shown(root)}")
            continue
        matches = [test for test in tests if test.file not in broken and argument.selects(test)]
        if not matches and argument.parts:  # a path that exists always matches, even if all it holds is broken
            not_found.append(argument.not_found(tests, root))
        for test in matches:
            chosen.setdefault(test.node_id, test)
    return Collection(
        tuple(chosen.values()),
        tuple(modules),
        tuple(module for module in modules if module in broken),
        tuple(not_found),
    )


def _ordered_modules(tests: Sequence[ScriptedTest], broken: set[str], wanted: Callable[[str], bool]) -> list[str]:
    """The modules pytest imports: scripted ones in script order, then broken ones that hold no scripted test."""
    modules = list(dict.fromkeys(test.file for test in tests if wanted(test.file)))
    return modules + sorted((m for m in broken if wanted(m) and m not in modules), key=lambda m: m.split("/"))


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


def _under_path(path: str, file: str) -> bool:
    return _under(file, path)


@dataclass(frozen=True)
class Argument:
    """A command-line argument split as pytest splits it: at the first `[`, then the path and the `::` parts."""

    index: int
    text: str
    path: str
    parts: tuple[str, ...]
    parametrization: str | None

    @classmethod
    def parse(cls, index: int, text: str) -> Argument:
        base, bracket, rest = text.partition("[")
        path, *parts = base.split("::")
        if bracket and not parts:
            raise UsageError([f"ERROR: path cannot contain [] parametrization: {text}"], 0)
        return cls(index, text, posixpath.normpath(path or "."), tuple(parts), bracket + rest if bracket else None)

    def selects(self, test: ScriptedTest) -> bool:
        """Whether pytest's matching of this argument's parts, level by level, reaches `test`."""
        if not self.parts:
            return _under(test.file, self.path)
        if test.file != self.path:
            return False
        names = test.id.names
        depth = len(self.parts)
        if depth > len(names) or names[: depth - 1] != self.parts[:-1]:
            return False
        # The last part names a class (everything in it) or the test: without a parameter id it
        # matches every parametrization, with one exactly that one.
        name = names[depth - 1] + (test.id.parameters if depth == len(names) else "")
        if self.parametrization is not None:
            return name == self.parts[-1] + self.parametrization
        return name.split("[", 1)[0] == self.parts[-1]

    def shown(self, root: str | None) -> str:
        """The argument as pytest names it in an error: its absolute path and its parts, no parameter id."""
        path = self.path if root is None else (root if self.path == "." else f"{root}/{self.path}")
        return "::".join((path, *self.parts))

    def not_found(self, tests: Sequence[ScriptedTest], root: str | None) -> str:
        """pytest's error for an argument that matched nothing: the collectors it searched in vain, if any."""
        in_module = [test.id for test in tests if test.file == self.path]
        searched: list[str] = []

        def children(prefix: tuple[str, ...]) -> dict[str, bool]:
            """The nodes one level below `prefix`, each with whether it is a class (a collector)."""
            found: dict[str, bool] = {}
            for node in in_module:
                if len(node.names) > len(prefix) and node.names[: len(prefix)] == prefix:
                    is_class = len(node.names) > len(prefix) + 1
                    name = node.names[len(prefix)] + ("" if is_class else node.parameters)
                    found[name] = found.get(name, False) or is_class
            return found

        def walk(prefix: tuple[str, ...], parts: tuple[str, ...]) -> None:
            # pytest's Session.collect loop: match one level, go deeper with the rest of the parts;
            # an item reached with parts left over is dropped without a word.
            matched = False
            for child, is_class in children(prefix).items():
                if len(parts) > 1:
                    is_match = child == parts[0]
                elif self.parametrization is not None:
                    is_match = child == parts[0] + self.parametrization
                else:
                    is_match = child.split("[", 1)[0] == parts[0]
                if is_match:
                    matched = True
                    if is_class and len(parts) > 1:
                        walk((*prefix, child), parts[1:])
            if not matched:
                searched.append(f"<Class {prefix[-1]}>" if prefix else f"<Module {self.path.rsplit('/', 1)[-1]}>")

        walk((), self.parts)
        if not searched:
            return f"ERROR: found no collectors for {self.shown(root)}"
        return f"ERROR: not found: {self.shown(root)}\n(no match in any of [{', '.join(searched)}])"

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
