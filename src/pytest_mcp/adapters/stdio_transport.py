"""Serve MCP over stdin/stdout until the client disconnects or a signal asks us to stop."""

from __future__ import annotations

import os
import signal
import stat
import sys
from collections.abc import AsyncIterator
from typing import Any, cast

import anyio
import structlog
from mcp.server import Server
from mcp.server.stdio import stdio_server

_log = structlog.get_logger("pytest_mcp.transport")
_READ_SIZE = 64 * 1024


class _PollingLineReader:
    """Lines from a pipe or terminal, read when the descriptor is readable: no worker thread.

    The SDK reads stdin in a worker thread that cannot be cancelled, so a server whose client
    keeps stdin open could not stop on SIGTERM. Waiting for readability is a cancellation point.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def __aiter__(self) -> AsyncIterator[str]:
        pending = b""
        while True:
            await anyio.wait_readable(self._fd)
            chunk = os.read(self._fd, _READ_SIZE)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                yield line.decode("utf-8", errors="replace") + "\n"
        if pending:
            yield pending.decode("utf-8", errors="replace")


def _pollable_stdin() -> _PollingLineReader | None:
    """A thread-free reader for fd 0 when it is a pipe, socket or terminal; None otherwise."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return None
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode):
        return _PollingLineReader(sys.stdin.fileno())
    return None


class StdioTransport:
    """stdio: the transport MCP clients spawn us with.

    Shutdown contract: when stdin closes, the SDK cancels in-flight calls and `serve`
    returns 0. On SIGTERM or SIGINT, every in-flight call is cancelled (its runner kills
    pytest's process group on the way out) and `serve` returns 128 + the signal number,
    even while the client keeps stdin open. The SDK's own signal behaviour would skip that
    cleanup, so we take the signals here.
    """

    async def serve(self, server: Server[Any]) -> int:
        received: list[int] = []
        stdin = _pollable_stdin()
        async with anyio.create_task_group() as group:

            async def watch_signals() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for signum in signals:
                        received.append(signum)
                        _log.warning("shutdown", signal=signal.Signals(signum).name)
                        group.cancel_scope.cancel()
                        return

            group.start_soon(watch_signals)
            # stdio_server's parameter is typed AsyncFile, but it only iterates lines.
            async with stdio_server(stdin=cast(Any, stdin)) as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()
        return 128 + received[0] if received else 0
