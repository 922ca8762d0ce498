"""The MCP delivery adapter: lists the tools, parses each call's arguments once, dispatches it to
its handler (tools.py), detaches long ones (ADR 0012), and maps every ending to the error contract."""

from __future__ import annotations

import hashlib
import json
import math
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from mcp import MCPError
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
)
from mcp_types import (
    Tool as ListedTool,
)
from structlog.typing import FilteringBoundLogger

from pytest_mcp.adapters.mcp.detached_runs import DetachedRuns
from pytest_mcp.adapters.mcp.progress import progress_for
from pytest_mcp.adapters.mcp.schemas import shipped_schemas
from pytest_mcp.adapters.mcp.sessions import Owner, client_of, owner_of
from pytest_mcp.adapters.mcp.tool_errors import ToolError, ToolErrors
from pytest_mcp.adapters.mcp.tools import Detachable, Tool, ToolCall
from pytest_mcp.adapters.structlog_logging import routed_logger
from pytest_mcp.domain.errors import ExecutionFailed, InvalidArguments
from pytest_mcp.domain.requests import RequestPolicy
from pytest_mcp.ports.progress import ProgressSink

if TYPE_CHECKING:
    from pytest_mcp.adapters.mcp.report_view import ReportView

_audit = routed_logger("pytest_mcp.audit")
_runs_log = routed_logger("pytest_mcp.runs")


