"""Hostile test files against a real server: each attack succeeds without --sandbox and is blocked with it.

A test is code, so an agent that can write one has a shell with the server's rights (issue 37).
Each file below does one thing an attacker would, and passes when the attack works: read a key
planted in $HOME, write outside the root, reach a service on the host's loopback, read the
server's /proc, signal the server, read the server's settings from the environment. Served
without --sandbox they pass (today's rights); with it every one fails, and the answer says which
the sandbox blocked.
"""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.e2e_support import connect, http_server, structured, text_of, write_project

pytestmark = pytest.mark.anyio

KEY = f"-----BEGIN OPENSSH PRIVATE KEY----- {uuid.uuid4().hex}"
SETTING = "PYTEST_MCP_MAX_TIMEOUT"

HOSTILE = {
    "test_reads_home_ssh.py": """
        import os

        def test_reads_home_ssh():
            key = open(os.path.expanduser("~/.ssh/id_ed25519")).read()
            print("stolen:", key)
            assert key.startswith("-----BEGIN")
    """,
    "test_writes_outside_root.py": """
        def test_writes_outside_root():
            with open({outside!r}, "w") as planted:
                planted.write("pwned")
    """,
    "test_connects_to_host_loopback.py": """
        import socket

        def test_connects_to_host_loopback():
            with socket.create_connection(("127.0.0.1", {port}), timeout=5) as connection:
                connection.sendall(b"hello from a test")
    """,
    "test_reads_server_proc.py": """
        def test_reads_server_proc():
            with open("/proc/{server}/environ", "rb") as environ:
                assert b"{setting}=" in environ.read()
    """,
    "test_signals_server.py": """
        import os

        def test_signals_server():
            os.kill({server}, 0)  # signal 0: the permission check of any signal, and no harm done
    """,
    "test_reads_server_settings.py": """
        import os

        def test_reads_server_settings():
            settings = {{name: value for name, value in os.environ.items() if name.startswith("PYTEST_MCP_")}}
            print("read:", settings)
            assert settings
    """,
}
# The environment's filter by rule (PYTEST_MCP_*) is issue 36's; without the sandbox that one is not ours to pass.
ATTACKS_THAT_WORK_TODAY = [name for name in HOSTILE if name != "test_reads_server_settings.py"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def host_listener() -> Iterator[tuple[int, list[bytes]]]:
    """A service on the host's loopback (a database, a metadata endpoint): its port, and what reached it."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(2)
                received.append(connection.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], received
    finally:
        stop.set()
        thread.join(5)
        server.close()


@pytest.fixture
def outside() -> Iterator[Path]:
    """A path outside the project root and outside /tmp, where the server's user may write."""
    path = Path("/var/tmp") / f"pytest-mcp-hostile-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


def home_with_a_key(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(KEY)
    return home


async def run_hostile(tmp_path: Path, listener: tuple[int, list[bytes]], outside: Path, *flags: str) -> dict[str, Any]:
    root = tmp_path / "project"
    env = {"HOME": str(home_with_a_key(tmp_path)), SETTING: "60"}
    with http_server(write_project(root, {}), tmp_path, "--transport", "http", *flags, env=env) as server:
        values = {"outside": str(outside), "port": listener[0], "server": server.process.pid, "setting": SETTING}
        write_project(root, {name: text.format(**values) for name, text in HOSTILE.items()})
        async with connect(server, "legacy") as client:
            result = await client.call_tool("execute_tests", {"detail": "all"})
    answer = structured(result)
    answer["text"] = text_of(result)
    answer["outcomes"] = {test["node_id"].split("::")[0]: test["outcome"] for test in answer["tests"]}
    return answer


async def test_without_the_sandbox_a_test_file_has_the_servers_rights(
    tmp_path: Path, host_listener: tuple[int, list[bytes]], outside: Path
) -> None:
    answer = await run_hostile(tmp_path, host_listener, outside)

    assert {name: answer["outcomes"][name] for name in ATTACKS_THAT_WORK_TODAY} == dict.fromkeys(
        ATTACKS_THAT_WORK_TODAY, "passed"
    )
    assert outside.read_text() == "pwned"
    assert host_listener[1] == [b"hello from a test"]


async def test_under_the_sandbox_every_hostile_test_file_fails(
    tmp_path: Path, host_listener: tuple[int, list[bytes]], outside: Path
) -> None:
    answer = await run_hostile(tmp_path, host_listener, outside, "--sandbox")

    outcomes = {name: answer["outcomes"][name] for name in ATTACKS_THAT_WORK_TODAY}
    assert outcomes == dict.fromkeys(ATTACKS_THAT_WORK_TODAY, "failed"), answer["text"]
    assert KEY not in answer["text"]
    assert not outside.exists()
    assert host_listener[1] == []
    assert answer["command"][0] == "bwrap"
    blocked = {group["representative"]["node_id"].split("::")[0]: group.get("blocked") for group in answer["groups"]}
    port = host_listener[0]
    assert blocked["test_reads_home_ssh.py"].startswith("read ")
    assert "$HOME is empty" in blocked["test_reads_home_ssh.py"]
    assert blocked["test_writes_outside_root.py"] == f"write {outside}; only the project root and /tmp are writable"
    assert blocked["test_connects_to_host_loopback.py"] == f"connect 127.0.0.1:{port}; --sandbox-network allows it"
    assert f"blocked by the sandbox: connect 127.0.0.1:{port}; --sandbox-network allows it" in answer["text"]


async def test_under_the_sandbox_a_test_reads_no_server_setting_from_the_environment(
    tmp_path: Path, host_listener: tuple[int, list[bytes]], outside: Path
) -> None:
    """The server is started with a PYTEST_MCP_ setting in its environment; the test must see none.

    The filter of every PYTEST_MCP_* variable is issue 36's (another branch); the sandbox passes the
    environment it is given, so this passes once both are merged."""
    answer = await run_hostile(tmp_path, host_listener, outside, "--sandbox")

    assert answer["outcomes"]["test_reads_server_settings.py"] == "failed", answer["text"]
    assert SETTING not in answer["text"]


async def test_the_sandboxs_network_flag_opens_the_host_network_and_nothing_else(
    tmp_path: Path, host_listener: tuple[int, list[bytes]], outside: Path
) -> None:
    answer = await run_hostile(tmp_path, host_listener, outside, "--sandbox", "--sandbox-network")

    assert answer["outcomes"]["test_connects_to_host_loopback.py"] == "passed"
    assert host_listener[1] == [b"hello from a test"]
    others = {name: answer["outcomes"][name] for name in ATTACKS_THAT_WORK_TODAY if "loopback" not in name}
    assert others == dict.fromkeys(others, "failed")
    assert not outside.exists()
