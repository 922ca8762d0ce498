"""Bounds on what an HTTP client can hold before and after it authenticates.

- Connections: at most `max_connections` open; each must deliver a whole request (headers and
  body) within `request_timeout` of being ready for one, or it is closed (slow-header and
  slow-body clients, "slowloris").
- Sessions (stateful streamable HTTP and the older SSE transport): at most `max_sessions`; a
  session with no request for `session_idle_timeout` is closed with its streams; a new session
  at the cap closes the least recently used one that has no request in flight.
- A request whose client goes away before its answer is complete is cancelled, and so is the
  pytest run it started: nobody could receive that answer (we keep no event store to resume).

uvicorn and Starlette are imported inside functions, as in http_transport.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from pytest_mcp.adapters.mcp.sessions import CLIENT, ClientPresence
from pytest_mcp.adapters.structlog_logging import routed_logger

_log = routed_logger("pytest_mcp.transport")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SESSION_HEADER = b"mcp-session-id"
PROTOCOL_HEADER = b"mcp-protocol-version"
HANDSHAKE_VERSIONS = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)
_SSE_SESSION = re.compile(rb"session_id=([0-9a-f]{32})")


@dataclass(frozen=True)
class HttpLimits:
    request_timeout: float = 10.0
    max_connections: int = 512
    max_sessions: int = 256
    session_idle_timeout: float = 1800.0
    max_sessions_per_client: int | None = None
    """None: half of `max_sessions` (see `client_share`)."""

    @property
    def client_share(self) -> int:
        """Sessions one client may hold at once: at its share, it gives up its own idle ones first."""
        share = self.max_sessions_per_client or max(1, self.max_sessions // 2)
        return min(share, self.max_sessions)

    @property
    def reap_interval(self) -> float:
        """How often idle sessions are looked for: a session outlives its timeout by at most this."""
        return min(5.0, self.session_idle_timeout / 4)


CLOSING_WAIT = 2.0
"""Seconds a connection over the cap has to show its method: a DELETE goes through, the rest get 503."""


def guarded_protocol(limits: HttpLimits, closing_lane: int = 0) -> type[Any]:
    """uvicorn's h11 protocol with a connection cap and a deadline for each request to arrive.

    uvicorn has no header timeout (its keep-alive timer starts only after a response), so a
    connection that sends half a request lives forever. Here the deadline is armed when a
    connection opens and after each response, and disarmed once a request has fully arrived.

    A connection over the cap is answered 503 and closed, which frees its descriptor, unless it
    is a DELETE: closing a session must never be refused (issue 45: DELETEs answered 503 kept
    their sessions, and the slots, for the 30-minute idle timeout). Up to `closing_lane`
    connections over the cap may wait `CLOSING_WAIT` seconds for their first bytes; a DELETE is
    then served on that connection, which closes after its answer, and anything else is
    refused. Beyond the lane a connection is refused at once, before it says anything.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    refusal = (
        b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nretry-after: 1\r\n"
        b"connection: close\r\ncontent-length: 25\r\n\r\ntoo many open connections"
    )
    method = b"DELETE "
    lane: set[Any] = set()  # connections over the cap, waiting to show their method or serving a DELETE

    class GuardedH11Protocol(H11Protocol):
        _timer: Any = None
        _refused = False
        _over_cap = False
        _waiting = False
        _head = b""

        def connection_made(self, transport: Any) -> None:
            if len(self.server_state.connections) >= limits.max_connections:
                self.transport = transport
                if len(lane) >= closing_lane:
                    self._refuse()
                    return
                self._over_cap = self._waiting = True
                lane.add(self)
                self._timer = self.loop.call_later(min(CLOSING_WAIT, limits.request_timeout), self._refuse)
                return
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            lane.discard(self)
            if not self._refused and not self._waiting:
                super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            if self._waiting:
                self._head += data
                if len(self._head) < len(method) and method.startswith(self._head):
                    return  # not enough to tell yet
                if not self._head.startswith(method):
                    self._refuse()
                    return
                self._waiting = False  # a DELETE: served as any request, on a connection of its own
                self._disarm()
                super().connection_made(self.transport)
                self._arm()
                data, self._head = self._head, b""
            super().data_received(data)

        def handle_events(self) -> None:
            super().handle_events()
            if self._over_cap and self.cycle is not None:
                self.cycle.keep_alive = False  # the lane's slot is free again once the DELETE is answered
            if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
                self._disarm()  # the request has arrived (or the connection is done for)

        def on_response_complete(self) -> None:
            if not self.transport.is_closing():
                self._arm()  # before the pipelined request super() may start handling
            super().on_response_complete()

        def _refuse(self) -> None:
            self._disarm()
            self._refused = True
            if not self.transport.is_closing():
                self.transport.write(refusal)
                self.transport.close()

        def _arm(self) -> None:
            self._disarm()
            self._timer = self.loop.call_later(limits.request_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _too_slow(self) -> None:
            self._timer = None
            if not self.transport.is_closing():
                self.transport.close()

    return GuardedH11Protocol


class DisconnectWatch:
    """Tells the request's ClientPresence (`scope[CLIENT]`) when its client leaves before the answer is complete.

    It becomes the only reader of the server's `receive`, forwarding each message to the app
    one at a time (nothing is buffered ahead of the body limit), and keeps reading after the
    body so that a disconnect is seen while the app is still working on the answer.
    """

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        client = ClientPresence()
        scope[CLIENT] = client
        forward, forwarded = anyio.create_memory_object_stream[Message](0)
        complete = False

        async def pump() -> None:
            async with forward:
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        if not complete:
                            client.leave()
                        await forward.send(message)
                        return
                    await forward.send(message)

        async def tracked_send(message: Message) -> None:
            nonlocal complete
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                complete = True

        async def next_message() -> Message:
            try:
                return await forwarded.receive()
            except anyio.EndOfStream:
                return {"type": "http.disconnect"}

        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            try:
                await self._app(scope, next_message, tracked_send)
            finally:
                group.cancel_scope.cancel()


@dataclass
class _Session:
    close: Callable[[], Awaitable[None]]
    client: str
    last_request: float = field(default_factory=time.monotonic)
    in_flight: int = 0


def client_of_scope(scope: Scope) -> str:
    """Who opens a session, for the per-client share: its credentials and the address it comes from.

    With one configured token every client presents the same credentials, so the address tells
    hosts apart; without a token, different Authorization headers from one host count apart too.
    Only a digest of the header is kept: it ends up in log lines.
    """
    credentials = next((bytes(value) for key, value in scope.get("headers", []) if key == b"authorization"), b"")
    peer = scope.get("client") or ("", 0)
    return f"{hashlib.sha256(credentials).hexdigest()[:12]}@{peer[0]}"


class SessionTable:
    """The live sessions of one transport, with the caps, the idle expiry and the eviction.

    The table is the only session limit that speaks (issue 45). A session being opened holds a
    slot from the moment it is admitted (`admit`) until it is established or abandoned, so that
    50 concurrent opens cannot all see room for one and overshoot the cap, as they did when the
    SDK's own cap, a little above ours, then refused them with its own message.

    Eviction order, when a client opens a session:
    1. a client holding its share (`HttpLimits.client_share`) gives up its own least recently
       used idle session, whatever the others hold;
    2. otherwise, at `max_sessions`, the least recently used idle session of the client that
       holds the most goes;
    3. if nothing the rule allows is idle, the open is refused (503 with Retry-After).
    So a client can never take more than its share, and another client can always open one.

    A session counts as busy while one of its requests is in flight; an open stream that only
    waits for server messages is not a request, so it neither keeps a session alive nor
    stops it from being evicted.
    """

    def __init__(self, limits: HttpLimits) -> None:
        self._limits = limits
        self._sessions: dict[str, _Session] = {}
        self._opening: Counter[str] = Counter()
        self.on_end: Callable[[str], None] = lambda session_id: None
        """Told each session id that ends, however it ends."""

    def __len__(self) -> int:
        return len(self._sessions)

    def held(self, client: str) -> int:
        """Sessions `client` holds, counting those it is opening."""
        return sum(1 for s in self._sessions.values() if s.client == client) + self._opening[client]

    async def admit(self, client: str) -> str | None:
        """Reserve a slot for a session `client` opens, evicting as needed; else the reason for refusing it.

        An admitted open must be followed by `opened` or `abandoned`.
        """
        share, cap = self._limits.client_share, self._limits.max_sessions
        while True:
            held = self.held(client)
            if held >= share:
                victim = self._least_recently_used(lambda s: s.client == client)
                if victim is None:
                    return f"this client holds {held} sessions, its share of {share}, each with a request in flight"
            elif len(self._sessions) + self._opening.total() >= cap:
                victim = self._from_the_largest_holder()
                if victim is None:
                    return f"{cap} sessions are open, each with a request in flight"
            else:
                self._opening[client] += 1  # no await between the check and the reservation
                return None
            await self._close(victim, "evicted")

    def opened(self, client: str, session_id: str, close: Callable[[], Awaitable[None]]) -> None:
        """The admitted open of `client` established `session_id`, which `close` ends."""
        self.abandoned(client)
        self._sessions[session_id] = _Session(close, client)

    def abandoned(self, client: str) -> None:
        """The admitted open of `client` ended without a session (or its session is now in the table)."""
        self._opening[client] -= 1
        if self._opening[client] <= 0:
            del self._opening[client]

    def forget(self, session_id: str) -> None:
        if self._sessions.pop(session_id, None) is not None:
            self.on_end(session_id)

    @contextlib.contextmanager
    def request(self, session_id: str | None) -> Any:
        session = self._sessions.get(session_id) if session_id else None
        if session is not None:
            session.last_request = time.monotonic()
            session.in_flight += 1
        try:
            yield
        finally:
            if session is not None:
                session.in_flight -= 1
                session.last_request = time.monotonic()

    def _least_recently_used(self, eligible: Callable[[_Session], bool]) -> str | None:
        idle = [(s.last_request, sid) for sid, s in self._sessions.items() if s.in_flight == 0 and eligible(s)]
        return min(idle)[1] if idle else None

    def _from_the_largest_holder(self) -> str | None:
        """The least recently used idle session of the client holding the most sessions (that has an idle one)."""
        holdings = Counter(s.client for s in self._sessions.values())
        idle = [(-holdings[s.client], s.last_request, sid) for sid, s in self._sessions.items() if s.in_flight == 0]
        return min(idle)[2] if idle else None

    async def reap(self) -> None:
        """Close every session with no request for the idle timeout, every `reap_interval`."""
        while True:
            await anyio.sleep(self._limits.reap_interval)
            cutoff = time.monotonic() - self._limits.session_idle_timeout
            for session_id in [
                sid for sid, s in self._sessions.items() if s.in_flight == 0 and s.last_request < cutoff
            ]:
                await self._close(session_id, "expired")

    async def close_all(self) -> None:
        for session_id in list(self._sessions):
            await self._close(session_id, "shutdown")

    async def _close(self, session_id: str, why: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is None:
            return
        self.on_end(session_id)
        with anyio.CancelScope(shield=True):
            await session.close()
        if why != "shutdown":
            _log.info("session_closed", why=why, client=session.client, sessions=len(self._sessions))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


class StreamableSessions:
    """SessionTable for streamable HTTP: wraps the SDK's app, whose session manager it consults.

    The SDK keeps its sessions in `StreamableHTTPSessionManager._server_instances` and ends one
    with `_discard_session`, which forgets it before it terminates its transport, so that the
    SDK never counts a session our table has already closed; nothing public lists or ends them.
    tests/e2e/test_http_limits.py pins this use of the SDK.
    """

    def __init__(self, app: ASGIApp, manager: Any, table: SessionTable) -> None:
        self._app = app
        self._manager = manager
        self._table = table

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        session_id = _header(scope, SESSION_HEADER)
        # A POST without a session in the handshake era (no protocol version, or one of the
        # handshake's) is an initialize, which opens a session; requests of the sessionless 2026
        # protocol name a later version and open nothing.
        version = _header(scope, PROTOCOL_HEADER)
        if session_id is None and scope["method"] == "POST" and (version is None or version in HANDSHAKE_VERSIONS):
            await self._open(scope, receive, send)
            return
        # A GET holds a stream for server messages: not a request that keeps the session busy.
        with self._table.request(session_id if scope["method"] != "GET" else None):
            await self._app(scope, receive, send)
        if session_id is not None and session_id not in self._manager._server_instances:
            self._table.forget(session_id)  # deleted by the client, or ended by the SDK

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = client_of_scope(scope)
        refusal = await self._table.admit(client)
        if refusal is not None:
            _log.warning("session_refused", client=client, reason=refusal)
            await _refuse(send, refusal)
            return
        opened: list[str] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                for key, value in message.get("headers", []):
                    if bytes(key).lower() == SESSION_HEADER:
                        opened.append(bytes(value).decode("latin-1"))
            await send(message)

        try:
            await self._app(scope, receive, watch)
        finally:
            transport = self._manager._server_instances.get(opened[0]) if opened else None
            if transport is None:
                self._table.abandoned(client)
            else:
                self._table.opened(client, opened[0], self._ender(opened[0], transport))

    def _ender(self, session_id: str, transport: Any) -> Callable[[], Awaitable[None]]:
        async def end() -> None:
            await self._manager._discard_session(session_id, transport)

        return end


async def _refuse(send: Send, reason: str) -> None:
    """Refuse an open with our limit's reason: 503, and Retry-After as the connection cap gives it."""
    body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"' + reason.replace('"', "'").encode() + b'"}}'
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [(b"content-type", b"application/json"), (b"retry-after", b"1")],
        }
    )
    await send({"type": "http.response.body", "body": body})


