"""Serve MCP over stdin/stdout until the client disconnects or a signal asks us to stop."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import AsyncIterator
from typing import Any, cast

import anyio
import structlog
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from pytest_mcp.adapters.shutdown_signals import ShutdownSignals

_log = structlog.get_logger("pytest_mcp.transport")
_READ_SIZE = 64 * 1024


class _PollingLineReader:
    """Lines from a pipe or terminal, read when the descriptor is readable: no worker thread.

    The SDK reads stdin in a worker thread that cannot be cancelled, so a server whose client
    keeps stdin open could not stop on SIGTERM. Waiting for readability is a cancellation point.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        # The SDK parses each line before asking for the next one and reports a failure before
        # that, so when a parse error arrives this is the line that caused it.
        self.last_line: str | None = None

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
                self.last_line = line.decode("utf-8", errors="replace")
                yield self.last_line + "\n"
        if pending:
            self.last_line = pending.decode("utf-8", errors="replace")
            yield self.last_line


def _pollable_stdin() -> _PollingLineReader | None:
    """A thread-free reader for fd 0 when it is a pipe, socket or terminal; None otherwise."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return None
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode):
        return _PollingLineReader(sys.stdin.fileno())
    return None


def _find_lone_surrogate(value: Any, path: str) -> str | None:
    """The JSON path of the first string holding a lone surrogate, if any."""
    if isinstance(value, str):
        return path if any("\ud800" <= ch <= "\udfff" for ch in value) else None
    if isinstance(value, dict):
        children: Any = ((f"{path}.{key}" if path else str(key), child) for key, child in value.items())
    elif isinstance(value, list):
        children = ((f"{path}[{index}]", child) for index, child in enumerate(value))
    else:
        return None
    for child_path, child in children:
        found = _find_lone_surrogate(child, child_path)
        if found:
            return found
    return None


def _reply_to_unparseable(error: Exception, line: str | None) -> JSONRPCError:
    """A JSON-RPC error for a line the SDK could not parse: never leave the client waiting."""
    raw = line
    if raw is None and isinstance(error, ValidationError) and error.errors():
        raw = error.errors()[0].get("input")
    try:
        message = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        message = None
    if not isinstance(message, dict):
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message="Parse error: not JSON"))
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        request_id = None
    arguments = message.get("params", {}).get("arguments") if isinstance(message.get("params"), dict) else None
    where = _find_lone_surrogate(arguments, "")
    if where is not None:
        error_data = ErrorData(
            code=INVALID_PARAMS,
            message=f"{where}: contains a lone surrogate, which is not valid Unicode text",
            data={"errors": [{"field": where, "reason": "contains a lone surrogate"}]},
        )
    else:
        where = _find_lone_surrogate(message, "")
        reason = f"{where} contains a lone surrogate" if where else "it is not a valid JSON-RPC message"
        error_data = ErrorData(code=INVALID_REQUEST, message=f"Invalid request: {reason}")
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=error_data)


async def _answer_unparseable_lines(
    source: Any,
    parsed: MemoryObjectSendStream[SessionMessage | Exception],
    replies: Any,
    stdin: _PollingLineReader | None,
) -> None:
    """Forward parsed messages to the server; answer the lines the SDK could not parse."""
    async with parsed, replies:
        async for item in source:
            if isinstance(item, Exception):
                reply = _reply_to_unparseable(item, stdin.last_line if stdin else None)
                _log.warning("unparseable_message", code=reply.error.code, reason=reply.error.message[:200])
                await replies.send(SessionMessage(reply))
            else:
                await parsed.send(item)


class StdioTransport:
    """stdio: the transport MCP clients spawn us with.

    Shutdown contract: when stdin closes, the SDK cancels in-flight calls and `serve`
    returns 0. On SIGTERM or SIGINT, every in-flight call is cancelled (its runner kills
    pytest's process group on the way out) and `serve` returns 128 + the signal number,
    even while the client keeps stdin open. The SDK's own signal behaviour would skip that
    cleanup, so we take the signals here.
    """

    async def serve(self, server: Server[Any]) -> int:
        signals = ShutdownSignals()
        stdin = _pollable_stdin()
        async with anyio.create_task_group() as group:
            group.start_soon(signals.watch, group.cancel_scope.cancel)
            # stdio_server's parameter is typed AsyncFile, but it only iterates lines.
            async with stdio_server(stdin=cast(Any, stdin)) as (read_stream, write_stream):
                parsed_send, parsed_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
                group.start_soon(_answer_unparseable_lines, read_stream, parsed_send, write_stream.clone(), stdin)
                await server.run(cast(Any, parsed_receive), write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()
        return signals.exit_code()
