"""Hostile HTTP requests: each gets the status it deserves, starts nothing, and the server keeps serving.

One server with a bearer token serves the trapped project (see trapped_project.py); its `--python`
wrapper records every process the server starts, so "nothing ran" is read, not assumed.
"""

from __future__ import annotations

import base64
import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.e2e_support import HttpServer, http_server
from tests.security.trapped_project import TrappedProject, build_trapped_project

TOKEN = "http-hostile-token-0123456789abcdef0123456789"
JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
AUTH = {"Authorization": f"Bearer {TOKEN}"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "execute_tests", "arguments": {"node_ids": ["test_ok.py"]}},
}

# (case, method, path, headers, body, statuses it may get)
HOSTILE: list[tuple[str, str, str, dict[str, str], Any, set[int]]] = [
    ("no-token", "POST", "/mcp", JSON, INITIALIZE, {401}),
    ("empty-bearer", "POST", "/mcp", {**JSON, "Authorization": "Bearer "}, INITIALIZE, {401}),
    ("bearer-without-space", "POST", "/mcp", {**JSON, "Authorization": f"Bearer{TOKEN}"}, INITIALIZE, {401}),
    ("wrong-token-same-length", "POST", "/mcp", {**JSON, "Authorization": "Bearer " + "x" * len(TOKEN)}, CALL, {401}),
    ("token-prefix", "POST", "/mcp", {**JSON, "Authorization": f"Bearer {TOKEN[:-1]}"}, CALL, {401}),
    (
        "basic-auth",
        "POST",
        "/mcp",
        {**JSON, "Authorization": "Basic " + base64.b64encode(f"u:{TOKEN}".encode()).decode()},
        INITIALIZE,
        {401},
    ),
    ("token-in-query", "POST", f"/mcp?access_token={TOKEN}", JSON, INITIALIZE, {401}),
    ("token-in-cookie", "POST", "/mcp", {**JSON, "Cookie": f"token={TOKEN}"}, INITIALIZE, {401}),
    ("no-token-call", "POST", "/mcp", JSON, CALL, {401}),
    ("foreign-host", "POST", "/mcp", {**JSON, **AUTH, "Host": "evil.example"}, INITIALIZE, {421}),
    ("foreign-origin", "POST", "/mcp", {**JSON, **AUTH, "Origin": "http://evil.example"}, INITIALIZE, {403}),
    ("oversized-body", "POST", "/mcp", {**JSON, **AUTH}, {"x": "y" * (5 << 20)}, {413}),
    ("not-json", "POST", "/mcp", {**JSON, **AUTH}, "this is not json", {400}),
    (
        "wrong-content-type",
        "POST",
        "/mcp",
        {**AUTH, "Content-Type": "text/plain", "Accept": JSON["Accept"]},
        CALL,
        {400, 415},
    ),
    ("unknown-session", "POST", "/mcp", {**JSON, **AUTH, "mcp-session-id": "0" * 32}, CALL, {404}),
    ("call-without-session", "POST", "/mcp", {**JSON, **AUTH}, CALL, {400}),
    ("put", "PUT", "/mcp", {**JSON, **AUTH}, CALL, {405}),
    ("traversal-path", "GET", "/mcp/../../etc/passwd", AUTH, None, {404}),
    ("unknown-path", "POST", "/admin", {**JSON, **AUTH}, CALL, {404}),
    # h11 refuses a header block it has to wait for past 16 KiB; one that arrives in a single read is
    # bounded by that read (256 KiB), so a megabyte never fits.
    ("huge-header", "POST", "/mcp", {**JSON, **AUTH, "X-Filler": "f" * 1_000_000}, INITIALIZE, {400, 431, 0}),
]


def ask(server: HttpServer, method: str, path: str, headers: dict[str, str], body: Any) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
    payload = body if isinstance(body, str) or body is None else json.dumps(body)
    try:
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    except (ConnectionResetError, BrokenPipeError):
        return 0  # closed before answering: only acceptable where 0 is listed
    finally:
        connection.close()


@pytest.fixture(scope="module")
def trapped(tmp_path_factory: pytest.TempPathFactory) -> TrappedProject:
    return build_trapped_project(tmp_path_factory.mktemp("http-hostile"))


@pytest.fixture(scope="module")
def server(trapped: TrappedProject, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    logs = tmp_path_factory.mktemp("http-hostile-logs")
    args = ("--transport", "http", "--python", str(trapped.wrapper), "--max-timeout", "60")
    with http_server(trapped.root, logs, *args, env={"PYTEST_MCP_AUTH_TOKEN": TOKEN}) as running:
        yield running


def test_the_table_has_unique_cases() -> None:
    names = [case[0] for case in HOSTILE]
    assert len(set(names)) == len(names) >= 20


@pytest.mark.parametrize(
    ("method", "path", "headers", "body", "statuses"), [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE]
)
def test_a_hostile_request_is_refused_and_starts_nothing(
    server: HttpServer,
    trapped: TrappedProject,
    method: str,
    path: str,
    headers: dict[str, str],
    body: Any,
    statuses: set[int],
) -> None:
    trapped.reset()

    status = ask(server, method, path, headers, body)

    assert status in statuses
    assert trapped.tripped() == [], "a canary fired or a process was started"
    assert ask(server, "GET", "/healthz", {}, None) == 200


def test_the_same_call_with_the_token_does_run(server: HttpServer, trapped: TrappedProject) -> None:
    """Guards the table: with the token and a session, the call reaches pytest and the traps fire."""
    trapped.reset()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    connection.request("POST", "/mcp", json.dumps(INITIALIZE), {**JSON, **AUTH})
    opened = connection.getresponse()
    opened.read()
    session = {"mcp-session-id": opened.getheader("mcp-session-id") or "", "mcp-protocol-version": "2025-11-25"}
    connection.request("POST", "/mcp", json.dumps(CALL), {**JSON, **AUTH, **session})
    answer = connection.getresponse().read().decode()
    connection.close()

    assert '\\"passed\\":1' in answer or '"passed":1' in answer
    assert trapped.tripped() == ["STARTED", "SPAWNED"]
    trapped.reset()
