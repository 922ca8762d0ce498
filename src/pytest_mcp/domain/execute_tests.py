"""The execute_tests use case."""

from __future__ import annotations

from typing import Generic, TypeVar

from pytest_mcp.domain.failures import execution_failure
from pytest_mcp.domain.models import ReportedTest, RunResult
from pytest_mcp.domain.requests import ExecuteTestsRequest, RequestPolicy
from pytest_mcp.domain.runs import RunSpec
from pytest_mcp.domain.text import keep_tail
from pytest_mcp.ports.presenter import ResultPresenter
from pytest_mcp.ports.test_runner import TestRunner

T = TypeVar("T")


class ExecuteTests(Generic[T]):
    """Run the tests a request names and present what happened.

    Rules:
    - The request was parsed against the policy, so every value is already proven safe.
    - `timeout` defaults to the policy's default; `failfast` is `maxfail=1`.
    - Exit 0 (all passed), 1 (tests failed) and 5 (nothing collected) are results, provided
      pytest finished its session: test failures are data, not errors.
    - Exit 2 (interrupted, including collection errors), 3 (internal error), 4 (usage error),
      a timeout, a fatal signal, pytest being unavailable, and any exit without a finished
      session raise ExecutionFailed: there is no result to trust.
    - `detail` decides which reports are listed: none ('summary'), non-passing ('failures',
      the default), or every report ('all'). Counts are always complete.
    - `text_output` keeps only the tail of pytest's terminal output, up to the policy's limit.
    """

    def __init__(self, runner: TestRunner, presenter: ResultPresenter[T], policy: RequestPolicy) -> None:
        self._runner = runner
        self._presenter = presenter
        self._policy = policy

    async def execute(self, request: ExecuteTestsRequest) -> T:
        timeout = request.timeout or self._policy.default_timeout
        spec = RunSpec(
            node_ids=tuple(request.node_ids),
            markers=request.markers,
            keywords=request.keywords,
            maxfail=request.effective_maxfail,
            verbosity=request.verbosity,
            show_capture=request.show_capture,
            timeout=timeout,
            include_passed=request.detail == "all",
        )
        report = await self._runner.run(spec)
        failure = execution_failure(
            report.termination,
            command=report.command,
            duration=report.duration,
            stdout=report.stdout,
            stderr=report.stderr,
            collection_errors=report.collection_errors,
            timeout=timeout,
            session_finished=report.summary is not None,
        )
        if failure is not None:
            raise failure
        summary, exit_code = report.summary, report.termination.exit_code
        if summary is None or exit_code is None:  # pragma: no cover - execution_failure rules this out
            raise AssertionError("a finished run has a summary and an exit code")

        tests: tuple[ReportedTest, ...]
        if request.detail == "summary":
            tests = ()
        elif request.detail == "failures":
            tests = tuple(test for test in report.tests if test.outcome != "passed")
        else:
            tests = report.tests
        if not request.show_capture:
            tests = tuple(test.model_copy(update={"stdout": None, "stderr": None}) for test in tests)

        result = RunResult(
            exit_code=exit_code,
            summary=summary,
            tests=tests,
            collection_errors=report.collection_errors,
            command=report.command,
            text_output=keep_tail(report.stdout, self._policy.text_output_chars),
        )
        return self._presenter.present_run(result)
