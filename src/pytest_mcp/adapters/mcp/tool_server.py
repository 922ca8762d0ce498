"""The MCP delivery adapter: tool listing, strict argument parsing, and error mapping."""

from __future__ import annotations

import hashlib
import json
import time
import typing
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from mcp import MCPError
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    ProgressNotification,
    ProgressNotificationParams,
    RequestId,
    Tool,
)
from pydantic import BaseModel

from pytest_mcp.adapters.mcp.detached_runs import DetachedRuns, Owner
from pytest_mcp.adapters.mcp.tool_errors import ToolError, ToolErrors
from pytest_mcp.adapters.structlog_logging import routed_logger
from pytest_mcp.domain.errors import ExecutionFailed, FieldError, InvalidArguments
from pytest_mcp.domain.requests import (
    CheckEnvironmentRequest,
    DiscoverTestsRequest,
    ExecuteTestsRequest,
    GetTestRunRequest,
    RequestPolicy,
)
from pytest_mcp.ports.progress import ProgressSink

if TYPE_CHECKING:
    from pytest_mcp.domain.check_environment import CheckEnvironment
    from pytest_mcp.domain.discover_tests import DiscoverTests
    from pytest_mcp.domain.execute_tests import ExecuteTests
    from pytest_mcp.domain.models import ReportedTest
    from pytest_mcp.domain.progress import RunWatch

CLIENT = "pytest_mcp.client"
"""ASGI scope key under which HTTP transports put the request's ClientPresence."""


class ClientPresence:
    """Whether an HTTP request's client is still there to receive its answer; calls stop when it leaves."""

    def __init__(self) -> None:
        self.left = False
        self.why = ""
        self._on_leave: list[Callable[[], None]] = []

    def on_leave(self, callback: Callable[[], None]) -> None:
        if self.left:
            callback()
        else:
            self._on_leave.append(callback)

    def leave(self, why: str = "its client disconnected") -> None:
        """The client is gone (`why` ends "the call was stopped because ..."); stop what it started."""
        if self.left:
            return
        self.left, self.why = True, why
        for callback in self._on_leave:
            callback()


_audit = routed_logger("pytest_mcp.audit")


ToolRequest = ExecuteTestsRequest | GetTestRunRequest | DiscoverTestsRequest | CheckEnvironmentRequest

# Each tool's request model, in the order the tools are listed.
TOOL_REQUESTS: dict[str, type[ToolRequest]] = {
    "execute_tests": ExecuteTestsRequest,
    "get_test_run": GetTestRunRequest,
    "discover_tests": DiscoverTestsRequest,
    "check_environment": CheckEnvironmentRequest,
}
SCHEMAS_FILE = "tool_schemas.json"


class _UseCase(Protocol):
    def execute(self, request: Any, /, *args: Any) -> Awaitable[CallToolResult]: ...


@dataclass(frozen=True)
class _ToolBinding:
    name: str
    description: str
    use_case: Callable[[], _UseCase] | None
    reports_progress: bool = False

    @property
    def request_type(self) -> type[ToolRequest]:
        return TOOL_REQUESTS[self.name]


class McpProgress(ProgressSink):
    """Progress as `notifications/progress` on the calling request, e.g. "120/300 - 2 failed"."""

    def __init__(self, session: ServerSession, token: str | int, request_id: RequestId | None) -> None:
        self._session = session
        self._token = token
        self._request_id = request_id

    async def reported(self, test: ReportedTest) -> None:
        pass  # the notification carries counts only; the reports come with the answer

    async def update(self, done: int, total: int, failed: int) -> None:
        # Scoped to the calling request, so on streamable HTTP it rides that request's stream.
        await self._session.send_notification(
            ProgressNotification(
                params=ProgressNotificationParams(
                    progress_token=self._token,
                    progress=done,
                    total=total,
                    message=f"{done}/{total} \u2014 {failed} failed",
                )
            ),
            related_request_id=self._request_id,
        )


def _progress_for(ctx: ServerRequestContext[Any]) -> McpProgress | None:
    """The request's progress sink, or None when it asked for no progress.

    The token is read as the client sent it: the SDK's model would have turned `true` into 1.
    """
    raw_meta = (ctx.params or {}).get("_meta")
    token = raw_meta.get("progressToken") if isinstance(raw_meta, Mapping) else None
    if token is None:
        return None
    if isinstance(token, bool) or not isinstance(token, str | int):
        raise MCPError(
            code=INVALID_PARAMS,
            message="_meta.progressToken: must be a string or an integer",
            data={"errors": [{"field": "_meta.progressToken", "reason": "must be a string or an integer"}]},
        )
    return McpProgress(ctx.session, token, ctx.request_id)


