"""One handler per tool: its name, its description, its request and answer models, and what answers it.

A tool's arguments reach its handler parsed, once, by the tool server. A tool whose calls may
outlast a client's patience is `Detachable`: the tool server runs it as a detached run (ADR 0012)
and asks the handler for a 'running' answer; nothing else in the server knows the tool by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

import anyio
from mcp_types import CallToolResult
from pydantic import BaseModel

from pytest_mcp.adapters.mcp.detached_runs import DetachedRuns
from pytest_mcp.adapters.mcp.sessions import Owner
from pytest_mcp.domain.errors import FieldError, InvalidArguments
from pytest_mcp.domain.requests import (
    CheckEnvironmentRequest,
    DiscoverTestsRequest,
    ExecuteTestsRequest,
    GetTestRunRequest,
    LastFailedRequest,
    RequestPolicy,
    RunRequest,
    ToolArguments,
)
from pytest_mcp.ports.history import RunHistory
from pytest_mcp.ports.progress import ProgressSink
from pytest_mcp.ports.worker import Inline, Worker

if TYPE_CHECKING:
    from pytest_mcp.domain.check_environment import CheckEnvironment
    from pytest_mcp.domain.discover_tests import DiscoverTests
    from pytest_mcp.domain.execute_tests import ExecuteTests
    from pytest_mcp.domain.progress import RunWatch

ALREADY_FINISHED = "the run had already finished when the cancel came: nothing was stopped, and this is its answer"
"""The note on the answer to a cancel of a run that had ended by itself."""

ToolRequest = ToolArguments
"""Any tool's request: their base, so that no list of the tools' request types is kept beside TOOLS."""


@dataclass(frozen=True)
class ToolWiring:
    """Everything a tool may need, built once by the container; each tool takes its part (`wired`), so that
    the container lists no tool: a tool is its request type and its class, in TOOLS (issue 43)."""

    execute_tests: Callable[[], ExecuteTests[CallToolResult]]
    discover_tests: Callable[[], DiscoverTests[CallToolResult]]
    check_environment: Callable[[], CheckEnvironment[CallToolResult]]
    histories: Callable[[Owner], RunHistory]
    runs: DetachedRuns
    policy: RequestPolicy
    worker: Worker


@dataclass(frozen=True)
class ToolCall:
    """What a handler may know of its call besides the request: whose it is, and where progress goes.

    A detached run's handler gets no `progress` but a `watch`, which follows the run for its
    'running' answers and passes progress on to whichever call is waiting for it.
    """

    owner: Owner = "stdio"
    progress: ProgressSink | None = None
    watch: RunWatch | None = None


class Tool(Protocol):
    name: ClassVar[str]
    """The tool's name: written here once, and every list of tools is derived from TOOLS."""
    description: ClassVar[str]
    request_type: ClassVar[type[ToolRequest]]
    viewed: ClassVar[bool] = False
    """Whether the report view (ADR 0015) shows this tool's answers."""

    @staticmethod
    def answer_type() -> type[BaseModel]:
        """The model of a successful answer's structured content (imported lazily: not needed to serve)."""
        ...

    async def handle(self, request: Any, call: ToolCall) -> CallToolResult: ...

    @classmethod
    def wired(cls, wiring: ToolWiring) -> Tool:
        """The tool, given what it needs of the wiring."""
        ...


@runtime_checkable
class Detachable(Tool, Protocol):
    """A tool whose run may go on after its call answered 'running' (ADR 0012)."""

    def running(
        self, request: Any, watch: RunWatch, run_id: str, status: Literal["running", "cancelled"] = "running"
    ) -> CallToolResult:
        """The answer for a run still going (or stopped): how far it has got."""
        ...


class ExecuteTestsTool(Detachable):
    """Runs its request, any RunRequest, through the execute_tests use case."""

    name: ClassVar[str] = "execute_tests"
    description: ClassVar[str] = (
        "Run pytest on the project and return exact counts plus every non-passing test with "
        "its location, message and trimmed traceback. Test failures are results, not errors."
    )
    request_type: ClassVar[type[ToolRequest]] = ExecuteTestsRequest
    viewed: ClassVar[bool] = True

    def __init__(
        self,
        use_case: Callable[[], ExecuteTests[CallToolResult]],
        history: Callable[[Owner], RunHistory] | None = None,
    ) -> None:
        self._use_case = use_case
        self._history = history

    @classmethod
    def wired(cls, wiring: ToolWiring) -> ExecuteTestsTool:
        return cls(use_case=wiring.execute_tests, history=wiring.histories)

    @staticmethod
    def answer_type() -> type[BaseModel]:
        from pytest_mcp.domain.models import RunResult

        return RunResult

    async def handle(self, request: RunRequest, call: ToolCall) -> CallToolResult:
        history = self._history(call.owner) if self._history is not None else None
        return await self._use_case().execute(request, call.progress, call.watch, history)

    def running(
        self,
        request: RunRequest,
        watch: RunWatch,
        run_id: str,
        status: Literal["running", "cancelled"] = "running",
    ) -> CallToolResult:
        return self._use_case().running(request, watch, run_id, status=status)


class LastFailedTool(ExecuteTestsTool):
    name: ClassVar[str] = "last_failed"
    description: ClassVar[str] = (
        "Run again only the tests that failed last time (pytest's --lf, from pytest's own cache in the "
        "project), and answer as execute_tests does. When no failure is recorded, pytest runs every test."
    )
    request_type: ClassVar[type[ToolRequest]] = LastFailedRequest


