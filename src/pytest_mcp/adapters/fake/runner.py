"""FakeTestRunner: a scripted, deterministic TestRunner that answers the way pytest would."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from os import PathLike
from typing import Any, Literal, Self

import anyio

from pytest_mcp.adapters.fake.endings import (
    FAILURE_KINDS,
    Call,
    FailureKind,
    ScriptedFailure,
    before_any_test,
    killed,
    usage_error,
)
from pytest_mcp.adapters.fake.recording import read_recording, recording_document
from pytest_mcp.adapters.fake.script import ScriptedTest, ScriptError, scripted, tests_from_dict
from pytest_mcp.adapters.fake.selection import UsageError, select
from pytest_mcp.adapters.fake.terminal import FakeTerminal, collect_words
from pytest_mcp.adapters.pytest_options import collect_options, run_options
from pytest_mcp.domain.models import CollectedTest, Outcome, Phase, ReportedTest, Summary
from pytest_mcp.domain.runs import CollectionReport, CollectSpec, RunReport, RunSpec, Termination
from pytest_mcp.ports.progress import ProgressSink
from pytest_mcp.ports.test_runner import TestRunner

__all__ = ["FAILURE_KINDS", "FailureKind", "FakeTestRunner", "ScriptError", "ScriptedTest"]


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
        self._failures: deque[ScriptedFailure] = deque()
        self._root = str(root) if root is not None else None
        self._held: tuple[int, anyio.Event] | None = None
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
        return cls(tests_from_dict(script), root=root)

    @classmethod
    def from_recording(cls, source: str | PathLike[str] | Mapping[str, Any]) -> Self:
        """Replay a recording made by `pytest-mcp record` (a path to its JSON file, or the loaded JSON).

        Raises FileNotFoundError for a missing file and ScriptError, naming the field, for
        anything that is not a version-1 pytest-mcp recording.
        """
        root, tests = read_recording(source)
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
        fields = {
            "node_id": node_id,
            "outcome": outcome,
            "message": message,
            "traceback": traceback,
            "duration": duration,
            "markers": tuple(markers),
            "stdout": stdout,
            "stderr": stderr,
            "line": line,
            "phase": phase,
        }
        try:
            self._tests[node_id] = scripted(fields, "")
        except ScriptError as exc:
            raise ScriptError(f"invalid test {node_id!r}: {exc}") from None
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
        self._failures.append(ScriptedFailure(kind, message, node_id, signal, line, on))
        return self

    def hold(self, after: int = 0) -> Self:
        """Make runs pause after their first `after` tests (if they select more) until `release()`.

        For testing an agent's handling of long runs without waiting for one: connect with a small
        `detach_after`, and execute_tests answers "running" with the progress and failures of the
        tests before the hold; after `release()`, get_test_run gets the final answer. A held run
        can be cancelled (get_test_run with cancel, or the call's own cancellation) like a real one.
        """
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            raise ScriptError(f"after: must be a number of tests, 0 or more; got {after!r}")
        self._held = (after, anyio.Event())
        return self

    def release(self) -> Self:
        """Let held runs go on to their end; later runs are not held."""
        if self._held is None:
            raise ScriptError("release: no run is held; call hold() first")
        self._held[1].set()
        self._held = None
        return self

    def _take_failure(self, call: Literal["run", "collect"]) -> ScriptedFailure | None:
        for failure in self._failures:
            if failure.on in (None, call):
                self._failures.remove(failure)
                return failure
        return None

    # -- the TestRunner port ----------------------------------------------------------------------

    async def run(self, spec: RunSpec, progress: ProgressSink | None = None) -> RunReport:
        self.calls.append(spec)
        command = ("fake", "-m", "pytest", *run_options(spec), "--", *spec.node_ids)
        terminal = FakeTerminal(self._root or ".", verbosity=spec.verbosity, show_capture=spec.show_capture)
        terminal.session_start()
        call = Call(spec, spec.node_ids, command, terminal, self._root)
        failure = self._take_failure("run")
        tests = self.tests
        early = before_any_test(failure, tests, call)
        if early is not None:
            return early[0]
        try:
            selection = select(tests, spec.node_ids, spec.markers, spec.keywords, self._root)
        except UsageError as exc:
            return usage_error(exc, call)
        terminal.collected(len(selection.collected), selection.deselected)

        reports: list[ReportedTest] = []
        failures = 0
        stopped = False
        for done, test in enumerate(selection.selected, start=1):
            if self._held is not None and done - 1 == self._held[0]:
                await self._held[1].wait()  # the run goes on only at `release()`, or is cancelled
            terminal.test_started(test.node_id)
            if failure is not None and failure.kills and failure.strikes(test, selection):
                return killed(failure, test, reports, call)
            for report in test.reports():
                terminal.report(report)
                reports.append(report)
                failures += report.outcome in ("failed", "error")
                if progress is not None and (spec.include_passed or report.outcome != "passed"):
                    await progress.reported(report)
            if progress is not None:
                await progress.update(done, len(selection.selected), failures)
            if spec.maxfail is not None and failures >= spec.maxfail:
                stopped = True
                break
        if failure is not None and failure.kills and not selection.selected:
            return killed(failure, None, reports, call)  # killed while collecting
        if not stopped:
            terminal.loop_finished()

        counts = Counter[str](report.outcome for report in reports)
        counts["deselected"] = selection.deselected
        duration = round(sum(report.duration for report in reports), 6)
        summary = Summary.from_counts(counts, total=len(selection.selected), duration=duration)
        terminal.session_finished(summary.line(), stop=f"stopping after {spec.maxfail} failures" if stopped else None)
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
        command = ("fake", "-m", "pytest", *collect_options(spec), "--", *targets)
        terminal = FakeTerminal(self._root or ".", verbosity=-1)
        call = Call(spec, targets, command, terminal, self._root)
        failure = self._take_failure("collect")
        tests = self.tests
        early = before_any_test(failure, tests, call)
        if early is not None:
            report, collected = early
            return _as_collection(report, collected, finished=report.summary is not None, max_listed=spec.max_listed)
        if failure is not None and failure.kills:
            return _as_collection(killed(failure, None, [], call), (), finished=False)
        try:
            selection = select(tests, targets, spec.markers, spec.keywords, self._root)
        except UsageError as exc:
            return _as_collection(usage_error(exc, call), (), finished=False)
        terminal.collected_items([test.node_id for test in selection.selected])
        terminal.session_finished(collect_words(len(selection.collected), selection.deselected, 0, 0.0))
        return _as_collection(
            RunReport(
                termination=Termination(kind="exited", exit_code=0 if selection.selected else 5),
                command=command,
                duration=0.0,
                summary=Summary(deselected=selection.deselected),
                stdout=terminal.text(),
            ),
            selection.selected,
            finished=True,
            max_listed=spec.max_listed,
        )


def _as_collection(
    report: RunReport, collected: Sequence[ScriptedTest], *, finished: bool, max_listed: int | None = None
) -> CollectionReport:
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
        deselected=report.summary.deselected if report.summary else 0,
        collection_errors=report.collection_errors,
        stdout=report.stdout,
        stderr=report.stderr,
    )