def _owner(ctx: ServerRequestContext[Any]) -> Owner:
    """Who the call's detached runs belong to: its MCP session, or without one its credentials.

    stdio (and an in-process client) is one session. Over HTTP, a session is the streamable
    transport's `Mcp-Session-Id` or the SSE transport's `session_id`; requests that have neither
    (--stateless, the sessionless 2026 protocol) are told apart by their Authorization header.
    """
    request = ctx.request
    headers = getattr(request, "headers", None)
    if headers is None:
        return "stdio"
    query = getattr(request, "query_params", {})
    session = headers.get("mcp-session-id") or query.get("session_id")
    if session:
        return f"session:{session}"
    credentials = headers.get("authorization", "").encode()
    return f"client:{hashlib.sha256(credentials).hexdigest()[:32]}"


def _client(ctx: ServerRequestContext[Any]) -> ClientPresence | None:
    """The HTTP request's ClientPresence (set by http_limits.DisconnectWatch); None on stdio."""
    scope = getattr(ctx.request, "scope", None)
    client = scope.get(CLIENT) if isinstance(scope, Mapping) else None
    return client if isinstance(client, ClientPresence) else None


def _digest(arguments: Mapping[str, Any] | None) -> str:
    canonical = json.dumps(arguments or {}, sort_keys=True, default=repr, ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _argument_keys(arguments: Mapping[str, Any] | None) -> list[str]:
    keys = sorted(str(key)[:64] for key in (arguments or {}))
    return keys[:20] + (["..."] if len(keys) > 20 else [])


def generated_schemas() -> dict[str, dict[str, Any]]:
    """Each tool's input schema (before the policy's limits) and output schema, from its models.

    Written for every client, not only ours: every `$ref` is inlined (TypeScript SDK 1.22.0
    drops `$defs`, then cannot list the tools at all), only JSON Schema's own formats are kept
    (pydantic's `"format": "path"` makes the TypeScript SDK warn, or skip validating), and the
    fields an answer always carries are `required`.
    """
    from pytest_mcp.domain.models import DiscoveryResult, EnvironmentResult, RunResult  # not needed to serve

    results: dict[str, type[BaseModel]] = {
        "execute_tests": RunResult,
        "get_test_run": RunResult,
        "discover_tests": DiscoveryResult,
        "check_environment": EnvironmentResult,
    }
    schemas: dict[str, dict[str, Any]] = {}
    for name, request_type in TOOL_REQUESTS.items():
        output = _portable(_requiring_always_present(results[name]))
        output.pop("title", None)
        schemas[name] = {"input": _portable(request_type.base_schema()), "output": output}
    return schemas


# JSON Schema's own formats (draft 2020-12); a validator may reject or warn on any other.
_STANDARD_FORMATS = frozenset(
    {
        *("date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname"),
        *("ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template"),
        *("json-pointer", "relative-json-pointer", "regex"),
    }
)


def _requiring_always_present(model: type[BaseModel]) -> dict[str, Any]:
    """The model's schema, with each model's `always_present` fields added to its `required`."""
    schema = model.model_json_schema()
    models = {model.__name__: model}
    pending = list(models.values())
    while pending:  # every model the schema mentions, by the name pydantic gives its definition
        for field in pending.pop().model_fields.values():
            for candidate in _models_in(field.annotation):
                if candidate.__name__ not in models:
                    models[candidate.__name__] = candidate
                    pending.append(candidate)
    for name, candidate in models.items():
        definition = schema if candidate is model else schema.get("$defs", {}).get(name)
        always = sorted(getattr(candidate, "always_present", ()))
        if definition is not None and always:
            definition["required"] = [
                *definition.get("required", []),
                *(f for f in always if f not in definition.get("required", [])),
            ]
    return schema


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for argument in typing.get_args(annotation) for model in _models_in(argument)]


