"""Run one command in its own process group with a deadline, bounded output and no orphans."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream


class BoundedBuffer:
    """Keeps the first `head` and the last `tail` bytes of a stream, and counts the rest."""

    def __init__(self, head: int, tail: int) -> None:
        self._head_limit = head
        self._tail_limit = tail
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk
            if len(self._tail) > 2 * self._tail_limit:
                del self._tail[: len(self._tail) - self._tail_limit]

    def text(self) -> str:
        tail = self._tail[-self._tail_limit :] if self._tail_limit else b""
        cut = self.total - len(self._head) - len(tail)
        head_text = self._head.decode("utf-8", errors="replace")
        tail_text = bytes(tail).decode("utf-8", errors="replace")
        if cut <= 0:
            return head_text + tail_text
        return f"{head_text}\n[... {cut:,} bytes of output cut by pytest-mcp ...]\n{tail_text}"


@dataclass(frozen=True)
class ProcessOutcome:
    returncode: int | None
    timed_out: bool
    stdout: str
    stderr: str
    duration: float

    @property
    def signal_name(self) -> str | None:
        if self.returncode is None or self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"


@dataclass(frozen=True)
class OutputLimits:
    stdout_head: int = 16 * 1024
    stdout_tail: int = 64 * 1024
    stderr_head: int = 8 * 1024
    stderr_tail: int = 32 * 1024


async def _drain(stream: ByteReceiveStream | None, buffer: BoundedBuffer) -> None:
    if stream is None:
        return
    async for chunk in stream:
        buffer.feed(chunk)


_live_groups: set[int] = set()


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def kill_all_process_groups() -> int:
    """Kill every process group a run in this process still owns; for transports shutting down.

    Runs kill their own groups on every way out; this is the last line for a shutdown path that
    could not wait for them (an HTTP server's graceful-shutdown timeout, say).
    """
    groups = list(_live_groups)
    for pgid in groups:
        _kill_group(pgid)
    return len(groups)


async def run_in_process_group(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    limits: OutputLimits,
    while_running: Callable[[], Awaitable[None]] | None = None,
) -> ProcessOutcome:
    """Run `argv` with no stdin, in a new session, and kill its whole group when it ends.

    The group is killed on every way out: normal exit (stragglers a test left behind),
    timeout, and cancellation of the calling task. Raises OSError if the command cannot
    be started at all. `while_running`, if given, runs alongside and is cancelled when the
    process ends.
    """
    out = BoundedBuffer(limits.stdout_head, limits.stdout_tail)
    err = BoundedBuffer(limits.stderr_head, limits.stderr_tail)
    started = time.perf_counter()
    process = await anyio.open_process(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        start_new_session=True,
    )
    pgid = process.pid  # a new session makes the child its own group leader
    _live_groups.add(pgid)
    timed_out = False
    try:
        async with anyio.create_task_group() as readers:
            readers.start_soon(_drain, process.stdout, out)
            readers.start_soon(_drain, process.stderr, err)
            companion = anyio.CancelScope()
            if while_running is not None:

                async def accompany() -> None:
                    with companion:
                        await while_running()

                readers.start_soon(accompany)
            with anyio.move_on_after(timeout) as deadline:
                await process.wait()
            companion.cancel()
            timed_out = deadline.cancelled_caught
            # Whether pytest exited or overran, nothing it started may outlive it; killing the
            # group also closes pipes that grandchildren inherited, so the readers finish.
            _kill_group(pgid)
    finally:
        _kill_group(pgid)
        with anyio.CancelScope(shield=True):
            await process.wait()
            await process.aclose()
        _live_groups.discard(pgid)
    return ProcessOutcome(
        returncode=None if timed_out else process.returncode,
        timed_out=timed_out,
        stdout=out.text(),
        stderr=err.text(),
        duration=time.perf_counter() - started,
    )
