"""The execute_tests use case."""

from __future__ import annotations

from typing import Generic, Literal, TypeVar

import pydantic_core

from pytest_mcp.domain.causes import Causes, NameCauses
from pytest_mcp.domain.errors import MAX_COMMAND_CHARS, FieldError, InvalidArguments
from pytest_mcp.domain.failures import execution_failure
from pytest_mcp.domain.groups import failure_groups, skip_reasons, with_paged_members
from pytest_mcp.domain.models import CoverageReport, FailureGroup, ReportedTest, RunResult, SkipReason, StoppedProcesses
from pytest_mcp.domain.paging import kept_reports, page_of
from pytest_mcp.domain.progress import RunWatch, ThrottledProgress
from pytest_mcp.domain.requests import GetTestRunRequest, RequestPolicy, RunRequest
from pytest_mcp.domain.runs import RunReport
from pytest_mcp.domain.text import (
    CAPTURE_LINES,
    EVIDENCE_LINES,
    evidence_lines,
    keep_arguments,
    keep_head,
    keep_tail,
    last_lines,
    one_line,
    short_line,
)
from pytest_mcp.ports.history import RunHistory
from pytest_mcp.ports.presenter import ResultPresenter
from pytest_mcp.ports.progress import ProgressSink
from pytest_mcp.ports.test_runner import TestRunner
from pytest_mcp.ports.worker import Inline, Worker

T = TypeVar("T")


