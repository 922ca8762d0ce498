"""FakeTestRunner: a scripted, deterministic TestRunner that answers the way pytest would."""

from __future__ import annotations

import json
import posixpath
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pytest_mcp.adapters.fake.expressions import ExpressionError, Value, compile_expression
from pytest_mcp.adapters.fake.terminal import FakeTerminal, collect_words, interrupted, run_words
from pytest_mcp.adapters.pytest_options import collect_options, run_options
from pytest_mcp.domain.models import CollectedTest, CollectionError, Outcome, Phase, ReportedTest, Summary
from pytest_mcp.domain.runs import CollectionReport, CollectSpec, RunReport, RunSpec, Termination
from pytest_mcp.ports.progress import ProgressSink
from pytest_mcp.ports.test_runner import TestRunner

FailureKind = Literal["timeout", "crash", "collection_error", "usage_error", "internal_error"]
FAILURE_KINDS: tuple[FailureKind, ...] = get_args(FailureKind)

RECORDING_FORMAT = "pytest-mcp-recording"
RECORDING_VERSION = 1

# The phases pytest can report each outcome in; the first is the default.
_PHASES: Mapping[str, tuple[Phase, ...]] = {
    "passed": ("call",),
    "failed": ("call",),
    "skipped": ("setup", "call"),
    "xfailed": ("call", "setup"),
    "xpassed": ("call",),
    "error": ("setup", "teardown"),
}
_DEFAULT_MESSAGES: Mapping[str, str] = {
    "failed": "assert False",
    "error": "RuntimeError: fixture failed",
    "skipped": "Skipped: unconditional skip",
}
# What faulthandler prints for the fatal signals it handles; other signals leave no dump.
_FAULTHANDLER_TITLES = {
    "SIGSEGV": "Segmentation fault",
    "SIGFPE": "Floating-point exception",
    "SIGABRT": "Aborted",
    "SIGBUS": "Bus error",
    "SIGILL": "Illegal instruction",
}


class ScriptError(ValueError):
    """A script or recording is malformed. The message names the field and the reason."""


class ScriptedTest(BaseModel):
    """One test as FakeTestRunner plays it back: the outcome pytest would report, and its evidence.

    `message` is the report's message verbatim, as pytest words it (`assert 4 == 5`,
    `RuntimeError: setup exploded`, `Skipped: no network`, an xfail reason). `phase` is where
    the outcome happens: an `error` in `teardown` is a test that passed and then failed in
    teardown (pytest counts both); a `skipped` test is skipped in `setup` (a marker) unless
    told `call` (`pytest.skip()` in the body). `line` is the 1-based line of the definition.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    node_id: str = Field(min_length=1)
    outcome: Outcome = "passed"
    message: str | None = None
    traceback: str | None = None
    duration: float = Field(0.0, ge=0)
    markers: tuple[str, ...] = ()
    stdout: str | None = None
    stderr: str | None = None
    line: int | None = Field(None, ge=1)
    phase: Phase | None = None

    @field_validator("node_id")
    @classmethod
    def _has_a_file(cls, value: str) -> str:
        if not value.split("::", 1)[0] or value.startswith(("/", "-")):
            raise ValueError("must be a node id relative to the root, like 'tests/test_x.py::test_y'")
        return value

    @model_validator(mode="after")
    def _phase_fits_the_outcome(self) -> Self:
        allowed = _PHASES[self.outcome]
        if self.phase is None:
            object.__setattr__(self, "phase", allowed[0])
        elif self.phase not in allowed:
            raise ValueError(f"phase {self.phase!r} is impossible for outcome {self.outcome!r}; use one of {allowed}")
        return self

    @property
    def file(self) -> str:
        return self.node_id.split("::", 1)[0]

    @property
    def function(self) -> str:
        """The test function's name, without class or parameters: what faulthandler prints."""
        return self._names()[-1].split("[", 1)[0]

    def _names(self) -> list[str]:
        _, _, rest = self.node_id.partition("::")
        names, bracket, parameters = rest.partition("[")
        parts = names.split("::") if names else [self.file.rsplit("/", 1)[-1]]
        parts[-1] += bracket + parameters  # a parameter id may itself contain '::'
        return parts

    def keywords(self) -> set[str]:
        """The names `-k` matches: directories below the root, module, classes, test, markers."""
        return {*self.file.split("/"), *self._names(), *self.markers}

    def reports(self) -> list[ReportedTest]:
        """The reports pytest writes for this test, in order (two for a teardown error)."""
        phase = self.phase or _PHASES[self.outcome][0]
        failing = self.outcome in ("failed", "error")
        message = self.message if self.message is not None else _DEFAULT_MESSAGES.get(self.outcome)
        report = ReportedTest(
            node_id=self.node_id,
            outcome=self.outcome,
            phase=phase,
            location=f"{self.file}:{self.line}" if self.line else self.file,
            message=message,
            traceback=(self.traceback or _synthetic_traceback(self, message or "")) if failing else None,
            duration=self.duration,
            stdout=(self.stdout or None) if failing else None,
            stderr=(self.stderr or None) if failing else None,
        )
        if self.outcome == "error" and phase == "teardown":
            passed = ReportedTest(node_id=self.node_id, outcome="passed", phase="call", location=report.location)
            return [passed, report]
        return [report]


