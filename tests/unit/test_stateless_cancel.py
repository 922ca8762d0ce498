"""StatelessCancellation: which notifications/cancelled stop which stateless tools/call."""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.abc
import pytest

from pytest_mcp.adapters.mcp.http_limits import Message, Receive, Scope, Send
from pytest_mcp.adapters.mcp.sessions import CLIENT, ClientPresence
from pytest_mcp.adapters.mcp.stateless_cancel import CANCELLED_BY_CLIENT, INSPECTED_BYTES, StatelessCancellation

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class App:
    """An ASGI app that reads the whole body, then waits until released (a call in flight)."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.release = anyio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        self.bodies.append(body)
        if b"tools/call" in body:
            await self.release.wait()


def request(
    body: bytes, *, address: str = "127.0.0.1", token: str = "", chunk: int = 0
) -> tuple[Scope, Receive, ClientPresence]:
    presence = ClientPresence()
    headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
    scope: Scope = {"type": "http", "method": "POST", "client": (address, 50000), "headers": headers, CLIENT: presence}
    pieces = [body[i : i + chunk] for i in range(0, len(body), chunk)] if chunk else [body]
    messages: list[Message] = [
        {"type": "http.request", "body": piece, "more_body": index < len(pieces) - 1}
        for index, piece in enumerate(pieces)
    ]

    async def receive() -> Message:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    return scope, receive, presence


def call(request_id: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": "x"}}).encode()


def cancel(request_id: Any) -> bytes:
    params = {"requestId": request_id, "reason": "user pressed stop"}
    return json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}).encode()


async def send(message: Message) -> None:
    pass


async def start_calls(
    group: anyio.abc.TaskGroup, middleware: StatelessCancellation, calls: list[tuple[Scope, Receive, ClientPresence]]
) -> None:
    for scope, receive, _ in calls:
        group.start_soon(middleware, scope, receive, send)
    with anyio.fail_after(5):
        while middleware.in_flight() < len(calls):
            await anyio.sleep(0.01)


async def test_a_cancellation_stops_the_one_call_it_names_and_passes_through_unchanged() -> None:
    app = App()
    middleware = StatelessCancellation(app)
    first, second = request(call(1), chunk=7), request(call(2))
    async with anyio.create_task_group() as group:
        await start_calls(group, middleware, [first, second])
        scope, receive, _ = request(cancel(2), chunk=5)
        await middleware(scope, receive, send)
        assert (first[2].left, second[2].left) == (False, True)
        assert second[2].why == CANCELLED_BY_CLIENT
        assert app.bodies[-1] == cancel(2)
        assert sorted(app.bodies[:2]) == sorted([call(1), call(2)])
        app.release.set()
        group.cancel_scope.cancel()
    assert middleware.in_flight() == 0


@pytest.mark.parametrize(
    ("call_from", "cancel_from"),
    [
        ({"address": "10.0.0.1"}, {"address": "10.0.0.2"}),
        ({"token": "a" * 32}, {"token": "b" * 32}),
        ({"token": "a" * 32}, {}),
    ],
    ids=["another-address", "another-token", "no-token"],
)
async def test_a_cancellation_from_another_client_stops_nothing(
    call_from: dict[str, str], cancel_from: dict[str, str]
) -> None:
    app = App()
    middleware = StatelessCancellation(app)
    target = request(call(1), **call_from)
    async with anyio.create_task_group() as group:
        await start_calls(group, middleware, [target])
        scope, receive, _ = request(cancel(1), **cancel_from)
        await middleware(scope, receive, send)
        assert not target[2].left
        scope, receive, _ = request(cancel(1), **call_from)
        await middleware(scope, receive, send)
        assert target[2].left
        app.release.set()
        group.cancel_scope.cancel()


async def test_when_two_calls_match_the_cancellation_neither_is_stopped() -> None:
    app = App()
    middleware = StatelessCancellation(app)
    one, other = request(call(1)), request(call(1))
    async with anyio.create_task_group() as group:
        await start_calls(group, middleware, [one, other])
        scope, receive, _ = request(cancel(1))
        await middleware(scope, receive, send)
        assert (one[2].left, other[2].left) == (False, False)
        app.release.set()
        group.cancel_scope.cancel()


@pytest.mark.parametrize(
    ("call_id", "cancel_id"), [(1, "1"), ("a", "b"), (1, 2)], ids=["int-vs-string", "strings", "ints"]
)
async def test_ids_match_exactly(call_id: Any, cancel_id: Any) -> None:
    app = App()
    middleware = StatelessCancellation(app)
    target = request(call(call_id))
    async with anyio.create_task_group() as group:
        await start_calls(group, middleware, [target])
        scope, receive, _ = request(cancel(cancel_id))
        await middleware(scope, receive, send)
        assert not target[2].left
        app.release.set()
        group.cancel_scope.cancel()


@pytest.mark.parametrize(
    "body",
    [b"{not json", b"[1, 2]", b'"text"', cancel(None)[:-2], b" " * (INSPECTED_BYTES + 1) + call(1)],
    ids=["malformed", "array", "string", "truncated", "oversized"],
)
async def test_bodies_it_cannot_read_pass_through_untracked(body: bytes) -> None:
    app = App()
    app.release.set()
    middleware = StatelessCancellation(app)
    scope, receive, presence = request(body, chunk=4096)
    await middleware(scope, receive, send)
    assert app.bodies == [body]
    assert middleware.in_flight() == 0
    assert not presence.left
