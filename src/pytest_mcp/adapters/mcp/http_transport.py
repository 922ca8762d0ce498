"""Serve MCP over HTTP: streamable HTTP (stateful or stateless) or the older SSE transport.

Starlette and uvicorn are imported only when one of these transports is selected, so the
stdio path never pays for them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp.server import Server

from pytest_mcp.adapters.mcp.http_limits import (
    ASGIApp,
    DisconnectWatch,
    HttpLimits,
    Receive,
    Scope,
    Send,
    SessionTable,
    SseSessions,
    StreamableSessions,
    guarded_protocol,
    raise_open_file_limit,
)
from pytest_mcp.adapters.mcp.shutdown_signals import ShutdownSignals
from pytest_mcp.adapters.mcp.stateless_cancel import StatelessCancellation
from pytest_mcp.adapters.mcp.tool_server import McpToolServer
from pytest_mcp.adapters.structlog_logging import routed_logger
from pytest_mcp.settings import exposure_problem, token_problem

_log = routed_logger("pytest_mcp.transport")

HEALTH_PATH = "/healthz"
DEFAULT_PATHS = {"http": "/mcp", "sse": "/sse"}
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
GRACEFUL_SHUTDOWN_SECONDS = 2
BACKLOG = 64
"""Connections the kernel queues for us. asyncio accepts up to this many at a time before any
reaches our cap, so they hold descriptors meanwhile: uvicorn's 2,048 let an accept storm run
the process out of them."""
RESERVED_FILES = 64
"""Descriptors kept for everything but client connections: pipes of runs, logs, the listener."""


@dataclass(frozen=True)
class HttpOptions:
    host: str = "127.0.0.1"
    port: int = 8000  # 0: the OS picks a free one, which `port_file` and the "serving" event give
    port_file: Path | None = None
    path: str | None = None  # the transport's own default: /mcp, or /sse and /messages/
    stateless: bool = False
    allowed_hosts: tuple[str, ...] = ()
    auth_token: str | None = field(default=None, repr=False)
    version: str = ""
    limits: HttpLimits = field(default_factory=HttpLimits)

    def __post_init__(self) -> None:
        # The settings refuse this too; this holds for whoever builds the options in-process.
        problem = exposure_problem(self.host, self.auth_token is not None)
        if problem:
            raise ValueError(problem)

    def host_allow_list(self) -> list[str]:
        """Loopback on any port, plus whatever was configured (`name` or `name:port`)."""
        allowed = [f"{host}:*" for host in LOOPBACK_HOSTS] + list(LOOPBACK_HOSTS)
        for entry in self.allowed_hosts:
            allowed += [entry] if ":" in entry.rsplit("]", 1)[-1] else [entry, f"{entry}:*"]
        return allowed

    def origin_allow_list(self) -> list[str]:
        hosts = [host for host in self.host_allow_list() if not host.endswith(":*")]
        patterns = [host for host in self.host_allow_list() if host.endswith(":*")]
        return [f"{scheme}://{host}" for scheme in ("http", "https") for host in hosts + patterns]


class BearerTokenAuth:
    """Requires `Authorization: Bearer <token>` on every HTTP request that reaches it (`HealthCheck`
    answers the health check before it).

    Tokens are compared as SHA-256 digests with `hmac.compare_digest`: constant time, and the
    length of the configured token does not leak either.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        problem = token_problem(token)
        if problem:
            raise ValueError(f"the auth token {problem}")
        self._app = app
        self._digest = hashlib.sha256(token.encode()).digest()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        header = dict(scope.get("headers", [])).get(b"authorization", b"")
        scheme, _, presented = header.partition(b" ")
        valid = scheme.lower() == b"bearer" and hmac.compare_digest(
            hashlib.sha256(presented.strip()).digest(), self._digest
        )
        if valid:
            await self._app(scope, receive, send)
            return
        error = "invalid_token" if header else "invalid_request"
        body = json.dumps({"error": error, "error_description": "a valid bearer token is required"}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", f'Bearer realm="pytest-mcp", error="{error}"'.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


class HealthCheck:
    """Answers `GET /healthz` (and HEAD) itself, ahead of every other layer, and passes the rest on.

    A load balancer or a prober asks it several times a second, and each answer is the event
    loop's work: through the token check, the disconnect watch (a task group per request) and
    the SDK's Starlette app, an answer cost the loop 1.1 to 1.4 ms of CPU, so a prober at 200 a
    second took a quarter of a core from the runs' calls (issue 46). Answered here, the body is
    made once. It needs no token and says only the version.
    """

    def __init__(self, app: ASGIApp, version: str) -> None:
        self._app = app
        self._body = json.dumps({"status": "ok", "version": version}).encode()
        self._headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(self._body))]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != HEALTH_PATH:
            await self._app(scope, receive, send)
            return
        if scope["method"] in ("GET", "HEAD"):
            await send({"type": "http.response.start", "status": 200, "headers": self._headers})
            await send({"type": "http.response.body", "body": self._body if scope["method"] == "GET" else b""})
            return
        refusal = b"Method Not Allowed"
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"allow", b"GET, HEAD")]
        await send({"type": "http.response.start", "status": 405, "headers": headers})
        await send({"type": "http.response.body", "body": refusal})


def _security(options: HttpOptions) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=options.host_allow_list(),
        allowed_origins=options.origin_allow_list(),
    )