def _synthetic_traceback(test: ScriptedTest, message: str) -> str:
    """A traceback in pytest's layout for a scripted failure that has none of its own."""
    if message.startswith("[XPASS(strict)]"):
        return message
    head = message.split(":", 1)[0]
    if message.startswith("assert "):
        exception = "AssertionError"
    elif head and head.replace(".", "").isidentifier():
        exception = head
    else:
        exception = "Exception"
    lines = [f"E       {line}" if line else "E" for line in message.splitlines() or [message]]
    return "\n".join([f"def {test.function}():", *lines, "", f"{test.file}:{test.line or 1}: {exception}"])


@dataclass(frozen=True)
class _PendingFailure:
    kind: FailureKind
    message: str | None
    node_id: str | None
    signal: str | None
    line: int | None
    on: Literal["run", "collect"] | None


class _UsageError(Exception):
    def __init__(self, lines: Sequence[str], collected: int) -> None:
        self.lines = tuple(lines)
        self.collected = collected
        super().__init__("; ".join(lines))


@dataclass(frozen=True)
class _Selection:
    collected: tuple[ScriptedTest, ...]
    selected: tuple[ScriptedTest, ...]

    @property
    def deselected(self) -> int:
        return len(self.collected) - len(self.selected)


class _KeywordsDoNotTakeArguments(Exception):
    """`-k name(x=1)`: pytest refuses call parameters in keyword expressions."""


