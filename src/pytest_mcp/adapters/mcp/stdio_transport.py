"""Serve MCP over stdin/stdout until the client disconnects or a signal asks us to stop."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import selectors
import stat
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.message import SessionMessage
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from pytest_mcp.adapters.mcp.shutdown_signals import ShutdownSignals
from pytest_mcp.adapters.mcp.tool_server import McpToolServer
from pytest_mcp.adapters.structlog_logging import routed_logger

_log = routed_logger("pytest_mcp.transport")

MAX_LINE_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE
"""The largest message accepted on stdin: the SDK's limit for an HTTP request body (4 MiB)."""
_READ_SIZE = 64 * 1024
_MAX_DEPTH = 64
"""How deep a message's JSON is searched for the field that holds a lone surrogate."""
_FLUSH_SECONDS = 1.0
"""How long answers already produced may take to reach a client that stopped reading, at exit."""


_HEAD_BYTES = 64 * 1024
"""What is kept of a line too long to read: enough to find its id and answer it."""


@dataclass(frozen=True)
class _Line:
    """One line of stdin, or (`too_long`) the size of one that was discarded, with its head in `data`."""

    data: bytes
    too_long: int = 0


def _pollable(fd: int) -> bool:
    """Whether the event loop can wait on `fd`: pipes, sockets and terminals; not files or /dev/null."""
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
    except (OSError, ValueError):
        return False
    return True


class _WireReader:
    """Lines from the client, read without a worker thread, in time linear in their length.

    Waiting for readability is a cancellation point, so SIGTERM stops the server while the
    client keeps stdin open (the SDK's reader thread could not be cancelled). A line longer
    than MAX_LINE_BYTES is skipped without being held in memory.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pollable = _pollable(fd)

    async def _read(self) -> bytes:
        if self._pollable:
            await anyio.wait_readable(self._fd)
        else:  # a file or /dev/null: a read never waits
            await anyio.lowlevel.checkpoint()
        return os.read(self._fd, _READ_SIZE)

    async def __aiter__(self) -> AsyncIterator[_Line]:
        parts: list[bytes] = []  # the line so far; once it is over the limit, only its head
        size = 0  # the line's length so far
        while chunk := await self._read():
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                yield _line(parts, chunk[start:end], size + end - start)
                parts, size, start = [], 0, end + 1
            if start < len(chunk):
                size += len(chunk) - start
                parts.append(chunk[start:])
                if size > MAX_LINE_BYTES and len(parts) > 1:
                    parts[:] = [b"".join(parts)[:_HEAD_BYTES]]
        if size:
            yield _line(parts, b"", size)


def _line(parts: list[bytes], last: bytes, size: int) -> _Line:
    if size > MAX_LINE_BYTES:
        return _Line(b"".join(parts)[:_HEAD_BYTES], too_long=size)
    return _Line(b"".join([*parts, last]))


class _WireWriter:
    """Writes each message as one line; a message that cannot be encoded never stops the server.

    Once the client has closed stdin, nothing more is written: closing stdin is how a stdio
    client ends the session, and what the SDK would still say then (a "Connection closed" error
    for each call in flight) reaches a client that has stopped listening, which some clients
    (the Python SDK 1.x) report as an error of their own.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pollable = _pollable(fd)
        self._gone = False  # the client closed stdin, or its end of stdout: what is left is dropped

    def client_left(self) -> None:
        self._gone = True

    async def write(self, message: mcp_types.JSONRPCMessage) -> None:
        if self._gone:
            return
        data = memoryview(_encode(message))
        while data and not self._gone:
            if self._pollable:
                await anyio.wait_writable(self._fd)
            try:
                data = data[os.write(self._fd, data) :]
            except BlockingIOError:
                continue
            except OSError as exc:  # EPIPE and the like: nobody is listening any more
                _log.info("client_stopped_reading", error=exc.strerror)
                self._gone = True


def _encode(message: mcp_types.JSONRPCMessage) -> bytes:
    """The message as a UTF-8 JSON line.

    Our answers hold text from the project (test output, node ids). Text that is not valid
    Unicode (a lone surrogate) cannot be encoded; the request then gets an internal error
    instead of an answer, and the server goes on.
    """
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n"
    except (ValueError, UnicodeError):
        correlation_id = uuid.uuid4().hex[:12]
        _log.exception("unencodable_message", correlation_id=correlation_id)
    request_id = getattr(message, "id", None)
    if not isinstance(message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError) or not _valid_id(request_id):
        return b""  # a notification: nobody waits for it
    error = ErrorData(
        code=INTERNAL_ERROR,
        message=f"pytest-mcp could not encode its answer; quote correlation id {correlation_id} when reporting it",
        data={"correlation_id": correlation_id},
    )
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=error).model_dump_json(by_alias=True).encode() + b"\n"


