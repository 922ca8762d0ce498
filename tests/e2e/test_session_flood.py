"""One client's flood of sessions must not lock out the rest (issue 45), with the default limits.

A client opens 1,000 sessions, in batches of 50, each with the GET stream the SDK client keeps.
Over raw HTTP (httpx2, which the SDK brings) rather than the SDK client, to keep it fast. Before
the fix, the SDK's own cap refused about half of them ("Too many open sessions"), a second client's
session was evicted by the flood, DELETEs met the connection cap (503) and kept their slots,
so the sessions opened after the flood were refused too.
"""

from __future__ import annotations

import json
import socket
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest

from tests.e2e.e2e_support import http_server, write_project

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TOKEN = "flood-test-token-0123456789abcdef"
PROJECT = {"test_ok.py": "def test_ok():\n    pass\n"}
VERSION = "2025-11-25"
ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "flood", "version": "0"}},
}
FLOOD = 1_000
BATCH = 50
AFTER_THE_FLOOD = 250
MAX_CONNECTIONS = 512  # the default
FLOOD_SHARE = 128  # half the default 256 sessions


def json_rpc(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of an answer, whether sent as JSON or as one SSE event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return dict(json.loads(data[-1]))
    return dict(response.json())


class Client:
    """A raw streamable HTTP client: opens sessions as the SDK does (initialize, initialized, a GET stream)."""

    def __init__(self, url: str, local_address: str = "127.0.0.1", keepalive: int = 4 * BATCH) -> None:
        self.url = url
        self.http = httpx.AsyncClient(
            transport=httpx.AsyncHTTPTransport(
                local_address=local_address,
                # Idle connections expire before the server's keep-alive (5 s) closes them under a request.
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=keepalive, keepalive_expiry=1.0),
            ),
            headers={**ACCEPT, "Authorization": f"Bearer {TOKEN}"},
            timeout=30,
        )
        self.refusals: list[httpx.Response] = []

    async def open(self, streams: anyio.abc.TaskGroup | None = None) -> str | None:
        """A new session's id, or None if the server refused it (kept in `refusals`)."""
        response = await self.http.post(self.url, json=INITIALIZE)
        if response.status_code != 200:
            self.refusals.append(response)
            return None
        session_id = response.headers["mcp-session-id"]
        initialized = await self.http.post(
            self.url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=self.session_headers(session_id),
        )
        assert initialized.status_code in (202, 404), initialized.status_code  # 404: evicted meanwhile
        if streams is not None:
            streams.start_soon(self.hold_stream, session_id)
        return session_id

    async def hold_stream(self, session_id: str) -> None:
        """Read the session's GET stream until the server ends it (as the SDK client does)."""
        async with self.http.stream("GET", self.url, headers=self.session_headers(session_id)) as stream:
            async for _ in stream.aiter_bytes():
                pass

    async def call(self, session_id: str, name: str, arguments: dict[str, Any]) -> httpx.Response:
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        return await self.http.post(self.url, json=body, headers=self.session_headers(session_id))

    async def ping(self, session_id: str) -> httpx.Response:
        body = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        return await self.http.post(self.url, json=body, headers=self.session_headers(session_id))

    async def delete(self, session_id: str) -> httpx.Response:
        return await self.http.delete(self.url, headers=self.session_headers(session_id))

    @staticmethod
    def session_headers(session_id: str) -> dict[str, str]:
        return {"mcp-session-id": session_id, "mcp-protocol-version": VERSION}


@asynccontextmanager
async def client(url: str, local_address: str = "127.0.0.1", keepalive: int = 4 * BATCH) -> AsyncIterator[Client]:
    result = Client(url, local_address, keepalive)
    async with result.http:
        yield result


async def in_batches(count: int, one: Any, batch: int = BATCH) -> list[Any]:
    """`one()` called `count` times, `batch` at a time; the results in order."""
    results: list[Any] = []
    for start in range(0, count, batch):
        results += await concurrently(min(batch, count - start), one)
    return results


async def concurrently(count: int, one: Any) -> list[Any]:
    results: list[Any] = [None] * count

    async def run(index: int) -> None:
        results[index] = await one()

    async with anyio.create_task_group() as group:
        for index in range(count):
            group.start_soon(run, index)
    return results


def discovered(response: httpx.Response) -> list[str] | str:
    """The node ids a discover_tests call found, or what came instead."""
    if response.status_code != 200:
        return f"HTTP {response.status_code}: {response.text[:200]}"
    result = json_rpc(response)["result"]
    if result.get("isError"):
        return f"error: {result}"
    return [test["node_id"] for test in result["structuredContent"]["tests"]]


