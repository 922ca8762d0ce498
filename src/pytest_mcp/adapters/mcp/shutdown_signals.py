"""The one way transports take SIGTERM and SIGINT: record the signal, then ask the transport to stop."""

from __future__ import annotations

import signal
from collections.abc import Callable

import anyio

from pytest_mcp.adapters.structlog_logging import routed_logger

_log = routed_logger("pytest_mcp.transport")


class ShutdownSignals:
    """Waits for SIGTERM or SIGINT, then calls `stop`; `exit_code` is 128 + the signal, or 0.

    The MCP SDK's own behaviour on these signals skips `finally` blocks, so the runs in flight
    would not get to kill their process groups; taking the signals here lets every transport
    stop in order.
    """

    def __init__(self) -> None:
        self.received: int | None = None

    async def watch(self, stop: Callable[[], None]) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                self.received = signum
                _log.warning("shutdown", signal=signal.Signals(signum).name)
                stop()
                return

    def exit_code(self, otherwise: int = 0) -> int:
        return 128 + self.received if self.received is not None else otherwise
