"""The third-party client matrix: each client, over each transport it has, against the real server.

Issue 17 §5: every client lists the tools, runs a passing and a failing call, gets an invalid-argument
error and an execution error whose message is in the string the framework hands to the model,
receives progress, and cancels a run whose pytest process and grandchild are then gone within 2 s.

`scripts/setup-clients` installs the clients, pinned, under `.clients/`; a driver per client family
(`drivers/`) runs under that client's own interpreter or Node and prints what the client saw as JSON,
and the tests here assert on it. A family's test module subclasses `ClientMatrix` and lists its
`COMBOS`; each combination runs the driver twice: once for all the calls, once for the cancellation.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from tests.answers import TOOLS
from tests.e2e.e2e_support import (
    HttpServer,
    clean_env,
    console_script,
    http_server,
    processes_with,
    wait_until_running,
)
from tests.plugins import support as plugins_support

REPO = Path(__file__).resolve().parents[2]
CLIENTS = REPO / ".clients"
DRIVERS = Path(__file__).resolve().parent / "drivers"
INSTALL_HINT = "bash scripts/setup-clients (run by scripts/test)"

PROJECT = {
    "test_mixed.py": """
        def test_passes():
            pass

        def test_fails():
            assert 1 == 2, "the answer is wrong"
    """,
    # Long enough that progress arrives while the call is in flight, not only beside its answer.
    "test_slowish.py": """
        import time
        import pytest

        @pytest.mark.parametrize("n", range(3))
        def test_takes_a_while(n):
            time.sleep(0.3)
    """,
    "test_quick.py": """
        def test_quick():
            pass
    """,
}
CALLS = {
    "pass": {"node_ids": ["test_mixed.py::test_passes"]},
    "fail": {"node_ids": ["test_mixed.py"]},
    "invalid": {"maxfail": 0},
    "error": {"node_ids": ["test_missing.py"]},
    "progress": {"node_ids": ["test_slowish.py"]},
    "affected": {"node_ids": ["test_quick.py"], "affected": True},
}
INVALID_MESSAGE = "invalid arguments for execute_tests: maxfail: input should be greater than or equal to 1"
EXECUTION_MESSAGE = "pytest reported a usage error: ERROR: file or directory not found: test_missing.py"
# The sleeping test starts a grandchild carrying the marker in its argv, as tests/e2e's sleeper does;
# the marker is written into the file here, so one server can serve every cancellation of a module.
SLEEPER = """
    import subprocess
    import sys
    import time

    def test_sleeps():
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{marker}"])
        time.sleep(60)
"""
CANCELLED_WITHIN = 2.0
# How python-sdk#1960 reaches a cancelled call: our "0 of 1" progress notification, sent after the
# test started (the report is polled every 0.1 s), is still in the pipe when the cancelled call's
# session closes. It is the client failing as it leaves; the run is stopped all the same.
STDIO_TEARDOWN_RACE = "ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception) [BrokenResourceError: ]"

SERVER_ARGS = {
    "http": ("--transport", "http"),
    "stateless": ("--transport", "http", "--stateless"),
    "sse": ("--transport", "sse"),
}


@dataclass(frozen=True)
class Client:
    """One pinned client: its environment under .clients/ and its driver."""

    name: str  # the environment's directory under .clients/
    driver: str  # a file in drivers/
    # Cancelled, it leaves the call's stdio session with the Python SDK 1.x's stdio_client, which
    # raises when a message is still unread as it closes (python-sdk#1960; 2.x catches it).
    stdio_teardown_race: bool = False

    @property
    def home(self) -> Path:
        return CLIENTS / self.name

    def argv(self) -> list[str]:
        """The driver's command line; skips (or fails, when required) if the client is not installed."""
        if not (self.home / ".pinned").is_file():
            missing(f"{self.home} is not installed")
        if self.driver.endswith(".cjs"):
            node = shutil.which("node") or str(REPO / ".node" / "node_modules" / ".bin" / "node")
            if not Path(node).exists():
                missing("node is not on PATH")
            return [node, str(DRIVERS / self.driver), str(self.home)]
        return [str(self.home / "bin" / "python"), str(DRIVERS / self.driver)]


def missing(what: str) -> None:
    if os.environ.get("PYTEST_MCP_THIRD_PARTY") == "required":
        pytest.fail(f"{what} but third-party client tests are required")
    pytest.skip(f"{what}; {INSTALL_HINT}")


@dataclass(frozen=True)
class Combo:
    client: Client
    transport: str  # stdio | http (stateful streamable HTTP) | stateless | sse

    @property
    def id(self) -> str:
        return f"{self.client.name}-{self.transport}"