def _valid_id(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return False
    return not (isinstance(value, str) and any("\ud800" <= ch <= "\udfff" for ch in value))


def _find_lone_surrogate(value: Any) -> str | None:
    """The JSON path of the first string holding a lone surrogate, searched _MAX_DEPTH deep, if any."""
    pending: list[tuple[str, Any, int]] = [("", value, 0)]
    while pending:
        path, item, depth = pending.pop()
        if isinstance(item, str):
            if any("\ud800" <= ch <= "\udfff" for ch in item):
                return path
            continue
        if depth >= _MAX_DEPTH:
            continue
        if isinstance(item, dict):
            children = [(f"{path}.{key}" if path else str(key), child) for key, child in item.items()]
        elif isinstance(item, list):
            children = [(f"{path}[{index}]", child) for index, child in enumerate(item)]
        else:
            continue
        for child_path, child in reversed(children):
            pending.append((child_path, child, depth + 1))
    return None


def _error(request_id: Any, code: int, message: str, data: Any = None) -> JSONRPCError:
    return JSONRPCError(
        jsonrpc="2.0",
        id=request_id if _valid_id(request_id) else None,
        error=ErrorData(code=code, message=message[:500], data=data),
    )


def reply_to_unparseable(raw: bytes, error: Exception) -> JSONRPCError:
    """A JSON-RPC error for a line the SDK could not parse: never leave the client waiting.

    The request's id is answered when it can be read; otherwise the id is null, as JSON-RPC
    says. Never raises: the server must keep serving whatever the line held.
    """
    try:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            # Nothing of it reaches a tool; its id, if it can be read, gets the answer.
            request_id = _loads(raw.decode("utf-8", errors="replace")).get("id")
            return _error(request_id, PARSE_ERROR, f"Parse error: the message is not valid UTF-8 (byte {exc.start})")
        try:
            message = json.loads(text)
        except RecursionError:
            return _error(top_level_id(raw), PARSE_ERROR, "Parse error: the message is nested too deeply")
        except ValueError:
            return _error(None, PARSE_ERROR, "Parse error: the message is not JSON")
        if not isinstance(message, dict):
            return _error(None, INVALID_REQUEST, "Invalid request: a JSON-RPC message is a JSON object")
        request_id = message.get("id")
        if isinstance(request_id, str) and not _valid_id(request_id):
            return _error(None, INVALID_REQUEST, "Invalid request: its id contains a lone surrogate")
        params = message.get("params")
        where = _find_lone_surrogate(params.get("arguments")) if isinstance(params, dict) else None
        if where is not None:
            reason = "contains a lone surrogate, which is not valid Unicode text"
            return _error(
                request_id,
                INVALID_PARAMS,
                f"{where[:100]}: {reason}",
                {"errors": [{"field": where[:100], "reason": "contains a lone surrogate"}]},
            )
        where = _find_lone_surrogate(message)
        if where is not None:
            return _error(request_id, INVALID_REQUEST, f"Invalid request: {where[:100]} contains a lone surrogate")
        if isinstance(error, ValidationError) and any(e["type"] == "json_invalid" for e in error.errors()):
            reason = next(e["msg"] for e in error.errors() if e["type"] == "json_invalid")
            return _error(request_id, PARSE_ERROR, f"Parse error: {reason}")
        return _error(request_id, INVALID_REQUEST, "Invalid request: it is not a valid JSON-RPC message")
    except Exception:  # a bug here must cost one line, not the connection
        _log.exception("unparseable_reply_failed")
        return _error(None, PARSE_ERROR, "Parse error")


def _request_read_as_notification(message: mcp_types.JSONRPCMessage, raw: bytes) -> bool:
    """Whether the SDK took a request whose id it could not read for a notification, which gets no answer."""
    return isinstance(message, mcp_types.JSONRPCNotification) and b'"id"' in raw and "id" in _loads(raw.decode())


_NUMBER = re.compile(rb"-?\d+")


def top_level_id(raw: bytes) -> str | int | None:
    """The `id` member of the JSON object `raw` begins with, read from its first _HEAD_BYTES alone.

    For a message that cannot be parsed whole (too long, nested too deep): its id, when it comes
    early enough, still lets the answer reach the request that waits for it. A linear scan that
    tracks only nesting and strings; anything unexpected gives None.
    """
    depth, index, head = 0, 0, raw[:_HEAD_BYTES]
    while index < len(head):
        byte = head[index : index + 1]
        if byte == b'"':
            end = _string_end(head, index)
            if end < 0:
                return None
            after = head[end + 1 :].lstrip()
            if depth == 1 and head[index : end + 1] == b'"id"' and after.startswith(b":"):
                value = after[1:].lstrip()
                if value.startswith(b'"'):
                    close = _string_end(value, 0)
                    return _as_id(value[: close + 1]) if close > 0 else None
                number = _NUMBER.match(value)
                return int(number.group()) if number else None
            index = end + 1
            continue
        depth += (byte in (b"{", b"[")) - (byte in (b"}", b"]"))
        index += 1
    return None


def _string_end(data: bytes, start: int) -> int:
    """Index of the quote closing the JSON string that opens at `start`, or -1."""
    index = start + 1
    while index < len(data):
        if data[index : index + 1] == b"\\":
            index += 2
        elif data[index : index + 1] == b'"':
            return index
        else:
            index += 1
    return -1


def _as_id(token: bytes) -> str | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if isinstance(value, str) and _valid_id(value) else None


def _loads(text: str) -> dict[str, Any]:
    """`text` as a JSON object, or {} when it is not one."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


async def _read_messages(
    reader: _WireReader,
    to_server: ObjectSendStream[SessionMessage | Exception],
    replies: ObjectSendStream[SessionMessage],
    at_end: Callable[[], None],
) -> None:
    """Forward each parsed message to the server; answer every line that is not one.

    At the end of stdin, `at_end` runs before the server hears of it.
    """
    async with to_server, replies:
        async for line in reader:
            if line.too_long:
                reply = _error(
                    top_level_id(line.data),
                    INVALID_REQUEST,
                    f"Invalid request: the message is {line.too_long:,} bytes; the limit is {MAX_LINE_BYTES:,}",
                )
            elif not line.data.strip():
                continue
            else:
                try:
                    message = mcp_types.jsonrpc_message_adapter.validate_json(line.data, by_name=False)
                except Exception as exc:
                    reply = reply_to_unparseable(line.data, exc)
                else:
                    if not _request_read_as_notification(message, line.data):
                        await to_server.send(SessionMessage(message))
                        continue
                    reply = _error(None, INVALID_REQUEST, "Invalid request: its id is neither a string nor an integer")
            _log.warning("unparseable_message", code=reply.error.code, reason=reply.error.message[:200])
            await replies.send(SessionMessage(reply))
        at_end()


async def _write_messages(outgoing: ObjectReceiveStream[SessionMessage], writer: _WireWriter) -> None:
    async with outgoing:
        async for session_message in outgoing:
            await writer.write(session_message.message)


@contextlib.contextmanager
def _claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private descriptors for the wire; meanwhile fd 0 reads /dev/null and fd 1 writes to stderr.

    Nothing else in the process can then read the client's messages or write into the protocol
    (a stray print, a library's banner). Pipes and sockets are written without blocking, so a
    client that stops reading cannot stall the server. Everything is restored on exit.
    """
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    out_flags = fcntl.fcntl(wire_out, fcntl.F_GETFL)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, 0)
        os.dup2(2, 1)
        mode = os.fstat(wire_out).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            fcntl.fcntl(wire_out, fcntl.F_SETFL, out_flags | os.O_NONBLOCK)
        yield wire_in, wire_out
    finally:
        os.close(devnull)
        fcntl.fcntl(wire_out, fcntl.F_SETFL, out_flags)
        os.dup2(wire_out, 1)
        os.dup2(wire_in, 0)
        os.close(wire_out)
        os.close(wire_in)


