"""Who is calling: the owner a call's runs belong to, and whether an HTTP client is still there."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

from mcp.server.context import ServerRequestContext

Owner = str
"""Who a run belongs to: `stdio`, `session:<Mcp-Session-Id or SSE session>`, or with --stateless
and for requests without a session (the sessionless 2026 protocol) `client:<digest of the
credentials>`; see `owner_of`."""

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


def owner_of(ctx: ServerRequestContext[Any], *, stateless: bool = False) -> Owner:
    """Who the call's runs belong to: its MCP session, or without one its credentials.

    stdio (and an in-process client) is one session. Over HTTP, a session is the streamable
    transport's `Mcp-Session-Id` or the SSE transport's `session_id`; requests that have neither
    (the sessionless 2026 protocol) are told apart by their Authorization header. With
    `stateless` (--stateless) the server keeps no sessions, so a session id in a request is
    whatever the client chose to send: the owner is the credentials alone, or two clients with
    different tokens sending the same id would read and cancel each other's runs.
    """
    request = ctx.request
    headers = getattr(request, "headers", None)
    if headers is None:
        return "stdio"
    query = getattr(request, "query_params", {})
    session = None if stateless else headers.get("mcp-session-id") or query.get("session_id")
    if session:
        return f"session:{session}"
    credentials = headers.get("authorization", "").encode()
    return f"client:{hashlib.sha256(credentials).hexdigest()[:32]}"


def client_of(ctx: ServerRequestContext[Any]) -> ClientPresence | None:
    """The HTTP request's ClientPresence (set by http_limits.DisconnectWatch); None on stdio."""
    scope = getattr(ctx.request, "scope", None)
    client = scope.get(CLIENT) if isinstance(scope, Mapping) else None
    return client if isinstance(client, ClientPresence) else None