class FakeTestRunner(TestRunner):
    """A TestRunner that plays back scripted tests instead of running pytest.

    It answers with the same reports a real run produces, so the use cases, the presenter and
    the MCP layer treat them exactly as they treat pytest's:

    - **Outcomes and counts.** Each scripted test yields pytest's reports for it (a teardown
      error after a pass is two reports, counted as 1 passed and 1 error); the summary,
      exit code (0, 1 or 5), `--maxfail` stop and `detail` filtering follow pytest.
    - **Node ids** select by exact id, by file, by directory, by class (`file::Class`) and by
      parametrized function (`file::test_f` selects every `test_f[...]`), in argument order;
      as in pytest 9, an argument that another one contains is dropped (`x.py::t x.py` runs
      `x.py` in file order). A path that matches no scripted test is pytest's usage error
      `file or directory not found`; a known file with an unknown test is `not found`.
    - **`keywords` (-k)** match case-insensitively as substrings of the test's name (with its
      parameter id), its classes, its module file name (with `.py`), the directories between
      the root and the file, and its markers, exactly as pytest's KeywordMatcher does.
    - **`markers` (-m)** match scripted marker names exactly (case-sensitive).
    - Both expressions use pytest's grammar, and a malformed one is pytest's usage error with
      pytest's own wording and column.
    - **Text.** `text_output` and the output tails in error data are rendered the way pytest
      prints them on an 80-column terminal outside CI, at the default verbosity or `-q`.

    `fail_with(kind)` makes the next call end the way a real `kind` failure ends, so the use
    cases raise exactly the error, message shape and data a real run produces. `calls`
    records every RunSpec and CollectSpec the runner was given.

    Not modelled (where it cannot be realistic): fixtures, conftest hooks, plugins and their
    options; marker arguments (`-m "mark(x=1)"` never matches, since scripted markers carry
    none); markers deselected by the project's own configuration (`addopts = -m ...`);
    `--strict-markers` checks of `-m`; paths that exist on disk but hold no scripted test
    (they are "not found"); `-v`/`-vv` layouts (rendered like the default verbosity); the
    session header's platform and plugin lines; wide Unicode characters in width
    calculations; real timing (durations are the scripted ones; the session duration is
    their sum). Within a file or directory, tests run in script order, so write scripts in
    pytest's order (a recording keeps it).
    """

    def __init__(self, tests: Iterable[ScriptedTest] = (), *, root: str | PathLike[str] | None = None) -> None:
        """`root`, when given, appears where pytest prints absolute paths (`rootdir:`, `not found:`)."""
        self._tests: dict[str, ScriptedTest] = {}
        self._failures: deque[_PendingFailure] = deque()
        self._root = str(root) if root is not None else None
        self.calls: list[RunSpec | CollectSpec] = []
        """Every spec this runner was asked to run or collect, in order."""
        for test in tests:
            self._tests[test.node_id] = test

    # -- building a script ------------------------------------------------------------------------

    @classmethod
    def from_dict(
        cls, script: Mapping[str, str | Mapping[str, Any]], *, root: str | PathLike[str] | None = None
    ) -> Self:
        """Build from `{node_id: outcome}` or `{node_id: {"outcome": ..., "message": ..., ...}}`.

        The values take the keyword arguments of `script()`. Raises ScriptError naming the
        node id and field of every problem.
        """
        if not isinstance(script, Mapping):
            raise ScriptError(f"a script is a mapping of node id to outcome, not {type(script).__name__}")
        tests = []
        problems: list[str] = []
        for node_id, value in script.items():
            fields: Mapping[str, Any]
            if isinstance(value, str):
                fields = {"outcome": value}
            elif isinstance(value, Mapping):
                fields = value
            else:
                problems.append(f"[{node_id!r}]: must be an outcome or a mapping of fields, not {value!r}")
                continue
            if "node_id" in fields:
                problems.append(f"[{node_id!r}].node_id: the node id is the key; leave it out of the fields")
                continue
            try:
                tests.append(ScriptedTest.model_validate({"node_id": node_id, **fields}))
            except ValidationError as exc:
                problems += _field_problems(f"[{node_id!r}]", exc)
        if problems:
            raise ScriptError("invalid script: " + "; ".join(problems))
        return cls(tests, root=root)

    @classmethod
    def from_recording(cls, source: str | PathLike[str] | Mapping[str, Any]) -> Self:
        """Replay a recording made by `pytest-mcp record` (a path to its JSON file, or the loaded JSON).

        Raises FileNotFoundError for a missing file and ScriptError, naming the field, for
        anything that is not a version-1 pytest-mcp recording.
        """
        document: Any
        if isinstance(source, Mapping):
            where, document = "recording", source
        else:
            path = Path(source)
            where = str(path)
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                raise FileNotFoundError(
                    f"no recording at {path}; make one with `pytest-mcp record --root DIR --out {path}`"
                ) from None
            try:
                document = json.loads(text)
            except ValueError as exc:
                raise ScriptError(f"{where}: not valid JSON ({exc})") from None
        root, tests = _parse_recording(document, where)
        return cls(tests, root=root)

    def to_recording(self) -> dict[str, Any]:
        """This runner's script as a recording document (what `from_recording` reads)."""
        return recording_document(self._root or ".", self._tests.values())

    def script(
        self,
        node_id: str,
        outcome: Outcome = "passed",
        message: str | None = None,
        traceback: str | None = None,
        duration: float = 0.0,
        markers: Iterable[str] = (),
        stdout: str | None = None,
        *,
        stderr: str | None = None,
        line: int | None = None,
        phase: Phase | None = None,
    ) -> Self:
        """Add a scripted test, or replace the one with this node id in place; returns the runner.

        Raises ScriptError naming the field when a value is impossible (an unknown outcome,
        a phase the outcome cannot happen in, a negative duration).
        """
        try:
            test = ScriptedTest(
                node_id=node_id,
                outcome=outcome,
                message=message,
                traceback=traceback,
                duration=duration,
                markers=tuple(markers),
                stdout=stdout,
                stderr=stderr,
                line=line,
                phase=phase,
            )
        except ValidationError as exc:
            raise ScriptError(f"invalid test {node_id!r}: " + "; ".join(_field_problems("", exc))) from None
        self._tests[node_id] = test
        return self

    @property
    def tests(self) -> tuple[ScriptedTest, ...]:
        """The scripted tests, in script order."""
        return tuple(self._tests.values())

    def fail_with(
        self,
        kind: FailureKind,
        message: str | None = None,
        *,
        node_id: str | None = None,
        signal: str | None = None,
        line: int | None = None,
        on: Literal["run", "collect"] | None = None,
    ) -> Self:
        """Make the next call end the way a real `kind` ending does; failures queue in order.

        `on="run"` saves the failure for the next run (`execute_tests`), letting discoveries
        through; `on="collect"` for the next collection (`discover_tests`); by default the next
        call of either kind takes it.

        - `timeout`: the test `node_id` (default: the first selected) never finishes; the
          tests before it have run. The error names the call's timeout, and the test from the
          stack faulthandler dumps when the runner signals the overrunning run (at `line`, as
          for a crash).
        - `crash`: pytest is killed by `signal` (default SIGSEGV) while running `node_id`
          (default: the first selected test); faulthandler's dump names it at `line` (default:
          the line after the test's scripted `line`, the first line of its body). Signals
          faulthandler does not handle (SIGKILL, say) leave no dump.
        - For both: if `node_id` is not selected by the call, or a `maxfail` stop comes first,
          the call ends normally, as a real run would; with nothing selected, pytest is
          killed while collecting.
        - `collection_error`: the module `node_id` (default `tests/test_broken.py`) cannot be
          imported; `message` is the exception line (default a ModuleNotFoundError). A run
          is interrupted; a discovery lists it beside the tests that did collect.
        - `usage_error`: pytest refuses the arguments; `message` is its `ERROR:` line
          (default: the first target is not found).
        - `internal_error`: a hook raises; `message` is the exception line (default
          `RuntimeError: scripted internal error`).
        """
        if kind not in FAILURE_KINDS:
            raise ScriptError(f"kind: {kind!r} is not one of {', '.join(FAILURE_KINDS)}")
        if on not in ("run", "collect", None):
            raise ScriptError(f"on: {on!r} is not 'run', 'collect' or None")
        self._failures.append(_PendingFailure(kind, message, node_id, signal, line, on))
        return self

    def _take_failure(self, call: Literal["run", "collect"]) -> _PendingFailure | None:
        for failure in self._failures:
            if failure.on in (None, call):
                self._failures.remove(failure)
                return failure
        return None

    # -- the TestRunner port ----------------------------------------------------------------------

    async def run(self, spec: RunSpec, progress: ProgressSink | None = None) -> RunReport:
        self.calls.append(spec)
        command = self._run_command(spec)
        terminal = FakeTerminal(self._root or ".", verbosity=spec.verbosity, show_capture=spec.show_capture)
        terminal.session_start()
        failure = self._take_failure("run")
        early = self._early_ending(failure, spec, spec.node_ids, command, terminal)
        if early is not None:
            return early[0]
        try:
            selection = self._select(spec.node_ids, spec.markers, spec.keywords)
        except _UsageError as exc:
            return self._usage_error(exc, command, terminal)
        terminal.collected(len(selection.collected), selection.deselected)

        reports: list[ReportedTest] = []
        failures = 0
        stopped = False
        for done, test in enumerate(selection.selected, start=1):
            if failure is not None and failure.kind in ("timeout", "crash") and _is_victim(test, failure, selection):
                terminal.test_started(test.node_id)
                return self._killed(failure, test, spec, command, reports, terminal)
            terminal.test_started(test.node_id)
            for report in test.reports():
                terminal.report(report)
                reports.append(report)
                failures += report.outcome in ("failed", "error")
            if progress is not None:
                await progress.update(done, len(selection.selected), failures)
            if spec.maxfail is not None and failures >= spec.maxfail:
                stopped = True
                break
        if failure is not None and failure.kind in ("timeout", "crash") and not selection.selected:
            return self._killed(failure, None, spec, command, reports, terminal)  # killed while collecting
        if not stopped:
            terminal.loop_finished()

        counts = Counter[str](report.outcome for report in reports)
        counts["deselected"] = selection.deselected
        duration = round(sum(report.duration for report in reports), 6)
        summary = Summary.from_counts(counts, total=len(selection.selected), duration=duration)
        terminal.session_finished(
            run_words(summary), stop=f"stopping after {spec.maxfail} failures" if stopped else None
        )
        exit_code = 5 if not selection.selected else (1 if failures else 0)
        return RunReport(
            termination=Termination(kind="exited", exit_code=exit_code),
            command=command,
            duration=duration,
            summary=summary,
            tests=tuple(r for r in reports if spec.include_passed or r.outcome != "passed"),
            stdout=terminal.text(),
        )

    async def collect(self, spec: CollectSpec) -> CollectionReport:
        self.calls.append(spec)
        targets = (spec.path,) if spec.path is not None else ()
        command = self._collect_command(spec, targets)
        terminal = FakeTerminal(self._root or ".", verbosity=-1)
        failure = self._take_failure("collect")
        early = self._early_ending(failure, spec, targets, command, terminal)
        if early is not None:
            report, collected = early
            return _as_collection(report, collected, finished=report.summary is not None, max_listed=spec.max_listed)
        if failure is not None and failure.kind in ("timeout", "crash"):
            killed = self._killed(failure, None, spec, command, [], terminal)
            return _as_collection(killed, (), finished=False)
        try:
            selection = self._select(targets, spec.markers, spec.keywords)
        except _UsageError as exc:
            return _as_collection(self._usage_error(exc, command, terminal), (), finished=False)
        terminal.collected_items([test.node_id for test in selection.selected])
        terminal.session_finished(collect_words(len(selection.collected), selection.deselected, 0, 0.0))
        listed = selection.selected[: spec.max_listed]
        return CollectionReport(
            termination=Termination(kind="exited", exit_code=0 if selection.selected else 5),
            command=command,
            duration=0.0,
            finished=True,
            tests=tuple(_collected(test) for test in listed),
            unlisted=len(selection.selected) - len(listed),
            deselected=selection.deselected,
            stdout=terminal.text(),
        )

    # -- selection ----------------------------------------------------------------------------------

    def _select(self, targets: Sequence[str], markers: str | None, keywords: str | None) -> _Selection:
        collected = self._collect_targets(targets)
        return _Selection(tuple(collected), tuple(_deselect(collected, markers, keywords)))

    def _collect_targets(self, targets: Sequence[str]) -> list[ScriptedTest]:
        if not targets:
            return list(self._tests.values())
        arguments = [_Argument.parse(index, target) for index, target in enumerate(targets)]
        for argument in arguments:
            if not any(_under(test.file, argument.path) for test in self._tests.values()):
                raise _UsageError([f"ERROR: file or directory not found: {argument.text}"], 0)
        chosen: dict[str, ScriptedTest] = {}
        not_found: list[str] = []
        for argument in _without_overlaps(arguments):
            matches = [test for test in self._tests.values() if argument.selects(test)]
            if not matches:
                not_found.append(self._not_found(argument))
            for test in matches:
                chosen.setdefault(test.node_id, test)
        if not_found:
            raise _UsageError(not_found, len(chosen))
        return list(chosen.values())

    def _not_found(self, argument: _Argument) -> str:
        # pytest names the argument without its parameter id, and the deepest collector it searched.
        shown = argument.text.split("[", 1)[0] if argument.parametrization else argument.text
        location = f"{self._root}/{shown}" if self._root else shown
        classes = "::".join(argument.parts[:-1])
        collector = f"<Module {argument.path.rsplit('/', 1)[-1]}>"
        if classes and any(test.node_id.startswith(f"{argument.path}::{classes}::") for test in self._tests.values()):
            collector = f"<Class {argument.parts[-2]}>"
        return f"ERROR: not found: {location}\n(no match in any of [{collector}])"

    # -- endings --------------------------------------------------------------------------------

    def _early_ending(
        self,
        failure: _PendingFailure | None,
        spec: RunSpec | CollectSpec,
        targets: Sequence[str],
        command: tuple[str, ...],
        terminal: FakeTerminal,
    ) -> tuple[RunReport, tuple[ScriptedTest, ...]] | None:
        """Endings before any test runs (usage, internal, collection errors), with what did collect."""
        if failure is None:
            return None
        if failure.kind == "usage_error":
            line = failure.message or f"file or directory not found: {targets[0] if targets else 'tests/missing.py'}"
            line = line if line.startswith("ERROR:") else f"ERROR: {line}"
            return self._usage_error(_UsageError([line], 0), command, terminal), ()
        if failure.kind == "internal_error":
            exception = failure.message or "RuntimeError: scripted internal error"
            terminal.collected(len(self._tests), 0)
            terminal.internal_error(
                [
                    "Traceback (most recent call last):",
                    f'  File "{self._root or "."}/conftest.py", line 1, in pytest_collection_modifyitems',
                    f"    raise {exception.split(':', 1)[0]}(...)",
                    exception,
                ]
            )
            terminal.session_finished("no tests ran in 0.00s")
            report = RunReport(
                termination=Termination(kind="exited", exit_code=3),
                command=command,
                duration=0.0,
                stdout=terminal.text(),
            )
            return report, ()
        if failure.kind == "collection_error":
            return self._collection_error(failure, spec, targets, command, terminal)
        return None

    def _collection_error(
        self,
        failure: _PendingFailure,
        spec: RunSpec | CollectSpec,
        targets: Sequence[str],
        command: tuple[str, ...],
        terminal: FakeTerminal,
    ) -> tuple[RunReport, tuple[ScriptedTest, ...]]:
        module = posixpath.normpath(failure.node_id or "tests/test_broken.py")
        message = failure.message or "ModuleNotFoundError: No module named 'missing'"
        error = CollectionError(node_id=module, message=message, traceback=self._import_traceback(module, message))
        # The broken module collects nothing; every other targeted test collects as usual.
        collected = [
            test
            for test in self._tests.values()
            if test.file != module and (not targets or any(_targets(target, test) for target in targets))
        ]
        try:
            selected = _deselect(collected, spec.markers, spec.keywords)
        except _UsageError as exc:
            return self._usage_error(exc, command, terminal), ()
        deselected = len(collected) - len(selected)
        summary = Summary(total=len(selected), errors=1, deselected=deselected)
        terminal.collected(len(collected), deselected, [error])
        if isinstance(spec, CollectSpec):  # --collect-only -q lists what did collect
            terminal.collected_items([test.node_id for test in selected])
            words = collect_words(len(collected), deselected, 1, 0.0)
        else:
            words = run_words(summary)
        terminal.session_finished(words, interruption=interrupted(1))
        report = RunReport(
            termination=Termination(kind="exited", exit_code=2),
            command=command,
            duration=0.0,
            summary=summary,
            collection_errors=(error,),
            stdout=terminal.text(),
        )
        return report, tuple(selected)

    def _import_traceback(self, module: str, message: str) -> str:
        source = f"{module}:1: in <module>\n    ???\nE   {message}"
        if not message.startswith(("ModuleNotFoundError", "ImportError")):
            return source
        return (
            f"ImportError while importing test module '{self._root or '.'}/{module}'.\n"
            "Hint: make sure your test modules/packages have valid Python names.\n"
            f"Traceback:\n{source}"
        )

    def _killed(
        self,
        failure: _PendingFailure,
        victim: ScriptedTest | None,
        spec: RunSpec | CollectSpec,
        command: tuple[str, ...],
        reports: list[ReportedTest],
        terminal: FakeTerminal,
    ) -> RunReport:
        finished = tuple(
            r for r in reports if isinstance(spec, RunSpec) and (spec.include_passed or r.outcome != "passed")
        )
        if failure.kind == "timeout":
            return RunReport(
                termination=Termination(kind="timed_out"),
                command=command,
                duration=spec.timeout,
                tests=finished,
                stdout=terminal.text(),
                stderr=self._stack_dump(failure, victim),
            )
        signal = failure.signal or "SIGSEGV"
        stderr = ""
        title = _FAULTHANDLER_TITLES.get(signal)
        if title is not None:
            stderr = f"Fatal Python error: {title}\n\n{self._stack_dump(failure, victim)}"
        return RunReport(
            termination=Termination(kind="signalled", signal=signal),
            command=command,
            duration=round(sum(r.duration for r in reports), 6),
            tests=finished,
            stdout=terminal.text(),
            stderr=stderr,
        )

    def _stack_dump(self, failure: _PendingFailure, victim: ScriptedTest | None) -> str:
        """faulthandler's dump of the main thread, down to the test it was in (none while collecting)."""
        dump = "Current thread 0x00007f0000000001 (most recent call first):\n"
        if victim is not None:
            line = failure.line or (victim.line + 1 if victim.line else 1)
            dump += f'  File "{self._root or "."}/{victim.file}", line {line} in {victim.function}\n'
        return dump + "\n"

    @staticmethod
    def _usage_error(error: _UsageError, command: tuple[str, ...], terminal: FakeTerminal) -> RunReport:
        terminal.collected(error.collected, 0)
        terminal.session_finished("no tests ran in 0.00s")
        return RunReport(
            termination=Termination(kind="exited", exit_code=4),
            command=command,
            duration=0.0,
            stdout=terminal.text(),
            stderr="".join(f"{line}\n\n" for line in error.lines),
        )

    # -- commands, as the subprocess runner reports them (our private reporter options left out) --

    @staticmethod
    def _run_command(spec: RunSpec) -> tuple[str, ...]:
        return ("fake", "-m", "pytest", *run_options(spec), "--", *spec.node_ids)

    @staticmethod
    def _collect_command(spec: CollectSpec, targets: Sequence[str]) -> tuple[str, ...]:
        return ("fake", "-m", "pytest", *collect_options(spec), "--", *targets)


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


