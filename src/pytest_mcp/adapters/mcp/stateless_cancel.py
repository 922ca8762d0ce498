"""Cancellation over stateless streamable HTTP, where the SDK cannot see it.

In stateless mode every POST gets a fresh server session, so a `notifications/cancelled` sent
in its own POST reaches a session that never saw the call it names, and the SDK drops it. The
TypeScript SDK (every version) and the Python SDK's legacy client cancel that way, and keep the
call's own request open, so the run went on until its timeout and held a run slot.

`StatelessCancellation` reads the JSON-RPC body of each POST as it passes (the SDK still gets
every byte, unchanged), remembers the ClientPresence of each `tools/call` in flight, and, when
a `notifications/cancelled` arrives, tells the named call's presence that its client left: the
call stops, and with it every process of its run (as for a disconnect).

Stateless requests carry no session, so a call is identified by its JSON-RPC id together with
the client's address and the credentials it presented. Ids are small integers that every
client counts from the start, so when two calls in flight match the same key, none of them is
cancelled: it cannot be told which one was meant (architecture/transports.md).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from typing import Any

from pytest_mcp.adapters.mcp.http_limits import ASGIApp, Message, Receive, Scope, Send
from pytest_mcp.adapters.mcp.sessions import CLIENT, ClientPresence
from pytest_mcp.adapters.structlog_logging import routed_logger

_log = routed_logger("pytest_mcp.transport")

INSPECTED_BYTES = 1 << 20
"""Bodies longer than this pass through unread: a cancellation is about 150 bytes, and a
tools/call of pytest-mcp's tools far under this."""

CANCELLED_BY_CLIENT = "its client cancelled it"

_Key = tuple[str, bytes, str]


class StatelessCancellation:
    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        self._calls: defaultdict[_Key, list[ClientPresence]] = defaultdict(list)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        presence = scope.get(CLIENT)
        if scope["type"] != "http" or scope["method"] != "POST" or not isinstance(presence, ClientPresence):
            await self._app(scope, receive, send)
            return
        body = bytearray()
        registered: list[_Key] = []

        async def inspecting_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request" and len(body) <= INSPECTED_BYTES:
                body.extend(message.get("body", b""))
                if not message.get("more_body", False) and len(body) <= INSPECTED_BYTES:
                    registered.extend(self._read(scope, presence, bytes(body)))
            return message

        try:
            await self._app(scope, inspecting_receive, send)
        finally:
            for key in registered:
                self._calls[key].remove(presence)
                if not self._calls[key]:
                    del self._calls[key]

    def in_flight(self) -> int:
        return sum(len(presences) for presences in self._calls.values())

    def _read(self, scope: Scope, presence: ClientPresence, body: bytes) -> list[_Key]:
        """Register a tools/call, or act on a cancellation; the keys registered."""
        try:
            message = json.loads(body)
        except ValueError:
            return []  # the SDK answers it
        if not isinstance(message, dict):
            return []
        method, params = message.get("method"), message.get("params")
        if method == "tools/call" and "id" in message:
            key = _key(scope, message["id"])
            self._calls[key].append(presence)
            return [key]
        if method == "notifications/cancelled" and isinstance(params, dict) and "requestId" in params:
            self._cancel(_key(scope, params["requestId"]))
        return []

    def _cancel(self, key: _Key) -> None:
        matching = self._calls.get(key, [])
        if len(matching) == 1:
            _log.info("stateless_call_cancelled", request_id=key[2])
            matching[0].leave(CANCELLED_BY_CLIENT)
        elif matching:
            _log.warning("stateless_cancel_ambiguous", request_id=key[2], calls=len(matching))


def _key(scope: Scope, request_id: Any) -> _Key:
    client = scope.get("client")
    address = str(client[0]) if client else ""
    credentials = dict(scope.get("headers", [])).get(b"authorization", b"")
    return address, hashlib.sha256(credentials).digest(), json.dumps(request_id, sort_keys=True)
