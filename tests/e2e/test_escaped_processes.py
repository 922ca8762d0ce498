"""No process outlives its run, even one that left pytest's process group (issue 25).

The test in the project starts three helpers that leave pytest's process group and session: a
`subprocess.Popen(..., start_new_session=True)`, a fork that calls `os.setsid()`, and a double
fork whose grandchild calls `setsid()`. Each writes its pid to a file; after the call returns (or
the server exits), every one of them must be gone (or a zombie) within 2 s, on every way a run
ends: by itself, by its timeout, by a cancellation over stdio or HTTP, by the client leaving, and
by SIGTERM of the server; with pytest-xdist's workers too, whose processes start the helpers.
"""

from __future__ import annotations

import math
import signal
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.answers import call_error
from tests.e2e.e2e_support import (
    MARKER_ENV,
    STARTED_WITHIN,
    Server,
    clean_env,
    connect,
    http_server,
    raw_stdio_server,
    start_server,
    structured,
    text_of,
    write_project,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

KINDS = ("new_session", "setsid", "double_fork")
GONE_WITHIN = 2.0

HELPERS_TEST = """
import os
import subprocess
import sys
import time

PIDS = {pids!r}
MARKER = {marker!r}
SLEEPER = (
    "import os, sys, time\\n"
    "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\\n"
    "os.rename(sys.argv[1] + '.tmp', sys.argv[1])\\n"
    "time.sleep(600)\\n"
)


def _sleep_as(kind):
    path = os.path.join(PIDS, kind)
    with open(path + ".tmp", "w") as out:
        out.write(str(os.getpid()))
    os.rename(path + ".tmp", path)
    time.sleep(600)
    os._exit(0)


def _start_helpers():
    subprocess.Popen(
        [sys.executable, "-c", SLEEPER, os.path.join(PIDS, "new_session"), MARKER],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if os.fork() == 0:
        os.setsid()
        _sleep_as("setsid")
    middle = os.fork()
    if middle == 0:
        if os.fork() == 0:
            os.setsid()
            _sleep_as("double_fork")
        os._exit(0)
    os.waitpid(middle, 0)
    deadline = time.monotonic() + 60
    while len([name for name in os.listdir(PIDS) if not name.endswith(".tmp")]) < 3:
        assert time.monotonic() < deadline, "the helpers did not start"
        time.sleep(0.01)


def test_leaves_helpers():
    _start_helpers()


def test_leaves_helpers_and_hangs():
    _start_helpers()
    time.sleep(600)
"""


def helpers_project(tmp_path: Path, marker: str) -> tuple[Path, Path, str]:
    """(root, the directory the helpers write their pids to, the test file's name, which holds the marker)."""
    pids = tmp_path / "pids"
    pids.mkdir()
    name = f"test_helpers_{marker}.py"
    root = write_project(tmp_path / "proj", {name: HELPERS_TEST.format(pids=str(pids), marker=marker)})
    return root, pids, name


def _alive(pid: int) -> bool:
    """Alive and not a zombie (a zombie is dead; whoever holds it reaps it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def helper_pids(pids: Path) -> dict[str, int]:
    return {path.name: int(path.read_text()) for path in pids.iterdir() if not path.name.endswith(".tmp")}


async def wait_for_helpers(pids: Path) -> dict[str, int]:
    deadline = time.monotonic() + STARTED_WITHIN + 15
    while set(helper_pids(pids)) != set(KINDS):
        assert time.monotonic() < deadline, f"the helpers did not start: {helper_pids(pids)}"
        await anyio.sleep(0.02)
    started = helper_pids(pids)
    assert all(_alive(pid) for pid in started.values()), "a helper died on its own, so its end proves nothing"
    return started


async def assert_helpers_gone(started: dict[str, int]) -> None:
    """Every helper is gone within GONE_WITHIN of now (the moment the call returned)."""
    assert set(started) == set(KINDS), f"not every helper started, so the run proves nothing: {started}"
    deadline = time.monotonic() + GONE_WITHIN
    while alive := {kind: pid for kind, pid in started.items() if _alive(pid)}:
        assert time.monotonic() < deadline, f"helpers alive {GONE_WITHIN}s after the call returned: {alive}"
        await anyio.sleep(0.02)


def helpers_server(root: Path, tmp_path: Path, marker: str, workers: int | None) -> Server:
    """The server on the helpers' project; with workers, pytest-xdist is loaded by name
    (`PYTEST_PLUGINS`) rather than by autoloading every plugin of this suite's venv, which took
    about 4 s of CPU more for the controller and its two workers at each run."""
    xdist = {"PYTEST_PLUGINS": "xdist.plugin"} if workers else {}
    return start_server(root, tmp_path, env={MARKER_ENV: marker, **xdist})


def _arguments(node_id: str, workers: int | None, **more: Any) -> dict[str, Any]:
    return {"node_ids": [node_id], **({"workers": workers} if workers else {}), **more}


WORKERS = pytest.mark.parametrize("workers", [None, 2], ids=["one-process", "workers-2"])


@WORKERS
async def test_a_run_that_ends_stops_the_helpers_its_test_left_and_says_so(
    tmp_path: Path, marker: str, workers: int | None
) -> None:
    root, pids, name = helpers_project(tmp_path, marker)
    server = helpers_server(root, tmp_path, marker, workers)
    async with server.client() as client:
        result = await client.call_tool("execute_tests", _arguments(f"{name}::test_leaves_helpers", workers))
        started = helper_pids(pids)
        await assert_helpers_gone(started)
    answer = structured(result)
    assert answer["summary"]["passed"] == 1
    stopped = answer["stopped_processes"]
    assert stopped["count"] == 3, stopped
    assert all(len(command) <= 80 for command in stopped["commands"])
    fork = "[a fork of pytest]" if workers is None else "[a fork of a pytest-xdist worker]"
    assert sum(command == fork for command in stopped["commands"]) == 2, stopped
    lines = [line for line in text_of(result).splitlines() if line.startswith("STOPPED ")]
    assert len(lines) == 1
    assert lines[0].startswith("STOPPED 3 processes the tests left running when pytest ended: ")


@WORKERS
async def test_a_timeout_stops_the_helpers_and_its_stderr_tail_is_the_project_frames(
    tmp_path: Path, marker: str, workers: int | None
) -> None:
    root, pids, name = helpers_project(tmp_path, marker)
    server = helpers_server(root, tmp_path, marker, workers)
    async with server.client() as client:
        timeout = await timeout_after_the_helpers_start(
            client, _arguments(f"{name}::test_leaves_helpers_and_hangs", workers), pids
        )
        error = await call_error(
            client, "execute_tests", _arguments(f"{name}::test_leaves_helpers_and_hangs", workers, timeout=timeout)
        )
        await assert_helpers_gone(helper_pids(pids))
    assert error.reason == "timeout"
    assert "stopped with all its child processes" in error.message
    if workers is None:  # pytest-xdist's controller waits in its loop: the hung test is in a worker
        assert f"test_leaves_helpers_and_hangs ({name}:" in error.message
        tail = error.data["stderr_tail"]
        assert len(tail.encode()) <= 1024, tail
        assert f'{name}", line ' in tail, tail
        assert "in test_leaves_helpers_and_hangs" in tail, tail
        assert "frame(s) outside the project hidden by pytest-mcp" in tail
        assert "site-packages" not in tail, tail
        assert "<frozen runpy>" not in tail, tail


async def cancelled_once_helpers_started(client: Any, arguments: dict[str, Any], pids: Path) -> dict[str, int]:
    """Call execute_tests, cancel the call once the test's helpers have started, and return them."""
    async with anyio.create_task_group() as group:
        scope = anyio.CancelScope()

        async def call() -> None:
            with scope:
                await client.call_tool("execute_tests", arguments)

        group.start_soon(call)
        started = await wait_for_helpers(pids)
        scope.cancel()
    return started


async def timeout_after_the_helpers_start(client: Any, arguments: dict[str, Any], pids: Path) -> int:
    """A run timeout that passes well after the helpers of the same run have started, under this load.

    A timeout that passed before the helpers started would prove nothing, and a fixed one long enough
    for a loaded machine (it was 20 s) is waited out in full. So the same server first runs the same
    test, and the time its helpers took to start (pytest's start and collection included) is
    measured; that run is cancelled (its helpers stopped) and the timeout is three times that time,
    at least 5 s. Should the helpers still start late, the test fails saying so (`assert_helpers_gone`
    wants all three): never a pass that proves nothing.
    """
    began = time.monotonic()
    started = await cancelled_once_helpers_started(client, arguments, pids)
    took = time.monotonic() - began
    await assert_helpers_gone(started)
    for path in pids.iterdir():
        path.unlink()
    return max(5, math.ceil(3 * took))


@WORKERS
async def test_a_cancellation_over_stdio_stops_the_helpers(tmp_path: Path, marker: str, workers: int | None) -> None:
    root, pids, name = helpers_project(tmp_path, marker)
    server = helpers_server(root, tmp_path, marker, workers)
    async with server.client() as client:
        arguments = _arguments(f"{name}::test_leaves_helpers_and_hangs", workers)
        await assert_helpers_gone(await cancelled_once_helpers_started(client, arguments, pids))


async def test_a_cancellation_over_http_stops_the_helpers(tmp_path: Path, marker: str) -> None:
    root, pids, name = helpers_project(tmp_path, marker)
    with http_server(root, tmp_path, "--transport", "http", env={MARKER_ENV: marker}) as server:
        async with connect(server, "legacy") as client:
            arguments = {"node_ids": [f"{name}::test_leaves_helpers_and_hangs"]}
            await assert_helpers_gone(await cancelled_once_helpers_started(client, arguments, pids))


async def test_a_client_disconnect_stops_the_helpers(tmp_path: Path, marker: str) -> None:
    root, pids, name = helpers_project(tmp_path, marker)
    server = start_server(root, tmp_path, env={MARKER_ENV: marker})
    started: dict[str, int] = {}
    with anyio.fail_after(60):
        async with anyio.create_task_group() as outer:

            async def session() -> None:
                async with server.client() as client, anyio.create_task_group() as inner:
                    node = f"{name}::test_leaves_helpers_and_hangs"
                    inner.start_soon(client.call_tool, "execute_tests", {"node_ids": [node]})
                    await anyio.sleep_forever()

            outer.start_soon(session)
            started = await wait_for_helpers(pids)
            outer.cancel_scope.cancel()  # leaving the client closes the server's stdin
    await assert_helpers_gone(started)


async def test_sigterm_of_the_server_stops_the_helpers(tmp_path: Path, marker: str) -> None:
    root, pids, name = helpers_project(tmp_path, marker)
    with raw_stdio_server(root, tmp_path / "server-stderr-raw.log", env=clean_env({MARKER_ENV: marker})) as server:
        process = server.process
        server.call(2, "execute_tests", {"node_ids": [f"{name}::test_leaves_helpers_and_hangs"]})
        started = await wait_for_helpers(pids)
        process.send_signal(signal.SIGTERM)  # stdin stays open
        with anyio.fail_after(10):
            while process.poll() is None:
                await anyio.sleep(0.02)
        await assert_helpers_gone(started)
        assert process.returncode == 128 + signal.SIGTERM