class GetTestRunTool(Tool):
    """Answered from the runs this server holds, not by a use case."""

    name: ClassVar[str] = "get_test_run"
    description: ClassVar[str] = (
        "The result of a run that a tool answered with status 'running': waits for it up to "
        "`wait` seconds, then gives the final answer (as execute_tests would have) or another "
        "'running' answer with the failures so far. cancel=true stops the run and its processes."
    )
    request_type: ClassVar[type[ToolRequest]] = GetTestRunRequest
    viewed: ClassVar[bool] = True

    def __init__(
        self,
        runs: DetachedRuns,
        policy: RequestPolicy,
        execute_tests: Callable[[], ExecuteTests[CallToolResult]],
        worker: Worker | None = None,
    ) -> None:
        self._runs = runs
        self._policy = policy
        self._execute_tests = execute_tests
        self._worker = worker or Inline()

    @classmethod
    def wired(cls, wiring: ToolWiring) -> GetTestRunTool:
        return cls(runs=wiring.runs, policy=wiring.policy, execute_tests=wiring.execute_tests, worker=wiring.worker)

    @staticmethod
    def answer_type() -> type[BaseModel]:
        from pytest_mcp.domain.models import RunResult

        return RunResult

    async def handle(self, request: GetTestRunRequest, call: ToolCall) -> CallToolResult:
        run = await self._runs.find(request.run_id, call.owner)
        if run is None:
            raise InvalidArguments([FieldError("run_id", self._unknown_run())])
        if request.cancel or run.cancelled:  # cancelled now, or earlier through any connection of its owner
            if not run.finished:
                await self._runs.cancel(run)
            if not run.finished:
                return run.answer_running("cancelled")
            # It ended by itself before the cancel (or while it travelled): its answer stands.
            from pytest_mcp.adapters.mcp.presenter import noted  # not needed to serve

            return noted(run.outcome(), ALREADY_FINISHED)
        await run.watch.listen(call.progress)  # this call's progress token follows the run while it waits
        try:
            ended = await self._runs.wait(run, request.wait_seconds(self._policy))
        finally:
            with anyio.CancelScope(shield=True):
                await run.watch.listen(None)
        if not ended:
            answer = run.answer_running("running")
        elif request.pages and run.watch.kept is not None:
            # A page of 10,000 kept reports is sorted and presented by the worker, off the event loop.
            answer = await self._worker.run(self._execute_tests().page, run.watch.kept, request)
        else:
            answer = run.outcome()  # a run that kept no reports: its answer lists all it had
        if request.wait_cut(self._policy):
            from pytest_mcp.adapters.mcp.presenter import noted  # not needed to serve

            answer = noted(answer, f"wait was cut to {self._policy.detach_after:g}s, the most a call waits")
        return answer

    def _unknown_run(self) -> str:
        reason = (
            "unknown or expired run id; a run belongs to the session that started it, and its result is kept "
            f"{self._runs.ttl:g}s after it finished"
        )
        if self._runs.stateless and not self._runs.shared:
            reason += (
                "; this server is --stateless, so the run may be on another instance: get_test_run must reach "
                "the instance that answered 'running'"
            )
        return reason


class DiscoverTestsTool(Tool):
    name: ClassVar[str] = "discover_tests"
    description: ClassVar[str] = (
        "Collect tests without running them: node ids with their file, line and markers, the total, "
        "and collection errors. A large collection lists the first tests that fit the answer's size "
        "budget and counts the rest in omitted_tests; narrow it with path, keywords or markers."
    )
    request_type: ClassVar[type[ToolRequest]] = DiscoverTestsRequest
    viewed: ClassVar[bool] = True

    def __init__(self, use_case: Callable[[], DiscoverTests[CallToolResult]]) -> None:
        self._use_case = use_case

    @classmethod
    def wired(cls, wiring: ToolWiring) -> DiscoverTestsTool:
        return cls(use_case=wiring.discover_tests)

    @staticmethod
    def answer_type() -> type[BaseModel]:
        from pytest_mcp.domain.models import DiscoveryResult

        return DiscoveryResult

    async def handle(self, request: DiscoverTestsRequest, call: ToolCall) -> CallToolResult:
        return await self._use_case().execute(request)


class CheckEnvironmentTool(Tool):
    name: ClassVar[str] = "check_environment"
    description: ClassVar[str] = (
        "Preflight, runs no tests: the interpreter pytest runs with and the rule that chose it, its "
        "pytest and plugins, and the rootdir, configfile and testpaths pytest sees. When something "
        "is missing, `problems` says what to install where; nothing is ever installed."
    )
    request_type: ClassVar[type[ToolRequest]] = CheckEnvironmentRequest

    def __init__(self, use_case: Callable[[], CheckEnvironment[CallToolResult]]) -> None:
        self._use_case = use_case

    @classmethod
    def wired(cls, wiring: ToolWiring) -> CheckEnvironmentTool:
        return cls(use_case=wiring.check_environment)

    @staticmethod
    def answer_type() -> type[BaseModel]:
        from pytest_mcp.domain.environment import EnvironmentResult

        return EnvironmentResult

    async def handle(self, request: CheckEnvironmentRequest, call: ToolCall) -> CallToolResult:
        return await self._use_case().execute(request)


TOOLS: tuple[type[Tool], ...] = (
    ExecuteTestsTool,
    GetTestRunTool,
    DiscoverTestsTool,
    CheckEnvironmentTool,
    LastFailedTool,
)
"""Every tool, in the order tools/list gives them."""


def wired_tools(wiring: ToolWiring) -> list[Tool]:
    """Every tool of TOOLS, wired: what the container serves."""
    return [tool.wired(wiring) for tool in TOOLS]