def streamable_http_app(server: Server[Any], options: HttpOptions, sessions: SessionTable) -> ASGIApp:
    app = server.streamable_http_app(
        streamable_http_path=options.path or DEFAULT_PATHS["http"],
        stateless_http=options.stateless,
        transport_security=_security(options),
        host=options.host,
        # Idle sessions are closed by our SessionTable, which also counts a session that only holds
        # a GET stream as idle. Its cap is the only one: it reserves a slot for every session the
        # SDK opens, and evicts before admitting. The SDK's own cap, a little above ours, counted
        # opens we had not yet recorded and sessions we had just closed, and refused with its own
        # message while ours still had idle sessions to evict (issue 45).
        session_idle_timeout=None,
        max_sessions=None,
    )
    if options.stateless:
        return StatelessCancellation(app)
    return StreamableSessions(app, server._session_manager, sessions)


def sse_app(server: Server[Any], options: HttpOptions, sessions: SessionTable) -> ASGIApp:
    from mcp.server.sse import SseServerTransport
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    # Without a path, where the SDKs and client configurations look: GET /sse, POST /messages/.
    stream_path = options.path or DEFAULT_PATHS["sse"]
    messages_path = options.path.rstrip("/") + "/messages/" if options.path else "/messages/"
    sse = SseServerTransport(messages_path, security_settings=_security(options))
    streams = SseSessions(sessions)

    async def connect(request: Request) -> Response:
        async def serve(send: Send) -> None:
            async with sse.connect_sse(request.scope, request.receive, send) as (read, write):
                await server.run(read, write, server.create_initialization_options())

        await streams.stream(serve, request.scope, request._send)
        return Response()

    return Starlette(
        routes=[
            Route(stream_path, connect, methods=["GET"]),
            Mount(messages_path, app=streams.messages(sse.handle_post_message)),
        ]
    )


class HttpTransport:
    """HTTP transports: `kind="http"` (streamable HTTP) or `kind="sse"` (HTTP+SSE, the older one).

    Shutdown contract, as for stdio: on SIGTERM or SIGINT, every call in flight is cancelled
    first (the TestRunner port promises that a cancelled run stops all it started), then every
    session is closed with its streams, then uvicorn stops (giving any connection still open at
    most 2 s), and `serve` returns 128 + the signal number. Measured
    under 1 s with runs and sessions open (tests/e2e/test_http_limits.py).
    """

    def __init__(self, options: HttpOptions, kind: Literal["http", "sse"]) -> None:
        self._options = options
        self._kind = kind
        self._sessions = SessionTable(options.limits)

    def app(self, server: Server[Any]) -> ASGIApp:
        build = streamable_http_app if self._kind == "http" else sse_app
        app: ASGIApp = DisconnectWatch(build(server, self._options, self._sessions))
        if self._options.auth_token is not None:
            app = BearerTokenAuth(app, self._options.auth_token)
        return HealthCheck(app, self._options.version)

    async def serve(self, tool_server: McpToolServer) -> int:
        import uvicorn

        transport = self

        class _Uvicorn(uvicorn.Server):
            def capture_signals(self) -> Any:  # we take the signals ourselves, below
                from contextlib import nullcontext

                return nullcontext()

            async def startup(self, sockets: Any = None) -> None:
                await super().startup(sockets)
                # The port is known only now that uvicorn has bound it (with --port 0, the OS chose it).
                transport._listening(self.servers[0].sockets[0].getsockname()[1], max_connections)

        options, limits = self._options, self._options.limits
        # Every connection holds a descriptor; running out makes asyncio's accept loop log an
        # error for each attempt (about 18,000 lines a second were seen), and /healthz stops.
        # The descriptors for connections are shared between the cap and, beyond it, as many again
        # for connections that only close a session (guarded_protocol's lane for DELETEs).
        if options.port_file is not None:  # a file left by an earlier server must not pass for this one's
            options.port_file.unlink(missing_ok=True)
        open_files = raise_open_file_limit()
        for_connections = max(2, open_files - RESERVED_FILES - 2 * BACKLOG)
        max_connections = max(1, min(limits.max_connections, for_connections // 2))
        closing_lane = min(max_connections, for_connections - max_connections)
        config = uvicorn.Config(
            self.app(tool_server.server),
            host=self._options.host,
            port=self._options.port,
            http=guarded_protocol(replace(limits, max_connections=max_connections), closing_lane),
            backlog=BACKLOG,
            lifespan="on",
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        )
        web = _Uvicorn(config)
        signals = ShutdownSignals()
        stopping = anyio.Event()

        async def stop_in_order() -> None:
            await stopping.wait()
            calls = await tool_server.stop_calls(within=1.0)
            await self._sessions.close_all()
            _log.info("stopped_calls_and_sessions", calls=calls)
            web.should_exit = True

        # A session that ends (deleted, expired, evicted, its SSE stream closed) takes its runs along.
        self._sessions.on_end = lambda session_id: tool_server.end_session(f"session:{session_id}")
        async with tool_server.serving(), anyio.create_task_group() as group:
            group.start_soon(signals.watch, stopping.set)
            group.start_soon(stop_in_order)
            group.start_soon(self._sessions.reap)
            await web.serve()
            group.cancel_scope.cancel()
        return signals.exit_code(otherwise=0 if web.started else 1)

    def _listening(self, port: int, max_connections: int) -> None:
        """Say where the server listens: the "serving" event, and `port_file` written whole (renamed into place)."""
        options, limits = self._options, self._options.limits
        _log.info(
            "serving",
            transport=self._kind,
            url=f"http://{options.host}:{port}{options.path or DEFAULT_PATHS[self._kind]}",
            stateless=options.stateless,
            auth=options.auth_token is not None,
            max_connections=max_connections,
            max_sessions=limits.max_sessions,
            max_sessions_per_client=limits.client_share,
        )
        if options.port_file is not None:
            partial = options.port_file.with_name(f".{options.port_file.name}.{os.getpid()}")
            partial.write_text(f"{port}\n", encoding="ascii")
            partial.replace(options.port_file)
