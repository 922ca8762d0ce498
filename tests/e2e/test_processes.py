"""No process outlives a call: timeout, cancellation, client disconnect and SIGTERM all clean up.

The sleeping test spawns a grandchild that would sleep for ten minutes; both it and the pytest
process carry a unique marker in their command line, so /proc tells whether anything survived.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.answers import TOOLS, call_error
from tests.e2e.e2e_support import (
    MARKER_ENV,
    STARTED_WITHIN,
    assert_all_gone,
    clean_env,
    processes_with,
    pytest_and_grandchild,
    raw_stdio_server,
    sleeper_file,
    start_server,
    structured,
    wait_until_running,
    write_project,
    write_sleeper_project,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


async def test_a_timeout_leaves_no_process_behind(tmp_path: Path, marker: str) -> None:
    root = write_sleeper_project(tmp_path / "proj", marker)
    server = start_server(root, tmp_path, env={MARKER_ENV: marker})
    seen_running = False
    async with server.client() as client:

        async def watch() -> None:
            nonlocal seen_running
            await wait_until_running(marker)
            seen_running = True

        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            timed_out = await call_error(client, "execute_tests", {"node_ids": [sleeper_file(marker)], "timeout": 3})
        assert timed_out.reason == "timeout"
        assert seen_running, "the sleeping test never started, so the timeout proves nothing"
        await assert_all_gone(marker)


async def test_a_client_cancellation_leaves_no_process_behind_and_the_session_keeps_serving(
    tmp_path: Path, marker: str
) -> None:
    root = write_sleeper_project(tmp_path / "proj", marker)
    server = start_server(root, tmp_path, env={MARKER_ENV: marker})
    async with server.client() as client:
        finished: list[Any] = []
        async with anyio.create_task_group() as group:
            scope = anyio.CancelScope()

            async def call() -> None:
                with scope:
                    finished.append(await client.call_tool("execute_tests", {"node_ids": [sleeper_file(marker)]}))

            group.start_soon(call)
            await wait_until_running(marker)
            scope.cancel()
        assert not finished, "the call completed although it was cancelled"
        await assert_all_gone(marker)

        with anyio.fail_after(30):
            result = await client.call_tool("execute_tests", {"node_ids": ["test_quick.py"]})
        assert structured(result)["summary"]["passed"] == 1


async def test_a_client_disconnect_mid_call_leaves_no_process_behind(tmp_path: Path, marker: str) -> None:
    root = write_sleeper_project(tmp_path / "proj", marker)
    server = start_server(root, tmp_path, env={MARKER_ENV: marker})
    with anyio.fail_after(30):
        async with anyio.create_task_group() as outer:

            async def session() -> None:
                async with server.client() as client, anyio.create_task_group() as inner:
                    inner.start_soon(client.call_tool, "execute_tests", {"node_ids": [sleeper_file(marker)]})
                    await anyio.sleep_forever()

            outer.start_soon(session)
            await wait_until_running(marker)
            assert processes_with(str(root)), "cannot see the server process"
            # Leaving the client while the call is in flight closes the server's stdin.
            outer.cancel_scope.cancel()
    await assert_all_gone(marker)
    await assert_all_gone(str(root))  # the server itself exited too


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_signal_mid_run_stops_the_server_and_every_process_it_started(
    tmp_path: Path, marker: str, signum: signal.Signals
) -> None:
    root = write_sleeper_project(tmp_path / "proj", marker)
    with raw_stdio_server(root, tmp_path / "server-stderr-raw.log", env=clean_env({MARKER_ENV: marker})) as server:
        process = server.process
        server.call(2, "execute_tests", {"node_ids": [sleeper_file(marker)]})
        with anyio.fail_after(STARTED_WITHIN + 1):
            await wait_until_running(marker)
        pytests, grandchildren = pytest_and_grandchild(marker)
        assert pytests
        assert grandchildren

        # stdin stays open, as it does when a client signals the server instead of hanging up.
        process.send_signal(signum)
        deadline = time.monotonic() + 5
        while process.poll() is None and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        await assert_all_gone(marker, within=max(deadline - time.monotonic(), 0.5))
        assert process.returncode is not None, f"the server was still running 5s after {signum.name}"
        assert process.returncode == 128 + signum, f"the server exited {process.returncode} after {signum.name}"


async def test_after_the_client_closes_stdin_nothing_more_is_written_and_the_run_is_stopped(
    tmp_path: Path, marker: str
) -> None:
    """The Python SDK 1.x raised BrokenResourceError when the server answered after stdin closed."""
    root = write_sleeper_project(tmp_path / "proj", marker)
    with raw_stdio_server(root, tmp_path / "server-stderr-raw.log", env=clean_env({MARKER_ENV: marker})) as server:
        process = server.process
        server.call(2, "execute_tests", {"node_ids": [sleeper_file(marker)]})
        with anyio.fail_after(STARTED_WITHIN + 1):
            await wait_until_running(marker)

        server.stdin.close()
        rest = server.stdout.read()  # until the server closes stdout, which it does on exit

        assert rest == "", f"the server wrote after stdin closed: {rest!r}"
        assert process.wait(timeout=10) == 0
        await assert_all_gone(marker)


async def test_stdout_carries_only_protocol_and_logs_go_to_stderr(tmp_path: Path, marker: str) -> None:
    root = write_sleeper_project(tmp_path / "proj", marker)
    stderr_path = tmp_path / "server-stderr-raw.log"
    with raw_stdio_server(root, stderr_path, "--log-level", "debug") as server:
        process = server.process
        requests = [
            ("tools/list", {}),
            ("tools/call", {"name": "execute_tests", "arguments": {"node_ids": ["test_quick.py"]}}),
            ("tools/call", {"name": "discover_tests", "arguments": {}}),
            ("tools/call", {"name": "execute_tests", "arguments": {"bogus": 1}}),
        ]
        for request_id, (method, params) in enumerate(requests, start=2):
            server.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        lines: list[str] = []
        stdout = server.stdout

        def read_answers() -> None:
            answered: set[int] = set()
            while answered != {2, 3, 4, 5}:
                line = stdout.readline()
                assert line, f"stdout closed early; got {lines}"
                lines.append(line)
                answered |= {message["id"]} if "id" in (message := json.loads(line)) else set()

        with anyio.fail_after(30):
            await anyio.to_thread.run_sync(read_answers, abandon_on_cancel=True)
        # End of input ends the session; whatever else reaches stdout is checked too.
        server.stdin.close()
        with anyio.fail_after(10):
            rest = await anyio.to_thread.run_sync(stdout.read, abandon_on_cancel=True)
            code = await anyio.to_thread.run_sync(process.wait, abandon_on_cancel=True)
        lines += rest.splitlines()
        assert code == 0

    messages = [json.loads(line) for line in lines if line.strip()]  # any stray print or log line fails here
    assert all(message.get("jsonrpc") == "2.0" for message in messages), lines
    by_id = {message["id"]: message for message in messages if "id" in message}
    assert set(by_id) == {2, 3, 4, 5}
    assert {tool["name"] for tool in by_id[2]["result"]["tools"]} == TOOLS
    assert by_id[3]["result"]["structuredContent"]["summary"]["passed"] == 1
    assert by_id[4]["result"]["structuredContent"]["total"] == 2
    # A tool error on the wire: isError, the message as the only content, the rest in _meta.
    refused = by_id[5]["result"]
    assert "structuredContent" not in refused
    assert refused["isError"] is True
    error = refused["_meta"]["pytest-mcp/error"]
    assert (error["code"], error["reason"]) == (-32602, "invalid_arguments")
    assert refused["content"] == [{"type": "text", "text": error["message"]}]
    assert error["message"].startswith("invalid arguments for execute_tests: bogus: unknown parameter")
    assert error["data"]["errors"][0]["field"] == "bogus"

    logs = stderr_path.read_text()
    assert "tool_call" in logs, "the server logged nothing to stderr"
    assert "execute_tests" in logs


def _peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))


async def test_a_40mb_print_does_not_grow_the_server_or_the_response(tmp_path: Path) -> None:
    forty_mb = 40 * 1024 * 1024
    root = write_project(
        tmp_path / "proj",
        {
            "test_loud.py": (
                "import sys\n\n"
                "def test_loud_uncaptured(capsys):\n"
                "    with capsys.disabled():\n"
                f"        sys.stdout.write('x' * {forty_mb})\n\n"
                "def test_loud_captured_then_fails():\n"
                f"    sys.stdout.write('y' * {forty_mb})\n"
                "    assert False\n"
            )
        },
    )
    with raw_stdio_server(root, tmp_path / "server-stderr-raw.log") as server:
        process = server.process
        baseline = _peak_rss_kib(process.pid)
        server.call(2, "execute_tests", {})
        stdout = server.stdout
        with anyio.fail_after(60):
            line = await anyio.to_thread.run_sync(stdout.readline, abandon_on_cancel=True)
        growth_mib = (_peak_rss_kib(process.pid) - baseline) / 1024

    result = json.loads(line)["result"]["structuredContent"]
    assert (result["summary"]["passed"], result["summary"]["failed"]) == (1, 1)
    assert growth_mib < 16, f"the server's peak memory grew by {growth_mib:.1f} MiB for 80 MB of test output"
    assert len(line) < 300_000, f"the response is {len(line):,} bytes"
    # The groups carry the failure (no output tail, ADR 0020): its captured output is cut, and says so.
    captured = result["groups"][0]["representative"]["stdout"]
    assert "cut by pytest-mcp" in captured or "characters cut" in captured
