"""How a call to the fake ends when it does not end well: as a real pytest ending of that kind ends."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_mcp.adapters.fake.failures import ScriptedFailure
from pytest_mcp.adapters.fake.script import ROOT_MARK, ScriptedTest
from pytest_mcp.adapters.fake.selection import UsageError
from pytest_mcp.adapters.fake.terminal import FakeTerminal, collect_words, interrupted
from pytest_mcp.domain.models import CollectedTest, CollectionError, ReportedTest, Summary, count_by_module
from pytest_mcp.domain.runs import CollectionReport, CollectSpec, RunReport, RunSpec, Termination

# What faulthandler prints for the fatal signals it handles; other signals leave no dump.
_FAULTHANDLER_TITLES = {
    "SIGSEGV": "Segmentation fault",
    "SIGFPE": "Floating-point exception",
    "SIGABRT": "Aborted",
    "SIGBUS": "Bus error",
    "SIGILL": "Illegal instruction",
}
DEFAULT_BROKEN_MODULE = "tests/test_broken.py"


@dataclass(frozen=True)
class Call:
    """One call to the fake, as its endings need it: what was asked, and where the answer goes."""

    spec: RunSpec | CollectSpec
    targets: tuple[str, ...]
    command: tuple[str, ...]
    terminal: FakeTerminal
    root: str | None

    @property
    def shown_root(self) -> str:
        """The root as it appears in tracebacks: the runner's, or `.` when it has none."""
        return self.root or "."


START_UP_SECONDS = 0.25
"""pytest's start-up and collection as the fake counts them in a finished run's wall time (not in its
summary, which times the tests): a real run never takes 0 s, and the second pass's time is a share of it."""


def finished(
    call: Call,
    reports: Sequence[ReportedTest],
    sizes: tuple[int, int],
    *,
    stopped: bool,
    nothing_ran_is_clean: bool,
    **facts: Any,
) -> RunReport:
    """A session that ran to its end, or to --maxfail: pytest's counts, summary line and exit code.
    `sizes` is (selected, collected); `facts` are the report's other members (coverage, ...)."""
    selected, collected = sizes
    counts = Counter[str](report.outcome for report in reports)
    counts["deselected"] = collected - selected
    duration = round(sum(report.duration for report in reports), 6)
    summary = Summary.from_counts(counts, total=selected, duration=duration)
    maxfail = getattr(call.spec, "maxfail", None)
    call.terminal.session_finished(summary.line(), stop=f"stopping after {maxfail} failures" if stopped else None)
    failed = counts["failed"] + counts["error"]
    # pytest-testmon makes "no tests ran" (5) a clean run (0) when it left unaffected tests out.
    exit_code = (1 if failed else 0) if selected else (0 if nothing_ran_is_clean else 5)
    include_passed = getattr(call.spec, "include_passed", False)
    return RunReport(
        termination=Termination(kind="exited", exit_code=exit_code),
        command=call.command,
        duration=round(START_UP_SECONDS + duration, 6),
        summary=summary,
        tests=tuple(report for report in reports if include_passed or report.outcome != "passed"),
        stdout=call.terminal.text(),
        **facts,
    )


def usage_error(error: UsageError, call: Call, errors: Sequence[CollectionError] = ()) -> RunReport:
    """pytest refused the call (exit 4): its `ERROR:` lines on stderr, after any collection errors it met."""
    call.terminal.collected(error.collected, 0, errors)
    summary = Summary(errors=len(errors))
    call.terminal.session_finished(summary.line())
    return RunReport(
        termination=Termination(kind="exited", exit_code=4),
        command=call.command,
        duration=0.0,
        collection_errors=tuple(errors),
        stdout=call.terminal.text(),
        stderr="".join(f"{line}\n\n" for line in error.lines),
    )


