"""Serve MCP over stdin/stdout until the client disconnects or a signal asks us to stop."""

from __future__ import annotations

import signal
from typing import Any

import anyio
import structlog
from mcp.server import Server
from mcp.server.stdio import stdio_server

_log = structlog.get_logger("pytest_mcp.transport")


class StdioTransport:
    """stdio: the transport MCP clients spawn us with.

    Shutdown contract: when stdin closes, the SDK cancels in-flight calls and `serve`
    returns 0. On SIGTERM or SIGINT, every in-flight call is cancelled (its runner kills
    pytest's process group on the way out) and `serve` returns 128 + the signal number.
    The SDK's own signal behaviour would skip that cleanup, so we take the signals here.
    """

    async def serve(self, server: Server[Any]) -> int:
        received: list[int] = []
        async with anyio.create_task_group() as group:

            async def watch_signals() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for signum in signals:
                        received.append(signum)
                        _log.warning("shutdown", signal=signal.Signals(signum).name)
                        group.cancel_scope.cancel()
                        return

            group.start_soon(watch_signals)
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()
        return 128 + received[0] if received else 0
