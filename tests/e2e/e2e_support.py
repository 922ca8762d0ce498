"""Helpers for the end-to-end tests: the installed console script, tiny projects, live processes."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.answers import complete

MARKER_ENV = "E2E_PROCESS_MARKER"

# How long a process that should be killed may take to disappear.
GONE_WITHIN = 5.0
# How long a test in a target project may take to get going (interpreter start + collection).
STARTED_WITHIN = 15.0


def console_script() -> str:
    """The installed `pytest-mcp` entry point: next to this interpreter, else on PATH."""
    beside = Path(sys.executable).parent / "pytest-mcp"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("pytest-mcp")
    assert found, "the pytest-mcp console script is not installed next to this interpreter nor on PATH"
    return found


def clean_env(extra: Mapping[str, str] | None = None, *, plugins: bool = False) -> dict[str, str]:
    """os.environ (so PATH etc. survive) minus anything that would steer the inner pytest.

    Unless `plugins`, third-party plugin autoloading is off: pytest then starts in a fraction of
    the time, which keeps the suite fast. The server loads its own reporter with `-p` regardless.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_CURRENT_TEST") and not key.startswith("PYTEST_MCP_")
    }
    if not plugins:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if sys.prefix != sys.base_prefix:
        # As if this suite's virtualenv were activated: the server then detects this interpreter
        # ($VIRTUAL_ENV, ADR 0008) rather than whatever python3 with pytest is first on PATH.
        env["VIRTUAL_ENV"] = sys.prefix
    env.update(extra or {})
    return env


def write_project(root: Path, files: Mapping[str, str]) -> Path:
    """A tiny pytest project: a pytest.ini pins the rootdir, then the given files (dedented)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def new_marker() -> str:
    return f"e2emarker{uuid.uuid4().hex}"


SLEEPER_TEST = f"""
import os
import subprocess
import sys
import time


def test_sleeps():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", os.environ["{MARKER_ENV}"]])
    time.sleep(60)
"""


def sleeper_file(marker: str) -> str:
    """File name of the sleeping test; the marker in it puts the marker into pytest's own argv."""
    return f"test_sleep_{marker}.py"


def write_sleeper_project(root: Path, marker: str) -> Path:
    return write_project(
        root,
        {
            sleeper_file(marker): SLEEPER_TEST,
            "test_quick.py": "def test_quick():\n    assert True\n",
        },
    )


def processes_with(needle: str) -> dict[int, str]:
    """Live processes (not zombies) whose command line contains `needle`: pid -> command line."""
    found: dict[int, str] = {}
    wanted = needle.encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except OSError:
            continue
        if wanted in cmdline:  # a zombie's cmdline is empty, so it never matches
            found[int(entry.name)] = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
    return found


def pytest_and_grandchild(marker: str) -> tuple[list[int], list[int]]:
    """(pids of the pytest process running the sleeper, pids of the grandchild it spawned)."""
    procs = processes_with(marker)
    grandchildren = [pid for pid, cmd in procs.items() if "time.sleep(600)" in cmd]
    pytests = [pid for pid, cmd in procs.items() if "pytest" in cmd and pid not in grandchildren]
    return pytests, grandchildren


async def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting until {what}")
        await anyio.sleep(0.05)


async def wait_until_running(marker: str) -> None:
    """Block until both the sleeper's pytest process and its grandchild are alive."""

    def running() -> bool:
        pytests, grandchildren = pytest_and_grandchild(marker)
        return bool(pytests) and bool(grandchildren)

    await wait_until(running, STARTED_WITHIN, f"the sleeping test (marker {marker}) and its grandchild run")


async def assert_all_gone(marker: str, within: float = GONE_WITHIN) -> None:
    deadline = time.monotonic() + within
    while (left := processes_with(marker)) and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    assert not left, f"processes outlived the run by {within}s: {left}"