def _portable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every `$ref` replaced by its definition, and only JSON Schema's own formats."""
    definitions = schema.get("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                name = node["$ref"].removeprefix("#/$defs/")
                return resolve({**definitions[name], **{k: v for k, v in node.items() if k != "$ref"}})
            return {
                key: resolve(value)
                for key, value in node.items()
                if key != "$defs" and not (key == "format" and value not in _STANDARD_FORMATS)
            }
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


def shipped_schemas() -> dict[str, dict[str, Any]]:
    """`generated_schemas()` as shipped in tool_schemas.json, the published tool contract.

    Generating them takes about 7 ms of every start-up; reading them, well under 1 ms. The file
    is also the contract under review: a model change that alters what agents see shows up in
    its diff. `tests/unit/test_tool_schemas.py` fails when the file and the models disagree, and
    `scripts/write-tool-schemas` rewrites it.
    """
    text = resources.files(__package__).joinpath(SCHEMAS_FILE).read_text(encoding="utf-8")
    schemas: dict[str, dict[str, Any]] = json.loads(text)
    return schemas


class McpToolServer:
    """Owns the low-level MCP `Server` and the mapping from tool calls to use cases.

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
        execute_tests: Callable[[], ExecuteTests[CallToolResult]],
        discover_tests: Callable[[], DiscoverTests[CallToolResult]],
        check_environment: Callable[[], CheckEnvironment[CallToolResult]],
        policy: RequestPolicy,
        errors: ToolErrors,
        runs: DetachedRuns,
        version: str,
    ) -> None:
        self._policy = policy
        self._errors = errors
        self._runs = runs
        self._execute_tests = execute_tests
        self._in_flight: set[anyio.CancelScope] = set()
        self._all_stopped = anyio.Event()  # set when the last call in flight ends
        self._tools = {
            binding.name: binding
            for binding in (
                _ToolBinding(
                    "execute_tests",
                    "Run pytest on the project and return exact counts plus every non-passing test with "
                    "its location, message and trimmed traceback. Test failures are results, not errors.",
                    execute_tests,
                    reports_progress=True,
                ),
                _ToolBinding(
                    "get_test_run",
                    "The result of a run that execute_tests answered with status 'running': waits for it up to "
                    "`wait` seconds, then gives the final answer (as execute_tests would have) or another "
                    "'running' answer with the failures so far. cancel=true stops the run and its processes.",
                    None,  # answered here, from the runs this server holds
                ),
                _ToolBinding(
                    "discover_tests",
                    "Collect tests without running them: node ids with their file, line and markers, the total, "
                    "and collection errors. A large collection lists the first tests that fit the answer's size "
                    "budget and counts the rest in omitted_tests; narrow it with path, keywords or markers.",
                    discover_tests,
                ),
                _ToolBinding(
                    "check_environment",
                    "Preflight, runs no tests: the interpreter pytest runs with and the rule that chose it, its "
                    "pytest and plugins, and the rootdir, configfile and testpaths pytest sees. When something "
                    "is missing, `problems` says what to install where; nothing is ever installed.",
                    check_environment,
                ),
            )
        }
        schemas = shipped_schemas()
        self._listing = ListToolsResult(
            tools=[
                Tool(
                    name=binding.name,
                    description=binding.description,
                    input_schema=binding.request_type.with_limits(schemas[binding.name]["input"], policy),
                    output_schema=schemas[binding.name]["output"],
                )
                for binding in self._tools.values()
            ]
        )
        self.server: Server[Any] = Server(
            "pytest-mcp",
            version=version,
            instructions="Run this project's pytest suite. Call discover_tests to list node ids and "
            "execute_tests to run them; failures come back as data you can act on.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return self._listing

    async def _call_tool(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        """One tools/call, stopped when its HTTP client leaves or the server shuts down (`stop_calls`)."""
        progress = _progress_for(ctx)
        scope = anyio.CancelScope()
        client = _client(ctx)
        if client is not None:
            client.on_leave(scope.cancel)
        self._in_flight.add(scope)
        try:
            with scope:
                return await self.call(params.name, params.arguments, progress, _owner(ctx))
        finally:
            self._in_flight.discard(scope)
            if not self._in_flight:
                self._all_stopped.set()
        why = client.why if client is not None and client.left else "the server is stopping"
        return self._errors.answer(ToolError.stopped(why))

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """While a transport serves: detached runs live here, and are all stopped on the way out.

        Without it (`pytest-mcp call`), every execute_tests call waits for its run to end.
        """
        async with self._runs.serving():
            yield

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
            with anyio.move_on_after(within):
                await self._all_stopped.wait()
        detached = await self._runs.stop(lambda run: True, "the server is stopping")
        return len(stopping) + detached

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        progress: ProgressSink | None = None,
        owner: Owner = "stdio",
    ) -> CallToolResult:
        """One tool call with the full error contract; an execute_tests call detaches its run when
        it is still going after `detach_after` seconds (ADR 0012)."""
        if name == "execute_tests" and self._policy.detach_after > 0 and self._runs.serving_now:
            return await self._detachable(arguments, progress, owner)
        return await self._call_once(name, arguments, progress, owner)

    async def _detachable(
        self, arguments: Mapping[str, Any] | None, progress: ProgressSink | None, owner: Owner
    ) -> CallToolResult:
        from pytest_mcp.domain.progress import RunWatch

        try:
            request = ExecuteTestsRequest.parse(arguments, self._policy)
        except InvalidArguments:  # answered, and logged, as every call's invalid arguments are
            return await self._call_once("execute_tests", arguments, progress, owner)
        watch = RunWatch()
        await watch.listen(progress)
        run = self._runs.start(
            owner, watch, request, lambda: self._call_once("execute_tests", arguments, None, owner, watch)
        )
        try:
            ended = await self._runs.wait(run, self._policy.detach_after)
        except anyio.get_cancelled_exc_class():
            await self._runs.cancel(run)  # the call was cancelled before it detached: so is its run
            raise
        if not ended:
            await watch.listen(None)  # this call is answered; its progress token is done with
        if ended:
            return run.outcome()
        self._runs.detach(run)
        _audit.info("run_detached", run_id_digest=_digest({"run_id": run.run_id}), done=watch.done, total=watch.total)
        return self._execute_tests().running(request, watch, run.run_id)

    async def _get_test_run(
        self, request: GetTestRunRequest, owner: Owner, progress: ProgressSink | None
    ) -> CallToolResult:
        run = self._runs.find(request.run_id, owner)
        if run is None:
            raise InvalidArguments(request.tool, [FieldError("run_id", self._unknown_run())])
        if request.cancel:
            await self._runs.cancel(run)
            return self._execute_tests().running(run.request, run.watch, run.run_id, status="cancelled")
        await run.watch.listen(progress)  # this call's progress token follows the run while it waits
        try:
            ended = await self._runs.wait(run, request.wait_seconds(self._policy))
        finally:
            with anyio.CancelScope(shield=True):
                await run.watch.listen(None)
        if not ended:
            return self._execute_tests().running(run.request, run.watch, run.run_id)
        if run.cancelled:
            return self._errors.answer(ToolError.stopped("the server stopped the run"))
        return run.outcome()

    def _unknown_run(self) -> str:
        reason = (
            "unknown or expired run id; a run belongs to the session that started it, and its result is kept "
            f"{self._runs.ttl:g}s after it finished"
        )
        if self._runs.stateless:
            reason += (
                "; this server is --stateless, so the run may be on another instance: get_test_run must reach "
                "the instance that answered 'running'"
            )
        return reason

    async def _call_once(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        progress: ProgressSink | None,
        owner: Owner,
        watch: RunWatch | None = None,
    ) -> CallToolResult:
        started = time.perf_counter()
        shown = name if len(name) <= 100 else f"{name[:100]}[... {len(name) - 100:,} characters cut]"
        log = _audit.bind(tool=shown, argument_keys=_argument_keys(arguments), args_digest=_digest(arguments))

        def elapsed() -> float:
            return round((time.perf_counter() - started) * 1000, 1)

        binding = self._tools.get(name)
        if binding is None:
            log.warning("tool_call", outcome="invalid", field="name", reason="unknown tool", duration_ms=elapsed())
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"name: unknown tool {shown!r}; available tools: {', '.join(self._tools)}",
                data={"errors": [{"field": "name", "reason": "unknown tool"}]},
            )
        try:
            request = binding.request_type.parse(arguments, self._policy)
            if isinstance(request, GetTestRunRequest):
                result = await self._get_test_run(request, owner, progress)
            elif binding.use_case is None:  # pragma: no cover - only get_test_run is answered here
                raise AssertionError(f"{name} has no use case")
            elif binding.reports_progress:
                result = await binding.use_case().execute(request, progress, watch)
            else:
                result = await binding.use_case().execute(request)
        except InvalidArguments as exc:
            error = ToolError.invalid(exc)
            log.warning("tool_call", outcome="invalid", duration_ms=elapsed(), **error.data)
            return self._errors.answer(error)
        except ExecutionFailed as exc:
            log.warning("tool_call", outcome=exc.reason, exit_code=exc.details.exit_code, duration_ms=elapsed())
            return self._errors.answer(ToolError.failed(exc))
        except anyio.get_cancelled_exc_class():
            log.info("tool_call", outcome="cancelled", duration_ms=elapsed())
            raise
        except MCPError:  # a detached run's JSON-RPC error (--error-mode jsonrpc, or our bug), given again
            raise
        except Exception:
            correlation_id = uuid.uuid4().hex[:12]
            log.exception("tool_call", outcome="internal_error", correlation_id=correlation_id, duration_ms=elapsed())
            raise MCPError(
                code=INTERNAL_ERROR,
                message=f"pytest-mcp hit an internal error; quote correlation id {correlation_id} when reporting it",
                data={"correlation_id": correlation_id},
            ) from None
        structured = result.structured_content or {}
        log.info("tool_call", outcome="ok", exit_code=structured.get("exit_code"), duration_ms=elapsed())
        return result