class ExecuteTests(Generic[T]):
    """Run the tests a request names and present what happened.

    Rules:
    - The request was parsed against the policy, so every value is already proven safe.
    - `timeout` defaults to the policy's default; `failfast` is `maxfail=1`.
    - Exit 0 (all passed), 1 (tests failed) and 5 (nothing collected) are results, provided
      pytest finished its session: test failures are data, not errors.
    - Exit 2 when pytest-xdist ended a failure-limit stop (`-x`, `--maxfail`) as an interruption
      is a result too: the session finished, and its counts are pytest's.
    - Exit 2 (interrupted, including collection errors), 3 (internal error), 4 (usage error),
      a timeout, a fatal signal, pytest being unavailable, and any exit without a finished
      session raise ExecutionFailed: there is no result to trust.
    - Failures, errors and xpasses are answered by cause: `groups`, one per root-cause signature
      with one full report each (domain.groups, ADR 0014); skips and xfails by reason (`reasons`).
    - `detail` decides what is listed: counts only ('summary'); the groups and reasons, and in `tests`
      only what they do not cover, a test that passed on a rerun ('failures', the default); the
      groups, the reasons and every report ('all'). Counts are always complete.
    - A clean run (exit code 0 or 5, no collection errors) is answered with its exit code and
      counts (and any listed reports): no `text_output` and no `command`, so an all-pass answer
      has the same small size whatever the number of tests. `detail='all'` keeps both, with a
      short output tail.
    - Otherwise `text_output` keeps the tail of pytest's terminal output, up to the policy's
      limit. When failures are listed in `tests` and the output must be cut, the cut falls at
      pytest's short test summary: the failure sections above it would only repeat what `tests`
      holds in full.
    - `last_failed`/`failed_first` use pytest's own cache; the server keeps no state.
    - `workers` needs pytest-xdist, `coverage` pytest-cov and `affected` pytest-testmon in the
      target environment; when one is missing the request is invalid (the field is named, with
      the line that installs it there), not the run.
    - `affected` runs what pytest-testmon selects; the answer says what ran and what was left
      out (`affected`), and a first run, with no data yet, says it ran everything.
    - Node ids too many or too long for the OS to pass to a process are invalid too (nothing is
      started); a command too long without any is the server's environment, an execution failure.
    - Coverage lists the files with the lowest coverage first, up to the policy's limit.
    - Progress, when asked for, is rate-limited, and the final state is always reported.
    - A watched run (one the server may detach) that ends with non-passing reports or collection
      errors keeps its full result in the watch, and its answer carries the run id: get_test_run
      pages through every report without running the tests again. A clean run keeps nothing.
    - What turns a report into an answer (listing, grouping, naming causes, presenting) is plain
      CPU work, handed to the `worker`: a report of 10,000 failures never holds up the event loop.
    """

    def __init__(
        self, runner: TestRunner, presenter: ResultPresenter[T], policy: RequestPolicy, worker: Worker | None = None
    ) -> None:
        self._runner = runner
        self._presenter = presenter
        self._policy = policy
        self._worker = worker or Inline()
        self._causes = NameCauses(runner, policy, self._worker)

    async def execute(
        self,
        request: RunRequest,
        progress: ProgressSink | None = None,
        watch: RunWatch | None = None,
        history: RunHistory | None = None,
    ) -> T:
        """Run and present. `progress` gets rate-limited updates; a `watch` gets every one instead
        (it rate-limits what it passes on), for `running` answers while the run goes on. `history` is
        the project's, for the caller: what tells a new failure from an old or a flaky one."""
        spec = request.spec(self._policy).model_copy(
            update={"progress": progress is not None or (watch is not None and watch.follow)}
        )
        throttled = ThrottledProgress(progress) if progress is not None and watch is None else None
        report = await self._runner.run(spec, watch if watch is not None and watch.follow else throttled)
        if throttled is not None:
            await throttled.flush()
        if watch is not None:
            await watch.listen(None)  # the last update reaches whoever listens
        if report.termination.kind == "option_refused":
            field, _, reason = (report.termination.detail or "arguments: refused").partition(": ")
            raise InvalidArguments([FieldError(field, reason)])
        if report.termination.kind == "plugin_missing":
            python = report.command[0] if report.command else "python"
            raise InvalidArguments([_missing_plugin_error(report.termination.detail, python)])
        if report.termination.kind == "command_too_long" and spec.node_ids:
            reason = (
                f"with the rest of pytest's command and the server's environment, {report.termination.detail}; "
                "select fewer or shorter node ids, or the directory that holds them"
            )
            raise InvalidArguments([FieldError("node_ids", reason)])
        failure = execution_failure(
            report.termination,
            command=report.command,
            duration=report.duration,
            stdout=report.stdout,
            stderr=report.stderr,
            collection_errors=report.collection_errors,
            timeout=spec.timeout,
            session_finished=report.summary is not None,
        )
        if failure is not None:
            raise failure

        # Reading 10,000 failures takes seconds of CPU: the worker does it, and the loop keeps answering.
        listed, shown = await self._worker.run(_listed_and_shown, request, report.tests)
        causes = None
        if request.detail != "summary" and any(test.is_failure for test in report.tests):
            total = report.summary.total if report.summary is not None else None
            causes = await self._causes(
                spec, report.duration, shown, history, report.spectrum, report.code, report.passed, total
            )
            untested = causes.untested
        else:
            untested = await self._causes.forget(
                spec, report.tests, history, report.code, report.spectrum, report.passed
            )
        run_id = watch.run_id if watch is not None else None
        answer, kept = await self._worker.run(self._answer, request, report, listed, causes, untested, run_id)
        if watch is not None and kept is not None:
            watch.keep(kept)
        return answer

    def _answer(
        self,
        request: RunRequest,
        report: RunReport,
        listed: Listed,
        causes: Causes | None,
        untested: tuple[str, ...],
        run_id: str | None,
    ) -> tuple[T, RunResult | None]:
        """The answer to a finished run, and the result a watched run keeps for get_test_run (or None)."""
        summary, exit_code = report.summary, report.termination.exit_code
        if summary is None or exit_code is None:  # pragma: no cover - execution_failure rules this out
            raise AssertionError("a finished run has a summary and an exit code")
        tests, groups, reasons = listed
        if causes is not None:
            groups = tuple(_with_bare_representative(group) for group in causes.groups)
        clean = exit_code in (0, 5) and not report.collection_errors
        failures_listed = not clean and request.detail != "summary"
        # A clean run's counts say all there is: no output to read, no command to reproduce. Groups
        # carry the failures: the output's tail would only repeat them, unless everything is asked for.
        evidence = not clean or request.detail == "all"
        limit = self._policy.text_output_chars_when_passing if clean else self._policy.text_output_chars
        command = keep_arguments(report.command, MAX_COMMAND_CHARS) if evidence else ()
        output_needed = evidence and (request.detail == "all" or not groups)
        text_output = (
            keep_tail(report.stdout, limit, from_line_with=_SHORT_SUMMARY if failures_listed else None)
            if output_needed
            else ""
        )
        result = RunResult(
            exit_code=exit_code,
            summary=summary,
            groups=groups,
            reasons=reasons,
            tests=tests,
            collection_errors=report.collection_errors,
            command=command,
            text_output=text_output,
            coverage=self._worst_files_first(report.coverage),
            stopped_processes=_stopped(report.stopped_processes),
            culprits=causes.culprits if causes is not None else (),
            localization=causes.note if causes is not None else None,
            changed_untested=untested,
            **dict(report.facts),  # the answer's RunFacts fields are the report's, whatever they are
        )
        kept = kept_reports(report.tests)
        if run_id is None or not (kept or report.collection_errors):
            return self._presenter.present_run(result), None
        full = causes.full_groups if causes is not None else failure_groups(kept, compress=False)
        # The run is kept: a group lists its first members, and get_test_run pages through them all (issue 41).
        every = {group.id: group.members for group in full}
        paged = tuple(with_paged_members(group, every[group.id]) if group.id in every else group for group in groups)
        result = result.model_copy(update={"run_id": run_id})
        answer = result.model_copy(update={"groups": paged})
        return self._presenter.present_run(answer), result.model_copy(update={"tests": kept, "groups": full})

    def page(self, kept: RunResult, request: GetTestRunRequest) -> T:
        """Reports of a finished run that `keep` kept, as get_test_run asks for them."""
        return self._presenter.present_run(page_of(kept, request))

    def running(
        self,
        request: RunRequest,
        watch: RunWatch,
        run_id: str,
        status: Literal["running", "cancelled"] = "running",
    ) -> T:
        """How far a run that goes on after its call has got: the counts of the tests finished so
        far, and their reports listed as the final answer will list them."""
        tests, groups, reasons = _listed(request, tuple(watch.tests))
        result = RunResult(
            status=status,
            run_id=run_id,
            progress=watch.progress(),
            exit_code=None,
            summary=watch.summary(),
            groups=groups,
            reasons=reasons,
            tests=tests,
        )
        return self._presenter.present_run(result)

    def _worst_files_first(self, coverage: CoverageReport | None) -> CoverageReport | None:
        if coverage is None:
            return None
        ranked = sorted(coverage.files, key=lambda f: (f.percent, f.file))
        shown = ranked[: self._policy.coverage_files]
        limit = self._policy.coverage_missing_chars
        return coverage.model_copy(
            update={
                "files": tuple(f.model_copy(update={"missing": keep_head(f.missing, limit)}) for f in shown),
                "files_omitted": coverage.files_omitted + len(ranked) - len(shown),
            }
        )