def _deselect(collected: Sequence[ScriptedTest], markers: str | None, keywords: str | None) -> list[ScriptedTest]:
    """What survives `-k` and then `-m`, or _UsageError with pytest's words for a bad expression."""
    selected = list(collected)
    keyword_text = (keywords or "").lstrip()  # pytest strips leading blanks from -k only
    if keyword_text:
        try:
            expression = compile_expression(keyword_text)
            selected = [test for test in selected if expression.evaluate(_KeywordMatcher(test))]
        except ExpressionError as exc:
            raise _UsageError([f"ERROR: Wrong expression passed to '-k': {exc}"], len(collected)) from None
        except _KeywordsDoNotTakeArguments:
            raise _UsageError(["ERROR: Keyword expressions do not support call parameters."], len(collected)) from None
    if markers:
        try:
            expression = compile_expression(markers)
        except ExpressionError as exc:
            raise _UsageError([f"ERROR: Wrong expression passed to '-m': {exc}"], len(collected)) from None
        selected = [test for test in selected if expression.evaluate(_MarkMatcher(test))]
    return selected


def _under(file: str, path: str) -> bool:
    return path in (".", file) or file.startswith(path + "/")


@dataclass(frozen=True)
class _Argument:
    """A node id argument split as pytest splits it: path, `::` parts, and a parameter id."""

    index: int
    text: str
    path: str
    parts: tuple[str, ...]
    parametrization: str | None

    @classmethod
    def parse(cls, index: int, text: str) -> _Argument:
        path, _, rest = text.partition("::")
        names, bracket, parameters = rest.partition("[")
        parts = tuple(names.split("::")) if names else ()
        return cls(index, text, posixpath.normpath(path), parts, bracket + parameters if bracket else None)

    def selects(self, test: ScriptedTest) -> bool:
        if not self.parts:
            return _under(test.file, self.path)
        target = "::".join([self.path, *self.parts]) + (self.parametrization or "")
        return test.node_id == target or test.node_id.startswith((target + "::", target + "["))

    def subsumes(self, other: _Argument) -> bool:
        """pytest's `is_collection_argument_subsumed_by(other, self)`."""
        if self.path != other.path:
            return not self.parts and _under(other.path, self.path)
        if len(self.parts) > len(other.parts) or other.parts[: len(self.parts)] != self.parts:
            return False
        return self.parametrization is None or self.parametrization == other.parametrization


