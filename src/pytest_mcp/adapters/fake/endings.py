"""How a call to the fake ends when it does not end well: as a real pytest ending of that kind ends."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from pytest_mcp.adapters.fake.script import ScriptedTest
from pytest_mcp.adapters.fake.selection import Selection, UsageError, deselect, targets
from pytest_mcp.adapters.fake.terminal import FakeTerminal, collect_words, interrupted
from pytest_mcp.domain.models import CollectionError, ReportedTest, Summary
from pytest_mcp.domain.runs import CollectSpec, RunReport, RunSpec, Termination

FailureKind = Literal["timeout", "crash", "collection_error", "usage_error", "internal_error"]
FAILURE_KINDS: tuple[FailureKind, ...] = get_args(FailureKind)

# What faulthandler prints for the fatal signals it handles; other signals leave no dump.
_FAULTHANDLER_TITLES = {
    "SIGSEGV": "Segmentation fault",
    "SIGFPE": "Floating-point exception",
    "SIGABRT": "Aborted",
    "SIGBUS": "Bus error",
    "SIGILL": "Illegal instruction",
}


@dataclass(frozen=True)
class ScriptedFailure:
    """An ending `fail_with` asked for (FakeTestRunner.fail_with says what each kind does)."""

    kind: FailureKind
    message: str | None
    node_id: str | None
    signal: str | None
    line: int | None
    on: Literal["run", "collect"] | None

    @property
    def kills(self) -> bool:
        return self.kind in ("timeout", "crash")

    def strikes(self, test: ScriptedTest, selection: Selection) -> bool:
        """Whether the run dies at `test`: the scripted victim, or the first selected test."""
        if self.node_id is None:
            return test is selection.selected[0]
        return test.node_id == self.node_id


@dataclass(frozen=True)
class Call:
    """One call to the fake, as its endings need it: what was asked, and where the answer goes."""

    spec: RunSpec | CollectSpec
    targets: tuple[str, ...]
    command: tuple[str, ...]
    terminal: FakeTerminal
    root: str | None


def usage_error(error: UsageError, call: Call) -> RunReport:
    call.terminal.collected(error.collected, 0)
    call.terminal.session_finished("no tests ran in 0.00s")
    return RunReport(
        termination=Termination(kind="exited", exit_code=4),
        command=call.command,
        duration=0.0,
        stdout=call.terminal.text(),
        stderr="".join(f"{line}\n\n" for line in error.lines),
    )


def before_any_test(
    failure: ScriptedFailure | None, tests: Sequence[ScriptedTest], call: Call
) -> tuple[RunReport, tuple[ScriptedTest, ...]] | None:
    """Endings before any test runs (usage, internal, collection errors), with what did collect."""
    if failure is None:
        return None
    if failure.kind == "usage_error":
        first = call.targets[0] if call.targets else "tests/missing.py"
        line = failure.message or f"file or directory not found: {first}"
        line = line if line.startswith("ERROR:") else f"ERROR: {line}"
        return usage_error(UsageError([line], 0), call), ()
    if failure.kind == "internal_error":
        exception = failure.message or "RuntimeError: scripted internal error"
        call.terminal.collected(len(tests), 0)
        call.terminal.internal_error(
            [
                "Traceback (most recent call last):",
                f'  File "{call.root or "."}/conftest.py", line 1, in pytest_collection_modifyitems',
                f"    raise {exception.split(':', 1)[0]}(...)",
                exception,
            ]
        )
        call.terminal.session_finished("no tests ran in 0.00s")
        report = RunReport(
            termination=Termination(kind="exited", exit_code=3),
            command=call.command,
            duration=0.0,
            stdout=call.terminal.text(),
        )
        return report, ()
    if failure.kind == "collection_error":
        return _collection_error(failure, tests, call)
    return None


def _collection_error(
    failure: ScriptedFailure, tests: Sequence[ScriptedTest], call: Call
) -> tuple[RunReport, tuple[ScriptedTest, ...]]:
    module = posixpath.normpath(failure.node_id or "tests/test_broken.py")
    message = failure.message or "ModuleNotFoundError: No module named 'missing'"
    error = CollectionError(node_id=module, message=message, traceback=_import_traceback(module, message, call.root))
    # The broken module collects nothing; every other targeted test collects as usual.
    collected = [
        test
        for test in tests
        if test.file != module and (not call.targets or any(targets(target, test) for target in call.targets))
    ]
    try:
        selected = deselect(collected, call.spec.markers, call.spec.keywords)
    except UsageError as exc:
        return usage_error(exc, call), ()
    deselected = len(collected) - len(selected)
    summary = Summary(total=len(selected), errors=1, deselected=deselected)
    call.terminal.collected(len(collected), deselected, [error])
    if isinstance(call.spec, CollectSpec):  # --collect-only -q lists what did collect
        call.terminal.collected_items([test.node_id for test in selected])
        words = collect_words(len(collected), deselected, 1, 0.0)
    else:
        words = summary.line()
    call.terminal.session_finished(words, interruption=interrupted(1))
    report = RunReport(
        termination=Termination(kind="exited", exit_code=2),
        command=call.command,
        duration=0.0,
        summary=summary,
        collection_errors=(error,),
        stdout=call.terminal.text(),
    )
    return report, tuple(selected)


def _import_traceback(module: str, message: str, root: str | None) -> str:
    source = f"{module}:1: in <module>\n    ???\nE   {message}"
    if not message.startswith(("ModuleNotFoundError", "ImportError")):
        return source
    return (
        f"ImportError while importing test module '{root or '.'}/{module}'.\n"
        "Hint: make sure your test modules/packages have valid Python names.\n"
        f"Traceback:\n{source}"
    )


def killed(failure: ScriptedFailure, victim: ScriptedTest | None, reports: list[ReportedTest], call: Call) -> RunReport:
    """A run that overran its timeout or was killed by a signal at `victim` (None: while collecting)."""
    spec = call.spec
    finished = tuple(r for r in reports if isinstance(spec, RunSpec) and (spec.include_passed or r.outcome != "passed"))
    if failure.kind == "timeout":
        return RunReport(
            termination=Termination(kind="timed_out"),
            command=call.command,
            duration=spec.timeout,
            tests=finished,
            stdout=call.terminal.text(),
            stderr=_stack_dump(failure, victim, call.root),
        )
    signal = failure.signal or "SIGSEGV"
    title = _FAULTHANDLER_TITLES.get(signal)
    return RunReport(
        termination=Termination(kind="signalled", signal=signal),
        command=call.command,
        duration=round(sum(r.duration for r in reports), 6),
        tests=finished,
        stdout=call.terminal.text(),
        stderr=f"Fatal Python error: {title}\n\n{_stack_dump(failure, victim, call.root)}" if title else "",
    )


def _stack_dump(failure: ScriptedFailure, victim: ScriptedTest | None, root: str | None) -> str:
    """faulthandler's dump of the main thread, down to the test it was in (none while collecting)."""
    dump = "Current thread 0x00007f0000000001 (most recent call first):\n"
    if victim is not None:
        line = failure.line or (victim.line + 1 if victim.line else 1)
        dump += f'  File "{root or "."}/{victim.file}", line {line} in {victim.function}\n'
    return dump + "\n"
