"""`connect()`: an MCP client wired in-process to a production-wired pytest-mcp server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from os import PathLike
from pathlib import Path
from typing import Any, Literal

from mcp import Client

from pytest_mcp.adapters.fake.runner import FakeTestRunner
from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings


@asynccontextmanager
async def connect(
    runner: FakeTestRunner | None = None,
    root: str | PathLike[str] = ".",
    python: str | PathLike[str] | None = None,
    mode: Literal["legacy", "auto"] = "legacy",
    *,
    timeout: int | None = None,
    max_timeout: int | None = None,
    error_mode: Literal["result", "jsonrpc"] | None = None,
    detach_after: float | None = None,
) -> AsyncIterator[Client]:
    """Yield an `mcp.Client` connected, in this process, to a pytest-mcp server.

    The server is built by the production container from `Settings`, so validation, use
    cases, presenter and error mapping are the ones agents meet in production. With a
    `runner`, the container's fake runner is selected and replaced by it; without one, the
    real subprocess runner runs the suite under `root` with `python` (an integration test).
    `mode` is the SDK client mode: `"legacy"` (initialize handshake) or `"auto"`.
    `timeout`, `max_timeout`, `error_mode` and `detach_after` are the server's settings
    (`--timeout`, `--max-timeout`, `--error-mode`, `--detach-after`): by default invalid arguments
    and failed runs come back as `isError` results, as they reach a production client. To test
    an agent's handling of long runs, `FakeTestRunner.hold()` with a small `detach_after` makes
    execute_tests answer "running" at once, and `release()` lets get_test_run finish it. Settings
    not given here come from `PYTEST_MCP_*` variables or the defaults, as usual.
    """
    options: dict[str, Any] = {"root": Path(root), "runner": "subprocess" if runner is None else "fake"}
    if python is not None:
        options["python"] = Path(python)
    if timeout is not None:
        options["timeout"] = timeout
    if max_timeout is not None:
        options["max_timeout"] = max_timeout
    if error_mode is not None:
        options["error_mode"] = error_mode
    if detach_after is not None:
        options["detach_after"] = detach_after
    container = create_container(Settings(**options))
    if runner is not None:
        container.fake_runner.override(runner)
    tool_server = container.tool_server()
    async with tool_server.serving(), Client(tool_server.server, mode=mode) as client:
        yield client