class McpToolServer:
    """Owns the low-level MCP `Server` and the mapping from tool calls to their handlers.

    Error contract (ADR 0011): bad arguments (-32602, naming each field and the reason) and
    pytest endings without a result (-32000, the message carrying the essentials and the data
    the structure) are answered by `errors`: an isError result, or with `--error-mode jsonrpc`
    a JSON-RPC error. An unknown tool or a malformed request is always a JSON-RPC -32602, and
    our own bugs are always -32603 with a correlation id (the traceback goes to the log only).

    Each use case is built by its provider when a call first needs it, not with the server: listing
    the tools needs only the request models and tool_schemas.json, so start-up imports no use
    case, runner or result model (about 12 ms).
    """

    def __init__(
        self,
        tools: Sequence[Tool],
        policy: RequestPolicy,
        errors: ToolErrors,
        runs: DetachedRuns,
        version: str,
        view: ReportView | None = None,
    ) -> None:
        self._policy = policy
        self._view = view
        self._errors = errors
        self._runs = runs
        self._in_flight: set[anyio.CancelScope] = set()
        self._all_stopped = anyio.Event()  # set when the last call in flight ends
        self._last_ended = time.monotonic()  # when the last call in flight ended (or this server was made)
        self.called = False  # whether any tool call came: until one does, no run can have started
        self._tools = {tool.name: tool for tool in tools}
        self._viewed = frozenset(tool.name for tool in tools if tool.viewed)
        schemas = shipped_schemas()
        self._listing = ListToolsResult(
            tools=[
                ListedTool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=tool.request_type.with_limits(schemas[tool.name]["input"], policy),
                    output_schema=schemas[tool.name]["output"],
                )
                for tool in tools
            ]
        )
        self.server: Server[Any] = Server(
            "pytest-mcp",
            version=version,
            instructions="Run this project's pytest suite. Call discover_tests to list node ids and "
            "execute_tests to run them; failures come back as data you can act on.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            # The report view (ADR 0015): its ui:// resource, and the MCP Apps extension advertised.
            on_list_resources=view.list_resources if view else None,
            on_read_resource=view.read_resource if view else None,
        )
        if view is not None:
            self.server.extensions[view.identifier] = view.settings()

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return self._view.tools_for(ctx, self._listing, self._viewed) if self._view else self._listing

    async def _call_tool(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        """One tools/call, stopped when its HTTP client leaves or the server shuts down (`stop_calls`)."""
        progress = progress_for(ctx)
        scope = anyio.CancelScope()
        client = client_of(ctx)
        if client is not None:
            client.on_leave(scope.cancel)
        self._in_flight.add(scope)
        self.called = True
        try:
            with scope:
                return await self.call(
                    params.name, params.arguments, progress, owner_of(ctx, stateless=self._runs.stateless)
                )
        finally:
            self._in_flight.discard(scope)
            self._last_ended = time.monotonic()
            if not self._in_flight:
                self._all_stopped.set()
        why = client.why if client is not None and client.left else "the server is stopping"
        return self._errors.answer(ToolError.stopped(why))

    def idle_seconds(self) -> float:
        """How long no tool call has been in flight: 0 while one is (the heap thaws when idle, ADR 0022)."""
        return 0.0 if self._in_flight else time.monotonic() - self._last_ended

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """While a transport serves: detached runs live here, and are all stopped on the way out.

        Without it (`pytest-mcp call`), every call waits for its run to end.
        """
        async with self._runs.serving():
            yield

    def attached(self) -> AbstractAsyncContextManager[None]:
        """The run store attached (ADR 0016), before a transport reads anything: or RunStoreUnavailable."""
        return self._runs.attached()

    def end_session(self, owner: Owner) -> None:
        """A transport's session ended (closed, deleted, expired): stop the runs it started."""
        self._runs.end_owner(owner)

    async def stop_calls(self, within: float) -> int:
        """Cancel every call in flight, and wait up to `within` seconds for them to end; how many there were.

        Each call's runner kills its process group on the way out, so once this returns (in time),
        no pytest process is left. For transports stopping on a signal.
        """
        stopping = list(self._in_flight)
        if stopping:
            self._all_stopped = anyio.Event()
            for scope in stopping:
                scope.cancel()
            with anyio.move_on_after(within) as waited:
                await self._all_stopped.wait()
            if waited.cancelled_caught:  # the stop then rests on the bound, not on the calls having ended
                _runs_log.warning("calls_outlived_stop", calls=len(self._in_flight), within=within)
        detached = await self._runs.stop(lambda run: True, "the server is stopping")
        return len(stopping) + detached

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        progress: ProgressSink | None = None,
        owner: Owner = "stdio",
    ) -> CallToolResult:
        """One tool call with the full error contract: its arguments parsed once, then its handler.

        While a transport serves, a detachable tool's call is a run the server holds: it detaches
        when still going after `detach_after` seconds (never with 0), and a finished one that kept
        reports stays for get_test_run to page through."""
        started = time.perf_counter()
        shown = name if len(name) <= 100 else f"{name[:100]}[... {len(name) - 100:,} characters cut]"
        log = _audit.bind(tool=shown, argument_keys=_argument_keys(arguments), args_digest=_digest(arguments))
        tool = self._tools.get(name)
        if tool is None:
            log.warning("tool_call", outcome="invalid", field="name", reason="unknown tool", duration_ms=_ms(started))
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"name: unknown tool {shown!r}; available tools: {', '.join(self._tools)}",
                data={"errors": [{"field": "name", "reason": "unknown tool"}]},
            )
        try:
            request = tool.request_type.parse(arguments, self._policy)
        except InvalidArguments as exc:
            return self._invalid(name, exc, log, started)
        if isinstance(tool, Detachable) and self._runs.serving_now:
            return await self._detachable(tool, request, progress, owner, log, started)
        return await self._answered(name, tool.handle(request, ToolCall(owner, progress)), log, started)

    async def _detachable(
        self,
        tool: Detachable,
        request: Any,
        progress: ProgressSink | None,
        owner: Owner,
        log: FilteringBoundLogger,
        started: float,
    ) -> CallToolResult:
        from pytest_mcp.domain.progress import RunWatch

        detaches = self._policy.detach_after > 0
        watch = RunWatch(follow=detaches or progress is not None)
        await watch.listen(progress)
        run = self._runs.start(
            owner,
            watch,
            request,
            lambda: self._answered(tool.name, tool.handle(request, ToolCall(owner, None, watch)), log, started),
            tool.running,
        )
        try:
            ended = await self._runs.wait(run, self._policy.detach_after if detaches else math.inf)
        except anyio.get_cancelled_exc_class():
            await self._runs.cancel(run)  # the call was cancelled before it detached: so is its run
            raise
        if ended:
            if watch.kept is None:
                self._runs.forget(run)
            else:  # its answer carries the run id: its reports can be paged through for the TTL
                await self._runs.detach(run)
            return run.outcome()
        await watch.listen(None)  # this call is answered; its progress token is done with
        await self._runs.detach(run)
        _audit.info("run_detached", run_id_digest=_digest({"run_id": run.run_id}), done=watch.done, total=watch.total)
        return run.answer_running("running")

    def _invalid(self, tool: str, exc: InvalidArguments, log: FilteringBoundLogger, started: float) -> CallToolResult:
        error = ToolError.invalid(exc, tool)
        log.warning("tool_call", outcome="invalid", duration_ms=_ms(started), **error.data)
        return self._errors.answer(error)

    async def _answered(
        self, tool: str, answer: Awaitable[CallToolResult], log: FilteringBoundLogger, started: float
    ) -> CallToolResult:
        """The handler's answer, or its ending mapped to the error contract; one audit event either way."""
        try:
            result = await answer
        except InvalidArguments as exc:  # found by the handler, e.g. an unknown run id
            return self._invalid(tool, exc, log, started)
        except ExecutionFailed as exc:
            log.warning("tool_call", outcome=exc.reason, exit_code=exc.details.exit_code, duration_ms=_ms(started))
            return self._errors.answer(ToolError.failed(exc))
        except anyio.get_cancelled_exc_class():
            log.info("tool_call", outcome="cancelled", duration_ms=_ms(started))
            raise
        except MCPError:  # a detached run's JSON-RPC error (--error-mode jsonrpc, or our bug), given again
            raise
        except Exception:
            correlation_id = uuid.uuid4().hex[:12]
            log.exception(
                "tool_call", outcome="internal_error", correlation_id=correlation_id, duration_ms=_ms(started)
            )
            raise MCPError(
                code=INTERNAL_ERROR,
                message=f"pytest-mcp hit an internal error; quote correlation id {correlation_id} when reporting it",
                data={"correlation_id": correlation_id},
            ) from None
        structured = result.structured_content or {}
        log.info("tool_call", outcome="ok", exit_code=structured.get("exit_code"), duration_ms=_ms(started))
        return result


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def _digest(arguments: Mapping[str, Any] | None) -> str:
    canonical = json.dumps(arguments or {}, sort_keys=True, default=repr, ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _argument_keys(arguments: Mapping[str, Any] | None) -> list[str]:
    keys = sorted(str(key)[:64] for key in (arguments or {}))
    return keys[:20] + (["..."] if len(keys) > 20 else [])