MAX_LISTED_STOPPED = 10
REPRESENTATIVE_BYTES = 1500
"""A group's representative, as JSON, at most (issue 38): what the text shows, not the whole report."""


def _stopped(commands: tuple[str, ...]) -> StoppedProcesses | None:
    """What the answer says about processes the tests left running: how many, and the first few."""
    if not commands:
        return None
    # A process names itself (prctl PR_SET_NAME, its argv): the project's text, kept to one line.
    return StoppedProcesses(count=len(commands), commands=tuple(map(one_line, commands[:MAX_LISTED_STOPPED])))


def _shown(request: RunRequest, reports: tuple[ReportedTest, ...]) -> tuple[ReportedTest, ...]:
    """The reports without captured output unless `show_capture`."""
    if request.show_capture:
        return reports
    return tuple(test.model_copy(update={"stdout": None, "stderr": None}) for test in reports)


def _with_bare_representative(group: FailureGroup) -> FailureGroup:
    # A group of one has no signature fields of its own: its representative's message is its signature's.
    shown = representative(group.representative, signed=group.count > 1)
    return group.model_copy(update={"representative": shown})


def representative(test: ReportedTest, *, signed: bool = False) -> ReportedTest:
    """A group's evidence as the answer carries it: what the text shows of the report (the failing
    lines, the E lines, the frames, the crash line; the message's first lines; the last lines
    captured), within REPRESENTATIVE_BYTES; its exception and crash site are the group's, said once,
    by the group. The whole report is kept for get_test_run with node_ids. In a group that carries its
    signature (`signed`), a message that the traceback's E lines already say in full is left out too:
    the text shows only those lines (issue 41)."""
    update: dict[str, object] = {"exception": None, "crash": None}
    if test.traceback:
        update["traceback"] = "\n".join(evidence_lines(test.traceback, EVIDENCE_LINES))
    if test.message:
        update["message"] = "\n".join(map(short_line, test.message.splitlines()[:EVIDENCE_LINES]))
        if signed and _said_by(test.message, str(update.get("traceback") or "")):
            update["message"] = None
    for stream in ("stdout", "stderr"):
        captured = getattr(test, stream)
        if captured:
            update[stream] = "\n".join(last_lines(captured, CAPTURE_LINES))
    shown = test.model_copy(update=update)
    over = len(pydantic_core.to_json(shown.wire())) - REPRESENTATIVE_BYTES
    # Long lines: the captured output and the message keep their start; the traceback, last, its end
    # (the crash), so that the failing line and pytest's explanation are the last to go.
    for field in ("stdout", "stderr", "message"):
        value = getattr(shown, field)
        if value and over > 0:
            kept = keep_head(value, max(len(value) - over - 40, 80))
            over -= len(value) - len(kept)
            shown = shown.model_copy(update={field: kept})
    if over > 0:
        traceback = shown.traceback or ""
        cut = keep_tail(traceback, max(len(traceback) - over, 200))
        shown = shown.model_copy(update={"traceback": cut or None})
    return shown


