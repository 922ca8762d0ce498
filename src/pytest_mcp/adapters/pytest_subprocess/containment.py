"""Stopping a run's whole process tree: its process group, and every descendant under its warden.

The process a runner starts is a warden (`_plugin/_pytest_mcp_warden.py`) where Linux allows
a child subreaper: whatever the run starts stays its descendant, in or out of its process
group, until the warden ends. So a run is stopped by killing every descendant of the warden
first, then the warden's group. Elsewhere only the group (and descendants still attached to
it) can be found.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio

from pytest_mcp.adapters.pytest_subprocess._plugin._pytest_mcp_protocol import WARDEN_REPORT
from pytest_mcp.adapters.pytest_subprocess.untrusted import read_untrusted
from pytest_mcp.ports.worker import Worker

Containment = Literal["subreaper", "process_group"]

# How long the processes of a killed run may take to die: SIGKILL takes effect only when the
# kernel next schedules each process, which on a loaded machine can take a while.
GONE_SECONDS = 2.0
# Sweeps of /proc while killing a tree: each finds what forked since the last (a killed
# process cannot fork any more), so two are the rule and more mean a fork storm.
_SWEEPS = 20
_MAX_WARDEN_BYTES = 4 * 1024 * 1024  # the warden lists at most a few hundred command lines


@dataclass(frozen=True)
class WardenReport:
    """How a finished run was contained, and the command lines of the processes its warden stopped."""

    containment: Containment
    stopped: tuple[str, ...] = ()
    signal: int | None = None  # the signal that killed pytest, as the warden saw it


def read_warden(private_dir: Path) -> WardenReport:
    """What the warden of a run that ended by itself wrote; a run without one had its group only."""
    try:
        written = json.loads(read_untrusted(private_dir / WARDEN_REPORT, _MAX_WARDEN_BYTES))
        stopped = written["stopped"]
        signalled = written.get("signal")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return WardenReport("process_group")
    signum = signalled if isinstance(signalled, int) and not isinstance(signalled, bool) else None
    return WardenReport("subreaper", tuple(str(command) for command in stopped), signum)


def _stat(pid: str) -> tuple[bytes, int, int] | None:
    """(state, ppid, pgrp) of a process from /proc, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after it.
            fields = stat.read().rsplit(b")", 1)[1].split()
        return fields[0], int(fields[1]), int(fields[2])
    except (OSError, IndexError, ValueError):
        return None


def _processes() -> dict[int, tuple[bytes, int, int]]:
    try:
        entries = os.listdir("/proc")
    except OSError:  # no /proc (macOS)
        return {}
    found = {}
    for entry in entries:
        if entry.isdigit() and (stat := _stat(entry)) is not None:
            found[int(entry)] = stat
    return found


def live_descendants(root: int) -> set[int]:
    """Every descendant of `root` that is not a zombie (empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    live: set[int] = set()
    for pid, (state, ppid, _) in _processes().items():
        children.setdefault(ppid, []).append(pid)
        if state != b"Z":
            live.add(pid)
    found: set[int] = set()
    stack = list(children.get(root, ()))
    while stack:
        pid = stack.pop()
        if pid not in found:
            found.add(pid)
            stack.extend(children.get(pid, ()))
    return found & live


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def stop_tree(root: int) -> set[int]:
    """SIGKILL every descendant of `root` (alive, not reaped: our child), then its group; return the pids.

    The descendants go first: while `root`, a subreaper, lives, every one of them stays under
    it. A pid found in /proc could in principle be reaped and reused between the sweep and the
    kill; the window is a few microseconds, and reaping is up to processes of the same tree.
    """
    killed: set[int] = set()
    for _ in range(_SWEEPS):
        found = live_descendants(root) - killed
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed |= found
    kill_group(root)
    return killed


def _alive(pgid: int, pids: set[int]) -> bool:
    """Whether a process of the group, or one of `pids`, is alive: not exited, and not a zombie."""
    try:
        os.killpg(pgid, 0)
        group_exists = True
    except ProcessLookupError:
        group_exists = False  # the common case: nothing is left, not even a zombie
    except PermissionError:
        return True
    if not group_exists and not pids:
        return False
    if not os.path.isdir("/proc"):  # no /proc (macOS): the group exists, so take it as alive
        return group_exists
    for pid in pids:  # a killed process not yet gone: found by its own file, not a sweep of every process
        stat = _stat(str(pid))
        if stat is not None and stat[0] != b"Z":
            return True
    return any(state != b"Z" and (pgrp == pgid or pid in pids) for pid, (state, _, pgrp) in _processes().items())


async def until_gone(pgid: int, pids: set[int], threads: Worker) -> None:
    """Return once nothing of the group and none of `pids` is alive, or after GONE_SECONDS."""
    with anyio.move_on_after(GONE_SECONDS):
        # The common case, nothing left of the group, is one system call; a sweep of /proc, when
        # the group or `pids` are left, opens a file per process: the `threads`' work, not the loop's.
        # Nothing signals the end of a process: it is polled.
        while (pids or _group_exists(pgid)) and await threads.run(_alive, pgid, pids):  # noqa: ASYNC110
            await anyio.sleep(0.005)


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