class SseSessions:
    """SessionTable for the older SSE transport: each GET stream is a session.

    The session id is read from the `endpoint` event the SDK sends first on the stream; each
    POST to the messages path names it in its query string.
    """

    def __init__(self, table: SessionTable) -> None:
        self._table = table

    async def stream(self, serve: Callable[[Send], Awaitable[None]], scope: Scope, send: Send) -> None:
        """Serve one SSE stream (the request `scope`) as a session that the table can close."""
        client = client_of_scope(scope)
        refusal = await self._table.admit(client)
        if refusal is not None:
            _log.warning("session_refused", client=client, reason=refusal)
            await _refuse(send, refusal)
            return
        cancel = anyio.CancelScope()
        closed = anyio.Event()
        session_ids: list[str] = []

        async def close() -> None:
            cancel.cancel()
            with anyio.move_on_after(1):
                await closed.wait()

        async def watch(message: Message) -> None:
            if not session_ids and message["type"] == "http.response.body":
                found = _SSE_SESSION.search(bytes(message.get("body", b"")))
                if found:
                    session_ids.append(found.group(1).decode())
                    self._table.opened(client, session_ids[0], close)
            await send(message)

        try:
            with cancel:
                await serve(watch)
        finally:
            closed.set()
            if session_ids:
                self._table.forget(session_ids[0])
            else:
                self._table.abandoned(client)

    def messages(self, app: ASGIApp) -> ASGIApp:
        """Wrap the messages endpoint so each POST counts as a request of its session."""

        async def post(scope: Scope, receive: Receive, send: Send) -> None:
            found = _SSE_SESSION.search(bytes(scope.get("query_string", b"")))
            with self._table.request(found.group(1).decode() if found else None):
                await app(scope, receive, send)

        return post


def raise_open_file_limit() -> int:
    """Raise this process's soft limit on open files towards the hard one; return the soft limit now."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = 1 << 20
    target = min(ceiling, hard if hard != resource.RLIM_INFINITY else ceiling)
    if soft == resource.RLIM_INFINITY or soft >= target:
        return ceiling if soft == resource.RLIM_INFINITY else soft
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft
