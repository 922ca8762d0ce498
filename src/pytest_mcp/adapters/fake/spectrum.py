"""What the fake's runs record: the project functions scripted tests run, where they are, what changed.

The project is kept as a working tree is: `change` is an edit from the moment it is made, and every
run after it meets the new code. A real run records two things (ADR 0020), and so does the fake:
- **the digests** of every function of the project files its tests imported, on every run, passing
  or not: what tells the next run which functions changed since (`state`);
- **the spectrum**, the functions each test entered: on Python 3.12 and later by the run itself,
  every test, passing ones as counts (`in_run`); before 3.12 by a second pass after a failing run,
  the failing tests again, then the rest of their modules (`second_pass`).
The fake plays them back from the script: each test's `runs`, each function's lines (`define`) and
edits (`change`); a digest stands for the code (an edit gives a new one), as the real side's digests
of a syntax tree do. Which of the two recordings a run makes follows the scripted interpreter
(`script_environment(python_version=...)`), as the real plugin's choice does. The domain ranks them.
"""

from __future__ import annotations

import hashlib
import signal
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_mcp.adapters.fake.failures import ScriptedFailure
from pytest_mcp.adapters.fake.script import ScriptedTest, ScriptError, checked_function
from pytest_mcp.adapters.fake.selection import UsageError, deselect
from pytest_mcp.domain.environment import Recorder
from pytest_mcp.domain.localization import (
    CodeFunction,
    CodeState,
    Spectrum,
    Trace,
    TraceOutcome,
    function_of,
    is_test_code,
)
from pytest_mcp.domain.runs import LocalizeSpec

NOTHING_SCRIPTED = (
    "the fake runner was told no function a test runs: script(..., runs=['shop/price.py::gross_price']) "
    "or trace(node_id, 'shop/price.py::gross_price') scripts them"
)
"""The localization's reason when no scripted test runs a function: how to script them."""
_TRACED: Mapping[str, TraceOutcome] = {
    "passed": "passed",
    "xpassed": "passed",
    "failed": "failed",
    "error": "failed",
    "skipped": "skipped",  # a skip or an xfail says nothing of the code
    "xfailed": "skipped",
}


def checked_lines(value: object) -> tuple[int, int]:
    """A function's line range from `"12-19"`, `12` or `(12, 19)`; ValueError saying why not."""
    first: object
    last: object
    if isinstance(value, str):
        first_text, _, last_text = value.partition("-")
        if not first_text.strip().isdigit() or (last_text and not last_text.strip().isdigit()):
            raise ValueError(f"{value!r} is not a line range like '12-19' or '12'")
        first, last = int(first_text), int(last_text or first_text)
    elif isinstance(value, int) and not isinstance(value, bool):
        first = last = value
    elif isinstance(value, Sequence) and len(value) == 2:
        first, last = value
    else:
        raise ValueError(f"must be a line range like '12-19', a line, or (first, last); got {value!r}")
    if isinstance(first, bool) or isinstance(last, bool) or not isinstance(first, int) or not isinstance(last, int):
        raise ValueError(f"must be line numbers, got {value!r}")
    if first < 1 or last < first:
        raise ValueError(f"{value!r} is not a range of lines from 1 on, the first no later than the last")
    return first, last