@contextmanager
def connections_held(port: int, count: int) -> Iterator[None]:
    """`count` connections that have sent half a request, as clients that keep connections do: the cap fills."""
    held = []
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            held.append(sock)
        yield
    finally:
        for sock in held:
            sock.close()


async def test_with_small_limits_a_flood_evicts_only_its_own_sessions(tmp_path: Path):
    """The rules of the test below, in seconds: 32 sessions, one client opens 200, another keeps its one.

    10 at a time: a client's opens in progress count towards its share (16), so that 50 at once
    would see some refused, rightly. Before the fix: the other client's session was evicted (404).
    """
    root = write_project(tmp_path / "proj", PROJECT)
    token = {"PYTEST_MCP_AUTH_TOKEN": TOKEN}
    with http_server(root, tmp_path, "--transport", "http", "--max-sessions", "32", env=token) as server:
        async with (
            client(server.url) as flooder,
            client(server.url, local_address="127.0.0.2") as other,
            anyio.create_task_group() as streams,
        ):
            with anyio.fail_after(300):  # a bound for a hang; seconds on an idle machine
                theirs = await other.open(streams)
                flood = await in_batches(200, lambda: flooder.open(streams), batch=10)
                ping = await other.ping(str(theirs))
                ids = iter([session_id for session_id in flood if session_id is not None])
                deletes = await in_batches(len(flood) - flood.count(None), lambda: flooder.delete(next(ids)))
            streams.cancel_scope.cancel()

    refused = [(r.status_code, r.headers.get("retry-after"), r.text[:200]) for r in flooder.refusals]
    assert refused == [], refused[:3]
    assert ping.status_code == 200, "the other client's session outlived the flood"
    assert Counter(response.status_code for response in deletes) == {404: 184, 200: 16}, "the share: 16 of 32"


@pytest.mark.slow  # about 20 s of CPU for the server and as much for the client: 1,000 sessions with their streams
async def test_a_flood_of_sessions_from_one_client_locks_nobody_out_and_closing_it_frees_every_slot(tmp_path: Path):
    """Before the fix: 482 of the 1,000 opens refused by the SDK's cap ("Too many open sessions"),
    the other client's session evicted by the flood; DELETEs at the connection cap answered 503."""
    root = write_project(tmp_path / "proj", PROJECT)
    with http_server(root, tmp_path, "--transport", "http", env={"PYTEST_MCP_AUTH_TOKEN": TOKEN}) as server:
        async with (
            client(server.url) as flooder,
            client(server.url, local_address="127.0.0.2") as other,
            anyio.create_task_group() as streams,
        ):
            with anyio.fail_after(600):  # a bound for a hang: 20 s of server CPU, and as much for the client
                flood = await in_batches(FLOOD // 2, lambda: flooder.open(streams))
                theirs = await other.open(streams)
                flood += await in_batches(FLOOD - FLOOD // 2, lambda: flooder.open(streams))
            with anyio.fail_after(30):
                answer = await other.call(str(theirs), "discover_tests", {})
                later = await other.open()
                second = await other.call(str(later), "discover_tests", {})

            # The flood closes while clients hold every connection the cap allows; each DELETE comes
            # on a connection of its own, as from SDK clients whose idle connections were closed.
            flooded = [session_id for session_id in flood if session_id is not None]
            ids = iter(flooded)
            async with client(server.url, keepalive=0) as closer:
                with connections_held(server.port, MAX_CONNECTIONS), anyio.fail_after(300):
                    deletes = await in_batches(len(flooded), lambda: closer.delete(next(ids)))
            after = await flooder.ping(flooded[-1])
            streams.cancel_scope.cancel()
        async with client(server.url) as newcomer:
            with anyio.fail_after(300):
                reopened = await in_batches(AFTER_THE_FLOOD, newcomer.open)

    refusals = Counter(f"{r.status_code} {r.text[:100]}" for r in flooder.refusals + newcomer.refusals)
    found = {
        "refused opens": refusals,
        "the other client's session, opened mid-flood, answers": discovered(answer),
        "a session the other client opens after the flood answers": discovered(second),
        # 404: sessions the flood's own opens evicted; 200: the share it still held.
        "DELETE statuses": Counter(response.status_code for response in deletes),
        "a deleted session": after.status_code,
        "opened after the flood": len(reopened) - reopened.count(None),
    }
    assert found == {
        "refused opens": Counter(),
        "the other client's session, opened mid-flood, answers": ["test_ok.py::test_ok"],
        "a session the other client opens after the flood answers": ["test_ok.py::test_ok"],
        "DELETE statuses": Counter({404: FLOOD - FLOOD_SHARE, 200: FLOOD_SHARE}),
        "a deleted session": 404,
        "opened after the flood": AFTER_THE_FLOOD,
    }