class StdioTransport:
    """stdio: the transport MCP clients spawn us with.

    Our own reader and writer stand in for the SDK's stdio_server: every line gets an answer
    (a JSON-RPC error when it is not a message we can parse), reading is linear in the size of
    a line and bounded by MAX_LINE_BYTES, and an answer that cannot be encoded becomes an
    error for that request instead of ending the server.

    Shutdown contract: when stdin closes, the SDK cancels in-flight calls and `serve`
    returns 0. On SIGTERM or SIGINT, every in-flight call is cancelled (its runner kills
    pytest's process group on the way out) and `serve` returns 128 + the signal number,
    even while the client keeps stdin open. The SDK's own signal behaviour would skip that
    cleanup, so we take the signals here.
    """

    async def serve(self, tool_server: McpToolServer) -> int:
        server = tool_server.server
        signals = ShutdownSignals()
        with _claimed_stdio() as (wire_in, wire_out):
            to_server_send, to_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
            from_server, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
            serving, reading = anyio.CancelScope(), anyio.CancelScope()
            written = anyio.Event()

            writer = _WireWriter(wire_out)

            async def read() -> None:
                with reading:
                    await _read_messages(_WireReader(wire_in), to_server_send, from_server.clone(), writer.client_left)

            async def write() -> None:
                try:
                    await _write_messages(outgoing, writer)
                finally:
                    written.set()

            # The run store is attached (or the server refuses to start) before stdin is read: a
            # reader blocked on stdin could not be cancelled for the refusal.
            async with tool_server.attached(), anyio.create_task_group() as group:
                group.start_soon(signals.watch, serving.cancel)
                group.start_soon(write)
                group.start_soon(read)
                # One session: when it ends (EOF or a signal), so do the runs it detached.
                async with tool_server.serving():
                    with serving:
                        await server.run(to_server, from_server, server.create_initialization_options())
                # The server has closed its side of the outgoing stream; once the reader's side closes
                # too, the writer writes what is queued and ends, unless the client stopped reading.
                reading.cancel()
                with anyio.move_on_after(_FLUSH_SECONDS):
                    await written.wait()
                group.cancel_scope.cancel()
        return signals.exit_code()