def _without_overlaps(arguments: list[_Argument]) -> list[_Argument]:
    """pytest's `normalize_collection_arguments`: drop arguments another one contains, keep order."""
    ordered = sorted(arguments, key=lambda a: (a.path.split("/"), a.parts, a.parametrization or ""))
    kept: list[_Argument] = []
    for argument in ordered:
        if not kept or not kept[-1].subsumes(argument):
            kept.append(argument)
    return sorted(kept, key=lambda a: a.index)


def _targets(target: str, test: ScriptedTest) -> bool:
    return _Argument.parse(0, target).selects(test)


def _is_victim(test: ScriptedTest, failure: _PendingFailure, selection: _Selection) -> bool:
    if failure.node_id is None:
        return test is selection.selected[0]
    return test.node_id == failure.node_id


def _as_collection(
    report: RunReport, collected: Sequence[ScriptedTest], *, finished: bool, max_listed: int | None = None
) -> CollectionReport:
    listed = collected[:max_listed]
    return CollectionReport(
        termination=report.termination,
        command=report.command,
        duration=report.duration,
        finished=finished,
        tests=tuple(_collected(test) for test in listed),
        unlisted=len(collected) - len(listed),
        deselected=report.summary.deselected if report.summary else 0,
        collection_errors=report.collection_errors,
        stdout=report.stdout,
        stderr=report.stderr,
    )


