"""Redis and HAProxy for the multi-instance tests: Debian's binaries (scripts/setup-services), started
and stopped here on loopback ports, with the deployment files of examples/multi_instance/ as written."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.e2e.e2e_support import free_port

DEPLOYMENT = Path(__file__).resolve().parents[2] / "examples" / "multi_instance"
COMPOSE = DEPLOYMENT / "compose.yaml"
HAPROXY_CFG = DEPLOYMENT / "haproxy.cfg"
_SBIN = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])


def binary(name: str) -> str:
    """A Debian binary the tests need; missing, a failure when CI requires it, else a skip."""
    found = shutil.which(name, path=_SBIN)
    if found is None:
        message = f"{name} is not installed: run scripts/setup-services"
        if os.environ.get("PYTEST_MCP_THIRD_PARTY") == "required":
            pytest.fail(message)
        pytest.skip(message)
    return found


def compose_instance_flags() -> list[str]:
    """The instances' command in compose.yaml (a JSON-style list), less what differs on loopback:
    the root, host and port, which the tests give."""
    text = COMPOSE.read_text(encoding="utf-8")
    command = json.loads(re.search(r"^  command: (\[.*\])$", text, flags=re.M).group(1))  # type: ignore[union-attr]
    flags, skip = [], False
    for argument in command:
        if skip:
            skip = False
        elif argument in ("--root", "--host", "--port"):
            skip = True
        else:
            flags.append(argument)
    return flags


def compose_haproxy_environment() -> dict[str, str]:
    """The names compose.yaml gives HAProxy's addresses; the tests give them loopback values."""
    text = COMPOSE.read_text(encoding="utf-8").split("  haproxy:", 1)[1]
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in text, "compose no longer mounts haproxy.cfg"
    return dict(re.findall(r"^      (\w+): \"(.*)\"$", text, flags=re.M))


class RedisServer:
    """A redis-server of our own on a loopback port, with a password, no persistence; stoppable and restartable."""

    def __init__(self, workdir: Path, password: str, *, tls: bool = False) -> None:
        self.port = free_port()
        self.password = password
        self.workdir = workdir
        self.tls = tls
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        if self.tls:
            ca = self.workdir / "cert.pem"
            return f"rediss://:{self.password}@127.0.0.1:{self.port}/0?ssl_ca_certs={ca}"
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    @property
    def masked_url(self) -> str:
        return f"redis://:****@127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        argv = [binary("redis-server"), "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        argv += ["--appendonly", "no", "--requirepass", self.password, "--dir", str(self.workdir)]
        argv += ["--logfile", str(self.workdir / "redis.log")]
        if self.tls:  # a self-signed certificate for 127.0.0.1, which the client is given as its CA
            cert, key = self.workdir / "cert.pem", self.workdir / "key.pem"
            if not cert.exists():
                subprocess.run(
                    [
                        *(binary("openssl"), "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
                        *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
                        *("-addext", "subjectAltName=IP:127.0.0.1"),
                    ],
                    check=True,
                    capture_output=True,
                )
            argv[argv.index("--port") + 1] = "0"
            argv += ["--tls-port", str(self.port), "--tls-cert-file", str(cert), "--tls-key-file", str(key)]
            argv += ["--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no"]
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not self.ping():
            assert self.process.poll() is None, (self.workdir / "redis.log").read_text()
            assert time.monotonic() < deadline, "redis-server did not come up"
            time.sleep(0.05)

    def ping(self) -> bool:
        import redis

        try:
            return bool(redis.Redis.from_url(self.url, socket_timeout=1).ping())
        except redis.RedisError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=10)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


class LoadBalancer:
    """HAProxy with examples/multi_instance/haproxy.cfg as written, its addresses on loopback."""

    def __init__(self, workdir: Path, backends: list[int]) -> None:
        self.port = free_port()
        names = compose_haproxy_environment()
        assert set(names) == {"LB_BIND", "INSTANCE_A", "INSTANCE_B"}, names
        env = {**os.environ, "LB_BIND": f"127.0.0.1:{self.port}"}
        env.update({"INSTANCE_A": f"127.0.0.1:{backends[0]}", "INSTANCE_B": f"127.0.0.1:{backends[1]}"})
        self.log = workdir / "haproxy.log"
        with self.log.open("w") as errlog:
            self.process = subprocess.Popen(
                [binary("haproxy"), "-db", "-f", str(HAPROXY_CFG)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=errlog,
                stderr=errlog,
            )
        deadline = time.monotonic() + 15
        while not self.healthy():
            assert self.process.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, f"HAProxy did not come up:\n{self.log.read_text()}"
            time.sleep(0.05)

    def healthy(self) -> bool:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            connection.request("GET", "/healthz")
            return connection.getresponse().status == 200
        except OSError:
            return False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@asynccontextmanager
async def client(url: str, owner: str = "alice", *, session_id: str | None = None) -> AsyncIterator[Client]:
    """A streamable HTTP client; without a token on the server, its Authorization header tells owners apart.

    `session_id`: an `Mcp-Session-Id` header the client sends of its own accord (a stateless server gives none)."""
    headers = {"Authorization": f"Bearer {owner}"}
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    async with Client(transport, mode="legacy") as connected:
        yield connected


def gated_test(marker: str, *, canary: bool = False) -> str:
    """A test file that fails once, then waits for `<marker>.gate` (optionally leaving a grandchild canary)."""
    spawn = (
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{marker}'])" if canary else "pass"
    )
    return f"""
import os
import subprocess
import sys
import time


def test_fails_first():
    assert 6 * 7 == 41


def test_waits_for_the_gate():
    {spawn}
    gate = os.path.join(os.path.dirname(__file__), "{marker}.gate")
    deadline = time.monotonic() + 120
    while not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert os.path.exists(gate)
"""