class ScriptedCode:
    """The project's functions as scripted: each one's line range, how often it was edited since git's HEAD,
    those that run as the tests are collected (a module's import-time code), and those behind a cache."""

    def __init__(self) -> None:
        self.lines: dict[str, tuple[int, int]] = {}
        self.edits: dict[str, int] = {}
        self.at_import: dict[str, None] = {}
        self.cached: dict[str, None] = {}

    def run_at_import(self, functions: Sequence[object]) -> None:
        for index, function in enumerate(functions):
            try:
                self.at_import[checked_function(function)] = None
            except ValueError as exc:
                raise ScriptError(f"functions[{index}]: {exc}") from None

    def define(self, function: object, lines: object, tests: Iterable[ScriptedTest]) -> None:
        key = self._known(function, "function", tests)
        try:
            self.lines[key] = checked_lines(lines)
        except ValueError as exc:
            raise ScriptError(f"lines: {exc}") from None

    def change(self, functions: Sequence[object], tests: Iterable[ScriptedTest]) -> None:
        tests = list(tests)
        keys = [self._known(function, f"functions[{index}]", tests) for index, function in enumerate(functions)]
        for key in keys:
            self.edits[key] = self.edits.get(key, 0) + 1

    def cache(self, functions: Sequence[object], tests: Iterable[ScriptedTest]) -> None:
        tests = list(tests)
        for index, function in enumerate(functions):
            self.cached[self._known(function, f"functions[{index}]", tests)] = None

    def document(self) -> dict[str, dict[str, Any]]:
        """`{key: {"lines": "12-19", "changed": true, "at_import": true, "cached": true}}` for each defined,
        changed, import-time or cached function, as scripts and recordings hold them."""
        entries: dict[str, dict[str, Any]] = {}
        for key in dict.fromkeys([*self.lines, *self.edits, *self.at_import, *self.cached]):
            entry: dict[str, Any] = {}
            if key in self.lines:
                first, last = self.lines[key]
                entry["lines"] = f"{first}-{last}" if last > first else str(first)
            if self.edits.get(key):
                entry["changed"] = True
            if key in self.at_import:
                entry["at_import"] = True
            if key in self.cached:
                entry["cached"] = True
            entries[key] = entry
        return entries

    def read(self, document: object, tests: Iterable[ScriptedTest], where: str) -> None:
        """Take `document` (the shape `document()` writes); ScriptError naming each bad field under `where`."""
        if not isinstance(document, Mapping):
            raise ScriptError(f"{where}: must be a mapping of function key to fields, not {type(document).__name__}")
        tests = list(tests)
        problems = []
        for key, fields in document.items():
            place = f"{where}[{key!r}]"
            if not isinstance(fields, Mapping):
                problems.append(
                    f"{place}: must be a mapping with 'lines', 'changed', 'at_import' and 'cached', not {fields!r}"
                )
                continue
            unknown = sorted(set(fields) - {"lines", "changed", "at_import", "cached"})
            if unknown:
                problems.append(
                    f"{place}.{unknown[0]}: unknown field; the fields are lines, changed, at_import, cached"
                )
                continue
            flags = {name: fields.get(name, False) for name in ("at_import", "cached")}
            wrong = [name for name, flag in flags.items() if not isinstance(flag, bool)]
            if wrong:
                problems.append(f"{place}.{wrong[0]}: must be true or false, not {flags[wrong[0]]!r}")
                continue
            at_import = flags["at_import"]
            try:
                if at_import:
                    self.run_at_import([key])
                function = self._known(key, place, tests)
                lines = checked_lines(fields["lines"]) if "lines" in fields else None
            except ValueError as exc:  # ScriptError is one
                problems.append(str(exc) if isinstance(exc, ScriptError) else f"{place}.lines: {exc}")
                continue
            changed = fields.get("changed", False)
            if not isinstance(changed, bool):
                problems.append(f"{place}.changed: must be true or false, not {changed!r}")
                continue
            if lines is not None:
                self.lines[function] = lines
            if flags["cached"]:
                self.cached[function] = None
            if changed:
                self.edits[function] = self.edits.get(function, 0) + 1
        if problems:
            raise ScriptError("; ".join(problems))

    def _known(self, function: object, where: str, tests: Iterable[ScriptedTest]) -> str:
        """A function key that some scripted test runs, or that runs at import; ScriptError naming `where`
        otherwise."""
        try:
            key = checked_function(function)
        except ValueError as exc:
            raise ScriptError(f"{where}: {exc}") from None
        if key not in self.at_import and not any(key in test.functions for test in tests):
            raise ScriptError(
                f"{where}: no scripted test runs {key!r}; script the tests that do first, with runs=[{key!r}], "
                "or say that it runs at import (run_at_import)"
            )
        return key

    def function(self, key: str, test_modules: Iterable[str], *, head: bool = True) -> CodeFunction:
        """The function as a real recording reads it: its lines, and (project code only) its digest now and,
        with `head`, at git's HEAD (the script's HEAD is the code before any `change`)."""
        file, name = key.split("::", 1)
        first, last = self.lines.get(key, (1, 1))
        if is_test_code(file, test_modules):  # digested as a real run digests test code: never at HEAD
            return CodeFunction(file=file, name=name, first=first, last=last, digest=self.digest(key))
        return CodeFunction(
            file=file,
            name=name,
            first=first,
            last=last,
            digest=self.digest(key),
            head=_digest(key, 0) if head else None,
            at_head=head,
        )

    def digest(self, key: str) -> str:
        """The function's digest as the tree has it now: a new one at each edit."""
        return _digest(key, self.edits.get(key, 0))

    def state(self, ran: Iterable[ScriptedTest], scripted: Iterable[ScriptedTest]) -> CodeState:
        """The digests a real run takes on every run: each function of the project files the tests that ran
        imported (those their `runs` are in), every one the script knows there, then the test functions
        that ran, as a real run digests its test modules too."""
        ran = list(ran)
        test_modules = {test.file for test in ran}
        entered = [*(key for test in ran for key in test.functions), *(self.at_import if ran else ())]
        imported = dict.fromkeys(key.split("::", 1)[0] for key in entered)
        files = tuple(file for file in imported if not is_test_code(file, test_modules))
        known = dict.fromkeys(
            [*(key for test in scripted for key in test.functions), *self.lines, *self.edits, *self.at_import]
        )
        wanted = set(files)
        digests = {key: self.digest(key) for key in known if key.split("::", 1)[0] in wanted}
        own = [function_of(test.node_id) for test in ran if not _is_doctest(test.node_id)]
        digests.update((key, self.digest(key)) for key in own)
        cached = tuple(key for key in self.cached if key in digests)
        return CodeState(digests=digests, files=(*files, *dict.fromkeys(test.file for test in ran)), cached=cached)