def _collected(test: ScriptedTest) -> CollectedTest:
    return CollectedTest(node_id=test.node_id, file=test.file, line=test.line, markers=test.markers)


def _field_problems(prefix: str, exc: ValidationError) -> list[str]:
    problems = []
    for error in exc.errors():
        location = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"])
        field = f"{prefix}{location}" or "value"
        reason = error["msg"].removeprefix("Value error, ")
        if error["type"] not in ("missing", "extra_forbidden") and "input" in error:
            reason += f" (got {error['input']!r})"
        if error["type"] == "extra_forbidden":
            reason = f"unknown field; the fields are {', '.join(ScriptedTest.model_fields)}"
        problems.append(f"{field.lstrip('.')}: {reason}")
    return problems


def recording_document(root: str, tests: Iterable[ScriptedTest]) -> dict[str, Any]:
    """A recording in its JSON shape: versioned, with one entry per test."""
    return {
        "format": RECORDING_FORMAT,
        "version": RECORDING_VERSION,
        "root": root,
        "tests": [test.model_dump(mode="json") for test in tests],
    }


def _parse_recording(document: Any, where: str) -> tuple[str, list[ScriptedTest]]:
    if not isinstance(document, Mapping):
        raise ScriptError(f"{where}: a recording is a JSON object, not {type(document).__name__}")
    if document.get("format") != RECORDING_FORMAT:
        raise ScriptError(
            f"{where}: format: expected {RECORDING_FORMAT!r}, got {document.get('format')!r}; "
            "this is not a pytest-mcp recording"
        )
    if document.get("version") != RECORDING_VERSION:
        raise ScriptError(
            f"{where}: version: this pytest-mcp reads version {RECORDING_VERSION} recordings, "
            f"not {document.get('version')!r}"
        )
    unknown = sorted(set(document) - {"format", "version", "root", "tests"})
    if unknown:
        raise ScriptError(f"{where}: {unknown[0]}: unknown field; the fields are format, version, root, tests")
    root = document.get("root")
    if not isinstance(root, str) or not root:
        raise ScriptError(f"{where}: root: must be the recorded project's root directory, got {root!r}")
    entries = document.get("tests")
    if not isinstance(entries, list):
        raise ScriptError(f"{where}: tests: must be a list of tests, got {type(entries).__name__}")
    tests: list[ScriptedTest] = []
    problems: list[str] = []
    for index, entry in enumerate(entries):
        try:
            tests.append(ScriptedTest.model_validate(entry))
        except ValidationError as exc:
            problems += _field_problems(f"tests[{index}]", exc)
    if problems:
        raise ScriptError(f"{where}: " + "; ".join(problems))
    return root, tests
