"""`connect()`: an MCP client wired in-process to a production-wired pytest-mcp server."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from os import PathLike
from pathlib import Path
from typing import Any, Literal

from dependency_injector import providers
from mcp import Client
from pydantic import ValidationError

from pytest_mcp.adapters.fake.runner import FakeTestRunner
from pytest_mcp.adapters.fake.script import ScriptError
from pytest_mcp.adapters.mcp.detached_runs import DetachedRuns
from pytest_mcp.adapters.mcp.sessions import Owner
from pytest_mcp.adapters.structlog_logging import in_process_logging
from pytest_mcp.container import create_container
from pytest_mcp.domain.errors import field_errors
from pytest_mcp.settings import ENV_PREFIX, Settings

LogLevel = Literal["debug", "info", "warning", "error"]
IN_PROCESS_LOG_LEVEL: LogLevel = "error"
"""connect()'s log level unless one is given or configured: quiet, so that a failing test's
captured output holds its own lines, not one per tool call; our own bugs still show."""


@asynccontextmanager
async def connect(
    runner: FakeTestRunner | None = None,
    root: str | PathLike[str] | None = None,
    python: str | PathLike[str] | None = None,
    mode: Literal["legacy", "auto"] = "legacy",
    *,
    timeout: int | None = None,
    max_timeout: int | None = None,
    error_mode: Literal["result", "jsonrpc"] | None = None,
    detach_after: float | None = None,
    log_level: LogLevel | None = None,
) -> AsyncIterator[Client]:
    """Yield an `mcp.Client` connected, in this process, to a pytest-mcp server.

    The server is built by the production container from `Settings`, so validation, use
    cases, presenter and error mapping are the ones agents meet in production. With a
    `runner`, the container's fake runner is selected and replaced by it; without one, the
    real subprocess runner runs the suite under `root` with `python` (an integration test).

    There is one root: the server's `root` is the runner's, and a runner without one takes the
    server's (default: the runner's root, else the current directory); two different roots are
    refused. With a runner, `python` is the fake environment's interpreter, as check_environment
    reports it. `mode` is the SDK client mode: `"legacy"` (initialize handshake) or `"auto"`.
    `timeout`, `max_timeout`, `error_mode` and `detach_after` are the server's settings
    (`--timeout`, `--max-timeout`, `--error-mode`, `--detach-after`): by default invalid arguments
    and failed runs come back as `isError` results, as they reach a production client. To test
    an agent's handling of long runs, `FakeTestRunner.hold()` with a small `detach_after` makes
    execute_tests answer "running" at once, and `release()` lets get_test_run finish it.

    The server logs to stderr only, and by default only its own errors (`log_level`, else
    `PYTEST_MCP_LOG_LEVEL` or `[tool.pytest-mcp]`, else "error"); it never configures this
    process's logging. Settings not given here come from `PYTEST_MCP_*` variables or the
    defaults, as usual. A wrong argument raises ScriptError naming it, before anything starts.
    """
    if runner is not None and not isinstance(runner, FakeTestRunner):
        raise ScriptError(f"runner: must be a FakeTestRunner or None (the real runner), not {type(runner).__name__}")
    if mode not in ("legacy", "auto"):
        raise ScriptError(f"mode: {mode!r} is not 'legacy' or 'auto'")
    given = {
        "root": root,
        "python": python,
        "timeout": timeout,
        "max_timeout": max_timeout,
        "error_mode": error_mode,
        "detach_after": detach_after,
        "log_level": log_level,
    }
    options: dict[str, Any] = {name: value for name, value in given.items() if value is not None}
    for name in ("root", "python"):
        if name in options:
            if not isinstance(options[name], str | PathLike) or not str(options[name]):
                raise ScriptError(f"{name}: must be a path, not {options[name]!r}")
            options[name] = Path(options[name])
    if runner is not None and runner.root is not None:
        options.setdefault("root", runner.root)  # one root: _connected() refuses a different one
    options["runner"] = "subprocess" if runner is None else "fake"
    try:
        settings = Settings(**options)
    except ValidationError as exc:
        problems = field_errors(exc, show_input=False)
        raise ScriptError("; ".join(map(str, problems))) from None
    configured = "log_level" in settings.model_fields_set or f"{ENV_PREFIX}LOG_LEVEL" in os.environ
    level = settings.log_level if configured else IN_PROCESS_LOG_LEVEL
    container = create_container(settings)
    if runner is not None:
        container.fake_runner.override(runner)
        container.fake_probe.override(providers.Object(runner._connected(settings.root, settings.python)))
        _tell_polls(container.detached_runs(), runner)
    tool_server = container.tool_server()
    with in_process_logging(level, settings.log_format):
        async with tool_server.serving(), Client(tool_server.server, mode=mode) as client:
            yield client


def _tell_polls(runs: DetachedRuns, runner: FakeTestRunner) -> None:
    """Let the runner count the agent's get_test_run calls (each looks its run up), for `hold(polls=)`:
    the fake's hold is released by the agent's own loop, not by a wrapper around its client."""
    find = runs.find

    async def found(run_id: str, owner: Owner) -> Any:
        runner._polled()
        return await find(run_id, owner)

    runs.find = found  # type: ignore[method-assign]
