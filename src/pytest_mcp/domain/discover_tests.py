"""The discover_tests use case."""

from __future__ import annotations

from typing import Generic, TypeVar

from pytest_mcp.domain.errors import MAX_COMMAND_CHARS
from pytest_mcp.domain.failures import execution_failure
from pytest_mcp.domain.models import DiscoveryResult
from pytest_mcp.domain.requests import DiscoverTestsRequest, RequestPolicy
from pytest_mcp.domain.runs import CollectSpec
from pytest_mcp.domain.text import keep_arguments
from pytest_mcp.ports.presenter import ResultPresenter
from pytest_mcp.ports.test_runner import TestRunner

T = TypeVar("T")


class DiscoverTests(Generic[T]):
    """Collect the tests under a path and present every one of them.

    Rules:
    - Collection errors are part of the answer: discovery exists to show what can and
      cannot be collected, so pytest's exit 2 *with* collection errors is a result.
    - Exit 0 and 5 (nothing collected) are results too.
    - Any other ending (usage error, internal error, interrupt without collection errors,
      timeout, signal, pytest unavailable) raises ExecutionFailed.
    - The policy's default timeout applies.
    - The runner describes only as many tests as the presenter could list, and counts the rest:
      at 10,000 tests, describing every one cost pytest about a sixth of its collection time.
    - Every collected test is counted by file (`modules`), listed or not: a large collection reads
      as a map first, and `path` narrows it to one file or directory.
    """

    def __init__(self, runner: TestRunner, presenter: ResultPresenter[T], policy: RequestPolicy) -> None:
        self._runner = runner
        self._presenter = presenter
        self._policy = policy

    async def execute(self, request: DiscoverTestsRequest) -> T:
        timeout = self._policy.default_timeout
        report = await self._runner.collect(
            CollectSpec(
                path=request.path,
                markers=request.markers,
                keywords=request.keywords,
                timeout=timeout,
                max_listed=self._presenter.discovery_capacity(),
            )
        )
        termination = report.termination
        collection_errors_are_data = (
            termination.kind == "exited"
            and termination.exit_code == 2
            and report.finished
            and bool(report.collection_errors)
        )
        if not collection_errors_are_data:
            failure = execution_failure(
                termination,
                command=report.command,
                duration=report.duration,
                stdout=report.stdout,
                stderr=report.stderr,
                collection_errors=report.collection_errors,
                timeout=timeout,
                session_finished=report.finished,
            )
            if failure is not None:
                raise failure
        result = DiscoveryResult(
            exit_code=termination.exit_code or 0,
            total=len(report.tests) + report.unlisted,
            deselected=report.deselected,
            modules=report.modules,
            tests=report.tests,
            omitted_tests=report.unlisted,
            collection_errors=report.collection_errors,
            command=keep_arguments(report.command, MAX_COMMAND_CHARS),
        )
        return self._presenter.present_discovery(result)
