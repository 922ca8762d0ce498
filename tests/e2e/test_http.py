"""The HTTP transports through the real console script on a free loopback port."""

from __future__ import annotations

import http.client
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from pytest_mcp import __version__
from tests.answers import TOOLS, call_error, signature_row
from tests.e2e.e2e_support import (
    MARKER_ENV,
    HttpServer,
    assert_all_gone,
    clean_env,
    connect,
    console_script,
    http_server,
    processes_with,
    pytest_oracle,
    sleeper_file,
    structured,
    wait_until_running,
    write_project,
    write_sleeper_project,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TOKEN = "e2e-token-1f3c9a-0123456789abcdef0123"
PROJECT = {
    "test_mixed.py": """
        import pytest

        def test_passes(): pass
        def test_fails(): assert 1 == 2
        @pytest.mark.skip(reason="later")
        def test_skipped(): pass
    """
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def _shared_http_server(
    base: Path, *args: str, transport: str = "http", env: dict[str, str] | None = None
) -> Iterator[HttpServer]:
    """A server for the module's tests that only need one so configured, not a fresh one; gone at the end.

    The per-test leftover check (conftest.py) looks for the test's own tmp_path, which this server's
    command line does not hold: the server is checked the same way once the module is done.
    """
    root = write_project(base / "proj", PROJECT)
    with http_server(root, base, "--transport", transport, *args, env=env) as server:
        yield server
    print(server.stderr.read_text(errors="replace"))
    assert not processes_with(str(root)), processes_with(str(root))


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """Streamable HTTP as configured by default."""
    yield from _shared_http_server(tmp_path_factory.mktemp("plain"))


@pytest.fixture(scope="module")
def plain_sse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """SSE as configured by default."""
    yield from _shared_http_server(tmp_path_factory.mktemp("plain-sse"), transport="sse")


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """Streamable HTTP with a token and one more allowed host."""
    base = tmp_path_factory.mktemp("guarded")
    yield from _shared_http_server(base, "--allowed-host", "tests.example", env={"PYTEST_MCP_AUTH_TOKEN": TOKEN})


@pytest.mark.parametrize(
    ("transport_args", "mode"),
    [
        (("--transport", "http"), "auto"),
        (("--transport", "http"), "legacy"),
        (("--transport", "http", "--stateless"), "auto"),
        (("--transport", "http", "--stateless"), "legacy"),
        (("--transport", "sse"), "legacy"),
    ],
    ids=["http-auto", "http-legacy", "stateless-auto", "stateless-legacy", "sse"],
)
async def test_results_over_http_are_exact(tmp_path: Path, transport_args: tuple[str, ...], mode: str) -> None:
    root = write_project(tmp_path / "proj", PROJECT)
    _, expected = pytest_oracle(root)

    with http_server(root, tmp_path, *transport_args) as server:
        async with connect(server, mode, sse="sse" in transport_args) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            run = structured(await client.call_tool("execute_tests", {}))
            discovered = structured(await client.call_tool("discover_tests", {}))
            invalid = await call_error(client, "execute_tests", {"extra_args": ["-x"]})

    assert tools == TOOLS
    assert {k: run["summary"][k] for k in expected} == expected
    assert [row[-1] for row in map(signature_row, run["groups"]) if row[1] == "failed"] == [
        ["test_mixed.py::test_fails"]
    ]
    assert discovered["total"] == 3
    assert invalid.code == -32602


async def test_a_token_is_required_when_configured(guarded: HttpServer) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    accept = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    missing = guarded.request("POST", "/mcp", accept, initialize)
    wrong = guarded.request("POST", "/mcp", {**accept, "Authorization": "Bearer nope"}, initialize)
    async with connect(guarded, "legacy", token=TOKEN) as client:
        run = structured(await client.call_tool("execute_tests", {"node_ids": ["test_mixed.py::test_passes"]}))

    for response in (missing, wrong):
        assert response.status == 401
        assert response.getheader("WWW-Authenticate", "").startswith('Bearer realm="pytest-mcp"')
    assert run["summary"]["passed"] == 1


@pytest.mark.parametrize(
    ("header", "value", "statuses"),
    [("Host", "evil.example:80", {421}), ("Origin", "http://evil.example", {403})],
    ids=["foreign-host", "foreign-origin"],
)
async def test_dns_rebinding_protection_refuses_foreign_hosts_and_origins(
    plain: HttpServer, header: str, value: str, statuses: set[int]
) -> None:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", header: value}
    response = plain.request("POST", "/mcp", headers, {"jsonrpc": "2.0", "id": 1, "method": "ping"})

    assert response.status in statuses


async def test_an_allowed_host_is_accepted(guarded: HttpServer) -> None:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Host": f"tests.example:{guarded.port}",
        "Authorization": f"Bearer {TOKEN}",  # the shared server also asks for its token
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    response = guarded.request("POST", "/mcp", headers, body)

    assert response.status == 200


@pytest.mark.parametrize("shared", ["plain", "plain_sse"], ids=["http", "sse"])
def test_with_port_zero_the_port_file_and_the_serving_line_give_the_port_it_listens_on(
    request: pytest.FixtureRequest, shared: str
) -> None:
    """http_server starts every server with `--port 0 --port-file`: the port it reads is where /healthz answers.

    Any server of each transport shows it, so the module's shared ones do.
    """
    server: HttpServer = request.getfixturevalue(shared)
    assert server.port != 0
    assert server.request("GET", "/healthz").status == 200
    assert f"url=http://127.0.0.1:{server.port}{server.path}" in server.stderr.read_text()


def test_binding_to_all_interfaces_without_a_token_is_refused(tmp_path: Path) -> None:
    completed = subprocess.run(
        [console_script(), "--root", str(tmp_path), "--transport", "http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=30,
    )

    assert completed.returncode == 2
    assert "refusing to serve on 0.0.0.0 without authentication" in completed.stderr
    assert "PYTEST_MCP_AUTH_TOKEN" in completed.stderr


@pytest.mark.parametrize("transport", ["http", "sse"])
@pytest.mark.parametrize("token", ["", "  ", "too-short"])
def test_an_empty_or_short_token_never_serves_unauthenticated(tmp_path: Path, transport: str, token: str) -> None:
    """`PYTEST_MCP_AUTH_TOKEN= pytest-mcp --transport http --host 0.0.0.0` used to serve with no auth at all."""
    completed = subprocess.run(
        [console_script(), "--root", str(tmp_path), "--transport", transport, "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        env=clean_env({"PYTEST_MCP_AUTH_TOKEN": token}),
        timeout=20,
    )

    assert completed.returncode == 2
    assert "auth_token: PYTEST_MCP_AUTH_TOKEN" in completed.stderr
    assert "the minimum is 32" in completed.stderr or "is set but empty" in completed.stderr


@pytest.mark.parametrize(
    ("args", "stream", "messages"),
    [((), "/sse", "/messages/"), (("--path", "/pytest/sse"), "/pytest/sse", "/pytest/sse/messages/")],
    ids=["default", "given-path"],
)
def test_sse_serves_where_clients_look_for_it(
    request: pytest.FixtureRequest, tmp_path: Path, args: tuple[str, ...], stream: str, messages: str
) -> None:
    """Every client configured for GET /sse got a 404: --transport sse served at /mcp.

    The default case asks the module's shared SSE server, started with no --path either.
    """
    if not args:
        status, first_event = _first_sse_event(request.getfixturevalue("plain_sse"), stream)
    else:
        root = write_project(tmp_path / "proj", PROJECT)
        with http_server(root, tmp_path, "--transport", "sse", *args) as server:
            status, first_event = _first_sse_event(server, stream)

    assert status == 200
    assert first_event.decode().startswith(f"event: endpoint\r\ndata: {messages}?session_id=")


def _first_sse_event(server: HttpServer, stream: str) -> tuple[int, bytes]:
    """GET `stream`: the status, and the bytes up to the endpoint event's session id."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request("GET", stream)
        response = connection.getresponse()
        first_event = b""
        while b"session_id=" not in first_event:
            chunk = response.read1(1000)
            assert chunk, f"the stream ended before the endpoint event: {first_event!r}"
            first_event += chunk
        return response.status, first_event
    finally:
        connection.close()


async def test_healthz_answers_without_auth_and_says_only_the_version(guarded: HttpServer) -> None:
    response = guarded.request("GET", "/healthz")
    body = json.loads(response.read())

    assert response.status == 200
    assert body == {"status": "ok", "version": __version__}


@pytest.mark.parametrize(
    ("mode", "stateless"),
    [("auto", False), ("legacy", False), ("auto", True), ("legacy", True)],
    ids=["stateful-auto", "stateful-legacy", "stateless-auto", "stateless-legacy"],
)
async def test_cancelling_a_call_over_http_stops_its_processes(
    tmp_path: Path, marker: str, mode: str, stateless: bool
) -> None:
    # Over stateless HTTP the legacy client (like every TypeScript SDK) cancels by POSTing
    # notifications/cancelled on its own and leaves the call's request open.
    root = write_sleeper_project(tmp_path / "proj", marker)
    flags = ("--transport", "http", "--stateless") if stateless else ("--transport", "http")
    with http_server(root, tmp_path, *flags, env={MARKER_ENV: marker}) as server:
        async with connect(server, mode) as client:
            async with anyio.create_task_group() as group:
                scope = anyio.CancelScope()

                async def call() -> None:
                    with scope:
                        await client.call_tool("execute_tests", {"node_ids": [sleeper_file(marker)]})

                group.start_soon(call)
                await wait_until_running(marker)
                scope.cancel()
            await assert_all_gone(marker, within=2.0)
            after = structured(await client.call_tool("execute_tests", {"node_ids": ["test_quick.py"]}))
    assert after["summary"]["passed"] == 1
