"""The health check is answered ahead of every other HTTP layer, at the least cost to the event loop (issue 46)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine, MutableMapping
from typing import Any, Literal

import pytest
from mcp.server import Server

from pytest_mcp.adapters.mcp.http_transport import HttpOptions, HttpTransport

pytestmark = pytest.mark.anyio

TOKEN = "a-long-enough-token-for-the-test-0123456789"


async def ask(kind: Literal["http", "sse"], method: str, path: str) -> tuple[list[MutableMapping[str, Any]], list[str]]:
    """What the app of a server with a token sends for one request, and the tasks it started."""
    app = HttpTransport(HttpOptions(version="9.9.9", auth_token=TOKEN), kind).app(Server("health"))
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000")],
        "scheme": "http",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
        "http_version": "1.1",
        "root_path": "",
    }
    sent: list[MutableMapping[str, Any]] = []
    started: list[str] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    loop = asyncio.get_running_loop()
    factory = loop.get_task_factory()

    def counting(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any], **kwargs: Any) -> asyncio.Task[Any]:
        started.append(getattr(coro, "__qualname__", repr(coro)))
        return asyncio.Task(coro, loop=loop, **kwargs)

    loop.set_task_factory(counting)  # type: ignore[arg-type]
    try:
        await app(scope, receive, send)
    finally:
        loop.set_task_factory(factory)
    return sent, started


@pytest.mark.parametrize("kind", ["http", "sse"])
async def test_the_health_check_needs_no_token_says_only_the_version_and_starts_no_task(
    kind: Literal["http", "sse"],
) -> None:
    # Behind the disconnect watch and the SDK's app, each answer started a task group and cost the
    # loop 1.1 to 1.4 ms of CPU; a prober at 200 a second took a quarter of a core from the runs.
    sent, started = await ask(kind, "GET", "/healthz")

    assert sent[0]["status"] == 200
    assert dict(sent[0]["headers"])[b"content-type"] == b"application/json"
    assert json.loads(sent[1]["body"]) == {"status": "ok", "version": "9.9.9"}
    assert int(dict(sent[0]["headers"])[b"content-length"]) == len(sent[1]["body"])
    assert started == []


async def test_a_head_request_gets_the_headers_without_the_body() -> None:
    sent, _ = await ask("http", "HEAD", "/healthz")

    assert sent[0]["status"] == 200
    assert sent[1]["body"] == b""


async def test_another_method_on_the_health_check_is_refused_and_told_which_are_allowed() -> None:
    sent, _ = await ask("http", "POST", "/healthz")

    assert sent[0]["status"] == 405
    assert dict(sent[0]["headers"])[b"allow"] == b"GET, HEAD"


@pytest.mark.parametrize("path", ["/mcp", "/healthz/", "/healthzz"])
async def test_every_other_path_still_needs_the_token(path: str) -> None:
    sent, _ = await ask("http", "GET", path)

    assert sent[0]["status"] == 401