class RawStdio:
    """The console script on stdio, spoken to one JSON line at a time: what no client library lets a
    test do (signal it mid-call, close its stdin, read every byte it writes)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout

    def send(self, message: dict[str, Any]) -> None:
        self.stdin.write(json.dumps(message) + "\n")
        self.stdin.flush()

    def call(self, request_id: int, name: str, arguments: dict[str, Any]) -> None:
        """Send a tools/call, without waiting for its answer."""
        params = {"name": name, "arguments": arguments}
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})

    def response(self, request_id: int) -> dict[str, Any]:
        while True:
            line = self.stdout.readline()
            assert line, "the server closed stdout before answering"
            message = json.loads(line)
            if message.get("id") == request_id:
                return dict(message)

    def initialize(self) -> dict[str, Any]:
        client = {"name": "pytest-mcp-e2e", "version": "0"}
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        response = self.response(1)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response


@contextmanager
def raw_stdio_server(root: Path, stderr: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[RawStdio]:
    """The server on stdio for `root`, initialized, its stderr in `stderr`; killed on the way out if it still runs."""
    with stderr.open("w") as errlog:
        process = subprocess.Popen(
            [console_script(), "--root", str(root), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            text=True,
            env=clean_env() if env is None else env,
        )
        try:
            server = RawStdio(process)
            assert "result" in server.initialize()
            yield server
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


class Server:
    """How to start the installed server against one project, and where its stderr goes."""

    def __init__(self, root: Path, stderr_path: Path, args: list[str], env: dict[str, str]) -> None:
        self.root = root
        self.stderr_path = stderr_path
        self.args = args
        self.env = env

    @property
    def argv(self) -> list[str]:
        return [console_script(), "--root", str(self.root), *self.args]

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace") if self.stderr_path.exists() else ""

    @asynccontextmanager
    async def client(self, mode: str = "legacy") -> AsyncIterator[Client]:
        params = StdioServerParameters(command=self.argv[0], args=self.argv[1:], env=self.env)
        with self.stderr_path.open("a", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:  # type: ignore[arg-type]
                yield client


def start_server(
    root: Path,
    tmp_path: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    plugins: bool = False,
) -> Server:
    name = f"server-stderr-{uuid.uuid4().hex[:8]}.log"
    return Server(root, tmp_path / name, list(args), clean_env(env, plugins=plugins))


_SUMMARY_WORDS = {
    "failed": "failed",
    "passed": "passed",
    "skipped": "skipped",
    "deselected": "deselected",
    "xfailed": "xfailed",
    "xpassed": "xpassed",
    "warning": "warnings",
    "warnings": "warnings",
    "error": "errors",
    "errors": "errors",
}


def pytest_oracle(root: Path, *args: str, plugins: bool = False) -> tuple[str, dict[str, int]]:
    """Run `python -m pytest -q [args]` on `root` ourselves: its final line and the counts it states."""
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=root,
        env=clean_env(plugins=plugins),
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = [line for line in completed.stdout.splitlines() if line.strip()]
    assert lines, f"pytest printed nothing:\n{completed.stderr}"
    final = lines[-1].strip("= ")
    match = re.fullmatch(r"(?P<counts>.+) in [\d.]+s( \([^)]*\))?", final)
    assert match, f"cannot parse pytest's summary line {final!r}"
    counts: dict[str, int] = {}
    for part in match["counts"].split(", "):
        number, word = part.split(" ", 1)
        counts[_SUMMARY_WORDS[word]] = int(number)
    return match["counts"], counts


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, f"tool call failed: {result.content}"
    assert isinstance(result.structured_content, dict), "the result carries no structured content"
    return complete(result.structured_content)


def text_of(result: Any) -> str:
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    assert len(texts) == 1, f"expected exactly one text block, got {result.content}"
    return texts[0]


def free_port() -> int:
    """A loopback port nothing listens on now, for servers that are not ours (Redis, HAProxy) and a port
    that must stay closed: another process may take it before it is used. Our server takes `--port 0`."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def bound_port(process: subprocess.Popen[Any], port_file: Path, log: Path, within: float = 60) -> int:
    """The port a server started with `--port 0 --port-file PORT_FILE` listens on, once it does."""
    deadline = time.monotonic() + within
    while not port_file.exists():  # written whole (renamed into place) once uvicorn has bound the port
        assert process.poll() is None, f"the server exited before it listened:\n{log.read_text()}"
        assert time.monotonic() < deadline, f"the server did not listen within {within} s:\n{log.read_text()}"
        time.sleep(0.02)
    return int(port_file.read_text(encoding="ascii"))


class HttpServer:
    def __init__(self, process: subprocess.Popen[str], port: int, path: str, stderr: Path) -> None:
        self.process = process
        self.port = port
        self.path = path
        self.stderr = stderr

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    def request(self, method: str, path: str, headers: dict[str, str] | None = None, body: Any = None) -> Any:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        payload = json.dumps(body) if body is not None else None
        connection.request(method, path, body=payload, headers=headers or {})
        return connection.getresponse()


def _open_files_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    return apply


@contextmanager
def http_server(
    root: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None, open_files: int | None = None
) -> Iterator[HttpServer]:
    """The console script serving HTTP on a port the OS picks; `open_files` caps its descriptors (RLIMIT_NOFILE)."""
    name = f"http-server-{uuid.uuid4().hex[:8]}"
    stderr, port_file = tmp_path / f"{name}.log", tmp_path / f"{name}.port"
    given = args[args.index("--path") + 1] if "--path" in args else None
    path = given or ("/sse" if "sse" in args else "/mcp")  # the server's own defaults otherwise
    with stderr.open("w") as errlog:
        process = subprocess.Popen(
            [console_script(), "--root", str(root), "--port", "0", "--port-file", str(port_file), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errlog,
            text=True,
            env=clean_env(env),
            preexec_fn=_open_files_limit(open_files) if open_files else None,
        )
        try:
            server = HttpServer(process, bound_port(process, port_file, stderr), path, stderr)
            deadline = time.monotonic() + 20
            while True:
                assert process.poll() is None, f"the server exited early:\n{stderr.read_text()}"
                try:
                    if server.request("GET", "/healthz").status == 200:
                        break
                except OSError:
                    pass
                assert time.monotonic() < deadline, "the server did not come up"
                time.sleep(0.05)
            yield server
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


@asynccontextmanager
async def connect(
    server: HttpServer, mode: str, *, sse: bool = False, token: str | None = None
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if sse:
        transport: Any = sse_client(server.url, headers=headers)
    else:
        transport = streamable_http_client(server.url, http_client=create_mcp_http_client(headers=headers))
    async with Client(transport, mode=mode) as client:
        yield client