def combos(clients: list[Client], transports: list[str], *, fast: tuple[str, str] | None = None) -> list[Any]:
    """Every (client, transport), marked slow but for `fast`, the one the not-slow suite runs."""
    return [
        pytest.param(
            Combo(client, transport),
            id=f"{client.name}-{transport}",
            marks=[] if (client.name, transport) == fast else [pytest.mark.slow],
        )
        for client in clients
        for transport in transports
    ]


def serving(root: Path) -> tuple[list[str], dict[str, str]]:
    """What every server of the matrix is started with: the target interpreter (a venv with pytest-testmon,
    for the affected call) and an environment whose cache directory, where testmon's data goes, is the test's."""
    python = plugins_support.target("testmon").python
    return ["--python", str(python)], {"XDG_CACHE_HOME": str(root.parent / "cache")}


class Servers:
    """The HTTP servers of one test module, one per transport, started when first asked for."""

    def __init__(self, root: Path, logs: Path, stack: contextlib.ExitStack) -> None:
        self.root, self.logs, self.stack = root, logs, stack
        self.started: dict[str, HttpServer] = {}

    def get(self, transport: str) -> HttpServer:
        if transport not in self.started:
            args, env = serving(self.root)
            self.started[transport] = self.stack.enter_context(
                http_server(self.root, self.logs, *SERVER_ARGS[transport], *args, env=env)
            )
        return self.started[transport]


def target(combo: Combo, root: Path, servers: Servers) -> dict[str, Any]:
    if combo.transport == "stdio":
        args, env = serving(root)
        return {"transport": "stdio", "command": [console_script(), "--root", str(root), *args], "env": clean_env(env)}
    server = servers.get(combo.transport)
    return {"transport": "sse" if combo.transport == "sse" else "http", "url": server.url}


def run_calls(combo: Combo, where: dict[str, Any], log: Path) -> dict[str, Any]:
    """Run the driver's `calls` scenario; its JSON."""
    plan = log.with_suffix(".json")
    plan.write_text(json.dumps(CALLS), encoding="utf-8")
    argv = [*combo.client.argv(), json.dumps(where), "calls", str(plan)]
    with log.open("w") as errors, driver_process(argv, errors) as driver:
        out, _ = driver.communicate(timeout=180)
    assert driver.returncode == 0, f"the driver failed ({driver.returncode}):\n{log.read_text()[-4000:]}"
    answer: dict[str, Any] = json.loads(out)
    return answer


@contextlib.contextmanager
def driver_process(argv: list[str], errors: Any) -> Iterator[subprocess.Popen[str]]:
    """The driver in a session of its own, so that it and every process it starts can be stopped."""
    driver = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors, text=True, env=clean_env(),
        start_new_session=True,
    )  # fmt: skip
    try:
        yield driver
    finally:
        kill_group(driver.pid)
        driver.wait()


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


async def read_event(lines: BufferedByteReceiveStream, within: float = 60) -> dict[str, Any]:
    with anyio.fail_after(within):
        event: dict[str, Any] = json.loads(await lines.receive_until(b"\n", 1 << 20))
    return event


async def assert_stopped(marker: str) -> None:
    """As e2e_support.assert_all_gone(marker, CANCELLED_WITHIN), but naming what is left in a few words."""
    deadline = time.monotonic() + CANCELLED_WITHIN
    while (left := processes_with(marker)) and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    pids = ", ".join(f"{pid} ({'grandchild' if 'time.sleep(600)' in cmd else 'pytest'})" for pid, cmd in left.items())
    assert not left, f"{CANCELLED_WITHIN} s after the cancellation these still run: {pids}"


