"""Run one command in its own process group with a deadline, bounded output and no orphans."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from pytest_mcp.adapters.pytest_subprocess.containment import kill_group, stop_tree, until_gone
from pytest_mcp.ports.worker import Inline, Worker
from pytest_mcp.settings import ENV_PREFIX

PROCESS_THREADS = 4
"""Threads that start processes and sweep /proc for a runner's calls. Starting a process holds its
thread until the child has exec'd (a wait, not work: the GIL is free meanwhile), so 20 runs
starting at once queue for a few of them. A fixed few: a thread made for each run would be started
by the event loop, which waits until the new thread runs, a stall of its own on a loaded machine."""


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


# pytest flushes a progress character after every test. Read as it comes, that is one event-loop
# wake-up per test (about 40 µs each, 0.4 s of server CPU for 10,000 tests, taken from the cores
# pytest runs on). So a pipe that trickles is read once a tick, a tick that doubles while the
# trickle lasts, up to _LONGEST_TICK; a pipe that floods (a read filled _FLOOD) is read as it
# comes, so a fast writer never waits on us; and a silent pipe is waited on, never polled. A wake-up
# costs the loop 0.1 to 0.2 ms: 20 runs ticking every 50 ms on two pipes each were 800 a second,
# most of the loop's work while they ran (issue 46).
_TICK_SECONDS = 0.05
_LONGEST_TICK = 0.5
_CHUNK = 64 * 1024
_FLOOD = 16 * 1024
_BURST = 16 * _CHUNK
# Between two ticks a writer must not fill the pipe: once it is full, pytest blocks until the next
# tick. A default pipe holds 64 KiB, which `--collect-only` at 10,000 tests fills about ten times
# over (its node ids come all at once), and `-v` runs nearly as fast. Where Linux allows it
# (/proc/sys/fs/pipe-max-size, 1 MiB by default), each pipe holds 1 MiB: 2 MB/s before a writer
# waits within the longest tick, and past that the flood rule reads as it comes. A pipe that could
# not be widened keeps the first tick.
_PIPE_BYTES = 1024 * 1024
# How long a process that overran is given to answer `dump_signal` before its group is killed.
# faulthandler writes its dump from the signal handler itself, in well under a millisecond; the
# rest is for a loaded machine to schedule it.
_DUMP_SECONDS = 0.2


def _widen(fd: int) -> float:
    """Let the pipe hold _PIPE_BYTES, where the platform and the user's pipe quota allow; return
    the longest tick its capacity affords."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only
    if set_size is None:
        return _TICK_SECONDS
    try:
        fcntl.fcntl(fd, set_size, _PIPE_BYTES)
    except OSError:  # over pipe-max-size or the user's quota: keep the default, and the first tick
        return _TICK_SECONDS
    return _LONGEST_TICK


def _read_available(fd: int, buffer: BoundedBuffer) -> tuple[int, bool]:
    """Feed `buffer` with what the non-blocking pipe holds now; return (bytes read, end of file)."""
    read = 0
    while read < _BURST:  # then let the loop breathe, and come back at once (a flood)
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return read, False
        if not chunk:
            return read, True
        buffer.feed(chunk)
        read += len(chunk)
    return read, False


async def _read_in_ticks(fd: int, buffer: BoundedBuffer, longest_tick: float, reading: anyio.CancelScope) -> None:
    """Read a pipe until end of file, or until `reading` is cancelled and what it held then is read.

    `reading` is cancelled once the process group is dead: nothing can write any more (a process
    that left the group was stopped by its warden, or the runner, first), so the call never waits
    on a pipe someone else keeps open.
    """
    tick = _TICK_SECONDS
    with reading:
        while True:
            read, eof = _read_available(fd, buffer)
            if eof:
                return
            if 0 < read < _FLOOD:  # a trickle: let the next tick's worth gather
                await anyio.sleep(tick)
                tick = min(2 * tick, longest_tick)
                continue
            if read:  # a flood: as it comes, and a short tick when it turns to a trickle
                tick = _TICK_SECONDS
            await anyio.wait_readable(fd)
    while True:  # the group is dead: what the pipe holds is all there will be
        read, eof = _read_available(fd, buffer)
        if eof or read < _BURST:
            return
        await anyio.lowlevel.checkpoint()


OWN_SETTINGS = ENV_PREFIX
"""Variables named so (in any case) are the server's own settings, its token and its run store's
password among them: no process it starts needs them, so none inherits any."""
_MAX_ARG_STRLEN = 32 * 4096  # Linux: the longest single argument or environment string
_POINTER = 8