def _digest(key: str, edits: int) -> str:
    return hashlib.sha256(f"{key}\x1f{edits}".encode()).hexdigest()[:16]


def _killed_before_a_test(crash: str | None, seconds: float) -> str:
    """The real runner's words for a pass that recorded nothing: its time spent, or the crash's exit code."""
    if crash is None:
        return f"the second pass's {seconds:.1f}s were spent before a test was repeated"
    return f"the second pass ended with exit code {-signal.Signals[crash].value} before a test was repeated"


def _is_doctest(node_id: str) -> bool:
    """A doctest's node id names a dotted object (`src/shop/price.py::shop.price.gross_price`); a test
    function's names are identifiers, dots only in a parameter id. Its module is the project's code,
    as the real pass counts it (only test functions' modules are test modules)."""
    _, _, names = node_id.partition("::")
    return "." in names.split("[", 1)[0]


_IN_RUN: Mapping[str, TraceOutcome | None] = {
    "passed": "passed",
    "failed": "failed",
    "error": "failed",  # a setup or teardown error is a failing report, as the real recorder counts it
    "skipped": None,  # a skip, an xfail or an xpass says nothing of the code
    "xfailed": None,
    "xpassed": None,
}


def in_run(ran: Sequence[ScriptedTest], code: ScriptedCode, recorder: Recorder) -> Spectrum | None:
    """What a run records of itself on Python 3.12 and later: the functions run at import, before the first
    test, then each failing test's functions, the passing tests' counts per function, in run order;
    digests at git's HEAD only when a test failed, as the real server reads them then only. None when no
    scripted function runs: nothing to name."""
    if not ran or not (code.at_import or any(test.runs for test in ran)):
        return None
    functions: dict[str, int] = {key: index for index, key in enumerate(code.at_import)}
    traces: list[Trace] = []
    passing: dict[int, int] = {}
    passing_lines: dict[int, dict[int, int]] = {}
    passing_total = 0
    for test in ran:
        ids = tuple(sorted({functions.setdefault(key, len(functions)) for key in test.functions}))
        lines = tuple(sorted({(functions[key], line) for key, line in test.lines}))
        kind = _IN_RUN[test.outcome]
        if kind == "failed":
            traces.append(
                Trace(
                    node_id=test.node_id,
                    outcome="failed",
                    functions=ids,
                    lines=lines,
                    started_process=test.starts_process,
                )
            )
        elif kind == "passed":
            passing_total += 1
            for index in ids:
                passing[index] = passing.get(index, 0) + 1
            for index, line in lines:
                of = passing_lines.setdefault(index, {})
                of[line] = of.get(line, 0) + 1
    test_modules = tuple(sorted({test.file for test in ran if not _is_doctest(test.node_id)}))
    head = bool(traces)
    return Spectrum(
        functions=tuple(
            code.function(key, test_modules, head=head).model_copy(
                update={
                    "passing": passing.get(index, 0),
                    "passing_lines": tuple(sorted(passing_lines.get(index, {}).items())),
                }
            )
            for key, index in functions.items()
        ),
        tests=tuple(traces),
        passing_total=passing_total,
        collected=tuple(range(len(code.at_import))),
        test_modules=test_modules,
        recorder=recorder,
        in_run=True,
    )