class ClientMatrix:
    """The checks every client must pass; a family's module subclasses it and sets COMBOS."""

    COMBOS: list[Any]
    # fastmcp's call_tool raises ToolError on an isError result (its message is the text block).
    RAISES_ON_TOOL_ERROR = False

    def test_lists_the_tools(self, answers: dict[str, Any]) -> None:
        assert set(answers["tools"]) == TOOLS

    def test_a_passing_call(self, answers: dict[str, Any]) -> None:
        seen = answers["calls"]["pass"]
        assert (seen["raised"], seen["is_error"]) == (None, False), seen
        assert seen["text"].startswith("1 passed in "), seen["text"]
        assert {k: seen["summary"][k] for k in ("total", "passed", "failed")} == {"total": 1, "passed": 1, "failed": 0}

    def test_a_failing_call_puts_the_failure_before_the_model(self, answers: dict[str, Any]) -> None:
        seen = answers["calls"]["fail"]
        assert (seen["raised"], seen["is_error"]) == (None, False), seen
        assert seen["text"].startswith("1 failed, 1 passed in "), seen["text"]
        assert "FAILED test_mixed.py::test_fails (test_mixed.py:4)" in seen["text"]
        assert "AssertionError: the answer is wrong" in seen["text"]
        assert {k: seen["summary"][k] for k in ("total", "passed", "failed")} == {"total": 2, "passed": 1, "failed": 1}

    def test_an_invalid_argument_reaches_the_model(self, answers: dict[str, Any]) -> None:
        self.check_tool_error(answers["calls"]["invalid"], INVALID_MESSAGE)

    def test_an_execution_error_reaches_the_model(self, answers: dict[str, Any]) -> None:
        self.check_tool_error(answers["calls"]["error"], EXECUTION_MESSAGE)

    def check_tool_error(self, seen: dict[str, Any], message: str) -> None:
        assert seen["is_error"] is True, seen
        assert seen["raised"] == (f"ToolError: {message}" if self.RAISES_ON_TOOL_ERROR else None), seen
        assert message in seen["text"], seen["text"]

    def test_progress_arrives_during_a_run(self, answers: dict[str, Any]) -> None:
        seen = answers["calls"]["progress"]
        assert seen["text"].startswith("3 passed in "), seen
        assert seen["progress"], "no progress notification reached the client"
        # The TypeScript SDK can drop the last notification when it is read with the response (its
        # driver keeps those apart, as `late_progress`): the client received it, after the call ended.
        done = [p for p, _ in [*seen["progress"], *seen.get("late_progress", [])]]
        assert done == sorted(done), seen["progress"]
        # 0 of 3 once pytest has collected, before a test is done (issue 36); then the tests as they end.
        assert set(done) <= {0, 1, 2, 3}, seen["progress"]
        assert done[-1] == 3, seen["progress"]
        assert {total for _, total in [*seen["progress"], *seen.get("late_progress", [])]} == {3}, seen["progress"]

    def test_an_affected_call_says_what_ran_and_what_did_not(self, answers: dict[str, Any]) -> None:
        seen = answers["calls"]["affected"]
        assert (seen["raised"], seen["is_error"]) == (None, False), seen
        # One server may serve several combinations: the first affected run records, later ones select.
        line = seen["text"].splitlines()[1]
        assert line in (
            "first affected run, no data yet: ran everything (1 test) and recorded what each test uses",
            "0 affected tests run; 1 unaffected not run (they passed when they last ran; affected=false runs "
            "everything)",
        ), seen["text"]

    @pytest.mark.anyio
    async def test_cancelling_a_run_stops_pytest_and_its_grandchild(
        self, combo: Combo, where: dict[str, Any], root: Path, servers: Servers, marker: str, tmp_path: Path
    ) -> None:
        sleeper = f"test_sleep_{marker}.py"
        (root / sleeper).write_text(textwrap.dedent(SLEEPER).format(marker=marker), encoding="utf-8")
        # In a file: the driver's argv must not carry the marker, or it would count as a leftover.
        plan = tmp_path / "plan.json"
        plan.write_text(json.dumps({"run": {"node_ids": [sleeper]}, "after": {"node_ids": ["test_quick.py"]}}))
        argv = [*combo.client.argv(), json.dumps(where), "cancel", str(plan)]
        log = tmp_path / "driver.log"
        with log.open("w") as errors:
            driver: Process = await anyio.open_process(argv, stderr=errors, env=clean_env(), start_new_session=True)
            try:
                assert driver.stdin
                assert driver.stdout
                lines = BufferedByteReceiveStream(driver.stdout)
                assert (await read_event(lines))["event"] == "calling"
                await wait_until_running(marker)

                await driver.stdin.send(b"cancel\n")
                cancelled = await read_event(lines, within=10)
                assert cancelled["event"] == "cancelled"
                finished = cancelled["finished"]
                if finished is not None and combo.transport == "stdio" and combo.client.stdio_teardown_race:
                    assert finished["raised"] == STDIO_TEARDOWN_RACE, cancelled
                    assert finished["text"] is None, cancelled
                else:
                    assert finished is None, f"the call completed although it was cancelled: {cancelled}"
                await assert_stopped(marker)

                await driver.stdin.send(b"after\n")
                after = await read_event(lines)
                assert after["text"].startswith("1 passed in "), after
                await driver.stdin.aclose()
                with anyio.fail_after(30):
                    assert await driver.wait() == 0, log.read_text()[-4000:]
            except BaseException:
                print(f"--- driver stderr ---\n{log.read_text(errors='replace')[-6000:]}")
                if combo.transport in servers.started:
                    server_log = servers.started[combo.transport].stderr.read_text(errors="replace")
                    print(f"--- server stderr ---\n{server_log[-6000:]}")
                raise
            finally:
                kill_group(driver.pid)
                await driver.aclose()