class _Started:
    """A process started in a thread, and waited for without one.

    Starting a process blocks its caller until the child has exec'd (vfork), which on a loaded
    machine waits for the child to be scheduled: tens of milliseconds, once held by the event
    loop at every run's start (issue 46), with asyncio's watcher thread started for each process
    on top. Here a thread starts it, and its end is a pidfd becoming readable (Linux 5.3+), or,
    where there is none, a poll every _POLL_SECONDS.
    """

    _POLL_SECONDS = 0.005

    def __init__(self, popen: subprocess.Popen[Any]) -> None:
        self._popen = popen
        self.pid = popen.pid
        self._pidfd: int | None = None
        with contextlib.suppress(AttributeError, OSError):  # no pidfd_open (macOS, Linux before 5.3)
            self._pidfd = os.pidfd_open(popen.pid)

    @classmethod
    async def start(cls, popen: Callable[[], subprocess.Popen[Any]], threads: Worker) -> _Started:
        # Shielded: a cancellation waits for the thread, so that the process it started is never
        # lost; it takes effect at the caller's next await, which kills the process's group.
        with anyio.CancelScope(shield=True):
            started = await threads.run(popen)
        return cls(started)

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        while (code := self._popen.poll()) is None:
            if self._pidfd is not None:
                await anyio.wait_readable(self._pidfd)
            else:
                await anyio.sleep(self._POLL_SECONDS)
        return code

    def close(self) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


class CommandTooLong(Exception):
    """The command and its environment are more than the OS passes to a new process (E2BIG)."""

    def __init__(self, size: int, limit: int, longest: int) -> None:
        self.size, self.limit, self.longest = size, limit, longest
        if longest > _MAX_ARG_STRLEN:
            reason = f"one of its strings is {longest:,} bytes, and the system passes at most {_MAX_ARG_STRLEN:,}"
        else:
            reason = f"they come to {size:,} bytes, and the system passes at most {limit:,} to a new process"
        super().__init__(reason)


def child_environment() -> dict[str, str]:
    """The environment every process the server starts begins with (runs, collections, probes, the
    check for pytest on PATH): the server's own, unchanged, but for its own settings (`OWN_SETTINGS`).

    A rule, not a list of names: a setting added later is not inherited either."""
    return {name: value for name, value in os.environ.items() if not name.upper().startswith(OWN_SETTINGS)}


def check_command_size(argv: Sequence[str], env: dict[str, str]) -> None:
    """Raise CommandTooLong when execve would refuse `argv` with `env` (E2BIG), before trying."""
    strings = [os.fsencode(part) for part in argv] + [os.fsencode(f"{k}={v}") for k, v in env.items()]
    size = sum(len(string) + 1 + _POINTER for string in strings) + 2 * _POINTER
    limit = os.sysconf("SC_ARG_MAX")
    longest = max(len(string) for string in strings)
    if size > limit or (sys.platform == "linux" and longest > _MAX_ARG_STRLEN):
        raise CommandTooLong(size, limit, longest)


_SHARE_RETRY_SECONDS = 0.1
"""Linux lets a process without CAP_SYS_ADMIN set an autogroup's nice once a tenth of a second, machine-wide."""


async def give_way(pid: int, nice: int, threads: Worker) -> None:
    """Give the session `pid` leads the nice value `nice` under Linux's autogroup, which shares the CPU
    among sessions before their processes: 20 runs, 20 sessions, would each weigh as much as the
    server's whole session, whose event loop then waits for a core (ADR 0022). Tried until it is done,
    once every _SHARE_RETRY_SECONDS while Linux refuses for the rate (EAGAIN); where there is nothing to
    set (no autogroup, or another owner's process such as a setuid bubblewrap), the process's own nice,
    which the bootstrap set, is what orders the run."""
    while True:  # Linux's rate, which no event announces
        if await threads.run(_autogroup_nice, pid, nice):
            return
        await anyio.sleep(_SHARE_RETRY_SECONDS)


def _autogroup_nice(pid: int, nice: int) -> bool:
    """Whether it is done, or there is nothing more to try; False while Linux asks to try again later."""
    try:
        with open(f"/proc/{pid}/autogroup", "w", encoding="ascii") as handle:
            handle.write(str(nice))
    except OSError as exc:
        return exc.errno != errno.EAGAIN
    return True