def second_pass(
    spec: LocalizeSpec,
    tests: Sequence[ScriptedTest],
    code: ScriptedCode,
    kills: Sequence[ScriptedFailure],
    recorder: Recorder = "sys.setprofile",
) -> Spectrum | str:
    """What a second pass records: the failing tests again (a flaky one passes), then the first
    `spec.others` of the rest of their modules' tests (those `-k`/`-m` keep, in the script's order),
    each with the functions it runs; as the real pass's safety times them on the scripted durations,
    no test starts after `spec.last_start`, and a test still under way at `spec.seconds` is killed
    with the pass, unrecorded; a test scripted to hang or crash stops the pass there, as a real
    one's would."""
    if not any(test.runs for test in tests):
        return NOTHING_SCRIPTED
    by_id = {test.node_id: test for test in tests}
    failing = [by_id[node_id] for node_id in spec.failing if node_id in by_id]
    repeated = {test.node_id for test in failing}
    try:
        rest = deselect(
            [test for module in spec.modules for test in tests if test.file == module and test.node_id not in repeated],
            spec.run.markers,
            spec.run.keywords,
        )
    except UsageError:  # pragma: no cover - the run that came first refused the same expression
        rest = []
    ordered = [*failing, *rest[: spec.others]]
    test_modules = tuple(sorted({test.file for test in ordered if not _is_doctest(test.node_id)}))
    functions: dict[str, int] = {}
    traces: list[Trace] = []
    spent = 0.0
    stopped: str | None = None
    for test in ordered:
        if traces and spent >= spec.last_start:  # no test starts in the budget's last quarter
            stopped = "deadline"
            break
        striking = next((failure for failure in kills if failure.strikes(test, ordered[0])), None)
        crash = (striking.signal or "SIGSEGV") if striking is not None and striking.kind != "timeout" else None
        # A test that hangs, or runs past the budget, is under way when the pass is killed at it.
        timed_out = crash is None and (striking is not None or spent + test.duration > spec.seconds)
        if crash is not None or timed_out:  # what the pass wrote before stays, its end line never comes
            if not traces:
                return _killed_before_a_test(crash, spec.seconds)
            stopped = "stopped before it finished"
            spent = spec.seconds if timed_out else spent
            break
        again = test.node_id in repeated
        outcome = ("passed" if test.flaky else "failed") if again else _TRACED[test.outcome]
        ids = tuple(functions.setdefault(key, len(functions)) for key in test.functions)
        traces.append(
            Trace(
                node_id=test.node_id,
                outcome=outcome,
                functions=tuple(sorted(ids)),
                started_process=test.starts_process,
            )
        )
        spent += test.duration
    return Spectrum(
        functions=tuple(code.function(key, test_modules) for key in functions),
        tests=tuple(traces),
        test_modules=test_modules,
        recorder=recorder,
        stopped=stopped,
        seconds=round(spent, 6),
    )