def whole_call_ending(failure: ScriptedFailure, tests: Sequence[ScriptedTest], call: Call) -> RunReport | None:
    """Endings before anything is collected: a usage error, or an internal error in a hook."""
    if failure.kind == "usage_error":
        first = call.targets[0] if call.targets else "tests/missing.py"
        line = failure.message or f"file or directory not found: {first}"
        line = line if line.startswith("ERROR:") else f"ERROR: {line}"
        return usage_error(UsageError([line], 0), call)
    if failure.kind == "internal_error":
        exception = failure.message or "RuntimeError: scripted internal error"
        call.terminal.collected(len(tests), 0)
        call.terminal.internal_error(
            [
                "Traceback (most recent call last):",
                f'  File "{call.shown_root}/conftest.py", line 1, in pytest_collection_modifyitems',
                f"    raise {exception.split(':', 1)[0]}(...)",
                exception,
            ]
        )
        call.terminal.session_finished("no tests ran in 0.00s")
        return RunReport(
            termination=Termination(kind="exited", exit_code=3),
            command=call.command,
            duration=0.0,
            stdout=call.terminal.text(),
        )
    return None


def collection_error(module: str, failure: ScriptedFailure, root: str | None) -> CollectionError:
    """What pytest reports for a module that cannot be imported."""
    message = failure.message or "ModuleNotFoundError: No module named 'missing'"
    shown = root or "."
    traceback = failure.traceback.replace(ROOT_MARK, shown) if failure.traceback else None
    return CollectionError(
        node_id=module, message=message, traceback=traceback or _import_traceback(module, message, shown)
    )


def interrupted_by_collection_errors(
    errors: Sequence[CollectionError],
    collected: int,
    selected: Sequence[ScriptedTest],
    call: Call,
    status: str | None = None,
) -> RunReport:
    """Exit 2: pytest collected what it could, then stopped before running anything."""
    deselected = collected - len(selected)
    summary = Summary(total=len(selected), errors=len(errors), deselected=deselected)
    call.terminal.collected(collected, deselected, errors, status)
    if isinstance(call.spec, CollectSpec):  # --collect-only -q lists what did collect
        call.terminal.collected_items([test.node_id for test in selected])
        words = collect_words(collected, deselected, len(errors), 0.0)
    else:
        words = summary.line()
    call.terminal.session_finished(words, interruption=interrupted(len(errors)))
    return RunReport(
        termination=Termination(kind="exited", exit_code=2),
        command=call.command,
        duration=0.0,
        summary=summary,
        collection_errors=tuple(errors),
        stdout=call.terminal.text(),
    )


def _import_traceback(module: str, message: str, root: str) -> str:
    source = f"{module}:1: in <module>\n    ???\nE   {message}"
    if not message.startswith(("ModuleNotFoundError", "ImportError")):
        return source
    return (
        f"ImportError while importing test module '{root}/{module}'.\n"
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
            stderr=_stack_dump(failure, victim, call.shown_root),
        )
    signal = failure.signal or "SIGSEGV"
    title = _FAULTHANDLER_TITLES.get(signal)
    return RunReport(
        termination=Termination(kind="signalled", signal=signal),
        command=call.command,
        duration=round(sum(r.duration for r in reports), 6),
        tests=finished,
        stdout=call.terminal.text(),
        stderr=f"Fatal Python error: {title}\n\n{_stack_dump(failure, victim, call.shown_root)}" if title else "",
    )


def _stack_dump(failure: ScriptedFailure, victim: ScriptedTest | None, root: str) -> str:
    """faulthandler's dump of the main thread, down to the test it was in (none while collecting)."""
    dump = "Current thread 0x00007f0000000001 (most recent call first):\n"
    if victim is not None:
        line = failure.line or (victim.line + 1 if victim.line else 1)
        dump += f'  File "{root}/{victim.file}", line {line} in {victim.function}\n'
    return dump + "\n"


def as_collection(
    report: RunReport, collected: Sequence[ScriptedTest], *, finished: bool, max_listed: int | None = None
) -> CollectionReport:
    """A collection's answer from a run's ending, listing at most `max_listed` of the collected tests."""
    listed = collected[:max_listed]
    return CollectionReport(
        termination=report.termination,
        command=report.command,
        duration=report.duration,
        finished=finished,
        tests=tuple(
            CollectedTest(node_id=test.node_id, file=test.file, line=test.line, markers=test.markers) for test in listed
        ),
        unlisted=len(collected) - len(listed),
        modules=count_by_module(test.file for test in collected),
        deselected=report.summary.deselected if report.summary else 0,
        collection_errors=report.collection_errors,
        stdout=report.stdout,
        stderr=report.stderr,
    )