async def run_in_process_group(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    limits: OutputLimits,
    while_running: Callable[[], Awaitable[None]] | None = None,
    dump_signal: signal.Signals | None = None,
    environment: Callable[[dict[str, str]], dict[str, str]] | None = None,
    threads: Worker | None = None,
    share: int | None = None,
) -> ProcessOutcome:
    """Run `argv` with no stdin, in a new session, and kill its whole tree when it ends.

    The group is killed on every way out: normal exit (stragglers a test left behind),
    timeout, and cancellation of the calling task; on the last two, every descendant of the
    process first, which a warden (`containment`) keeps under it even outside the group. The
    environment is the server's, without its own settings (`child_environment`). Raises
    CommandTooLong, before starting anything, when the OS would refuse the command as too
    long, and OSError if it cannot be started at all.
    `while_running`, if given, runs alongside and is cancelled when the process ends.
    `dump_signal`, if given, is sent to the process when the timeout passes, _DUMP_SECONDS
    before its group is killed, so that it can say where it was (on stderr). `environment`, if
    given, narrows that environment further (the sandbox's policy on credentials).
    `threads` start the process and sweep /proc when its tree is stopped (PROCESS_THREADS, shared
    by a runner's calls); without them, that is done where the caller is. `share`, if given, is the nice
    value of the new session's autogroup (`give_way`): the process's own nice orders it only among
    the processes of its session.
    """
    threads = threads or Inline()
    env = child_environment()
    if environment is not None:
        env = environment(env)
    check_command_size(argv, env)
    out = BoundedBuffer(limits.stdout_head, limits.stdout_tail)
    err = BoundedBuffer(limits.stderr_head, limits.stderr_tail)
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    try:
        longest_ticks = []
        for fd in (out_read, err_read):
            os.set_blocking(fd, False)
            longest_ticks.append(_widen(fd))
        started = time.perf_counter()
        try:
            process = await _Started.start(
                functools.partial(
                    subprocess.Popen,
                    list(argv),
                    stdin=subprocess.DEVNULL,
                    stdout=out_write,
                    stderr=err_write,
                    cwd=cwd,
                    env=env,
                    start_new_session=True,
                ),
                threads,
            )
        except OSError as exc:
            if exc.errno == errno.E2BIG:  # our estimate missed it; say what it is all the same
                raise CommandTooLong(0, os.sysconf("SC_ARG_MAX"), 0) from exc
            raise
        finally:
            os.close(out_write)
            os.close(err_write)
        pgid = process.pid  # a new session makes the child its own group leader
        timed_out = False
        killed: set[int] = set()
        reading = (anyio.CancelScope(), anyio.CancelScope())
        try:
            async with anyio.create_task_group() as readers:
                readers.start_soon(_read_in_ticks, out_read, out, longest_ticks[0], reading[0])
                readers.start_soon(_read_in_ticks, err_read, err, longest_ticks[1], reading[1])
                companion = anyio.CancelScope()
                if while_running is not None:

                    async def accompany() -> None:
                        with companion:
                            await while_running()

                    readers.start_soon(accompany)
                sharing = anyio.CancelScope()
                if share is not None:

                    async def yield_share() -> None:
                        with sharing:
                            await give_way(pgid, share, threads)

                    readers.start_soon(yield_share)
                with anyio.move_on_after(timeout) as deadline:
                    await process.wait()
                companion.cancel()
                sharing.cancel()
                timed_out = deadline.cancelled_caught
                if timed_out and dump_signal is not None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(process.pid, dump_signal)
                    with anyio.move_on_after(_DUMP_SECONDS):
                        await process.wait()
                # Whether pytest exited or overran, nothing it started may outlive it; once the
                # group is dead, the readers take what is left in the pipes and finish. A run that
                # ended by itself had its warden stop its descendants; one that overran has not.
                if process.returncode is None:
                    killed = await threads.run(stop_tree, pgid)
                kill_group(pgid)
                for scope in reading:
                    scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                if process.returncode is None:  # cancelled while it ran: its warden is alive, and holds the tree
                    killed = await threads.run(stop_tree, pgid)
                kill_group(pgid)
                await process.wait()
                process.close()
                # The port's promise: nothing the run started outlives the call, grandchildren
                # and processes that left the group included, before the caller (or a
                # cancellation) goes on.
                await until_gone(pgid, killed, threads)
    finally:
        os.close(out_read)
        os.close(err_read)
    return ProcessOutcome(
        returncode=None if timed_out else process.returncode,
        timed_out=timed_out,
        stdout=out.text(),
        stderr=err.text(),
        duration=time.perf_counter() - started,
    )