def _said_by(message: str, traceback: str) -> bool:
    """Whether every line of `message` is one of the traceback's `E` lines: pytest's explanation of the
    failure, which the text shows. A subtest's message names the subtest, which no traceback line does."""
    explained = {line[1:].strip() for line in traceback.splitlines() if line.startswith("E ")}
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return bool(lines) and not message.startswith("subtest ") and all(line in explained for line in lines)


Listed = tuple[tuple[ReportedTest, ...], tuple[FailureGroup, ...], tuple[SkipReason, ...]]
"""(tests, groups, reasons) as a request's `detail` lists them."""


def _listed_and_shown(
    request: RunRequest, reports: tuple[ReportedTest, ...]
) -> tuple[Listed, tuple[ReportedTest, ...]]:
    """What the answer lists, and the reports as it shows them (for naming causes)."""
    return _listed(request, reports), _shown(request, reports)


def _listed(request: RunRequest, reports: tuple[ReportedTest, ...]) -> Listed:
    """(tests, groups, reasons) as `detail` lists them, without captured output unless `show_capture`."""
    if request.detail == "summary":
        return (), (), ()
    reports = _shown(request, reports)
    groups = tuple(map(_with_bare_representative, failure_groups(reports)))
    if request.detail == "failures":
        tests = tuple(test for test in reports if test.outcome == "passed" and test.reruns)  # flaky passes
    else:
        tests = tuple(map(_bare, reports))
    return tests, groups, skip_reasons(reports)


def _bare(test: ReportedTest) -> ReportedTest:
    if test.exception is None and test.crash is None:
        return test
    return test.model_copy(update={"exception": None, "crash": None})


# The title of pytest's last section: one line per failure and error, then the summary line.
_SHORT_SUMMARY = " short test summary info "
_PLUGIN_FIELDS = {"pytest-xdist": "workers", "pytest-cov": "coverage", "pytest-testmon": "affected"}


def _missing_plugin_error(distribution: str | None, python: str) -> FieldError:
    if distribution is None:
        return FieldError("arguments", "needs a pytest plugin that is not installed in the target environment")
    return FieldError(
        _PLUGIN_FIELDS.get(distribution, "arguments"),
        f"needs {distribution}, which is not installed in the target environment; install it there "
        f"(`{python} -m pip install {distribution}`, or `uv pip install --python {python} {distribution}`) "
        "or omit this field",
    )
