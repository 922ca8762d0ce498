"""pytest-mcp's warden: no process a run starts outlives it, even one that left its process group.

Loaded by file (standard library only, Python 3.9 and later) by the bootstrap and the probe,
in the target interpreter, before anything of the project is imported. `guard(path)` makes
this process a child subreaper (Linux, `prctl(PR_SET_CHILD_SUBREAPER)`) and forks: the child
returns and does the work (pytest, the probe); this process stays behind as the warden and
never returns. Every process the child starts, however it leaves the child's group or session
(`start_new_session=True`, `setsid()`, a double fork), stays a descendant of the warden: an
orphan is re-parented to the warden, not to init. When the child ends, however it ends (exit,
crash, `os._exit`), the warden kills and reaps whatever is left, writes the command lines of
what it stopped (and the signal that ended the child, if one did) to `path` as JSON, and exits
as the child did (its code, or its signal).

When the runner kills a run instead (timeout, cancellation, shutdown), the warden is alive and
still holds every descendant, so the runner finds them all under it (process.py).

Where the subreaper cannot be had (not Linux, prctl refused), `guard` does nothing and
returns "process_group": the run is then contained by its process group only.
"""

import contextlib
import json
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
COMMAND_CHARS = 80
"""A stopped process is named by its command line, cut to this many characters."""
# How execnet starts a pytest-xdist worker: a test's fork in a worker has this command line.
_XDIST_WORKER = b"import sys;exec(eval(sys.stdin.readline()))"


def _become_subreaper():
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except Exception:  # no libc to load, no prctl symbol: fall back to the process group
        return False


def guard(path, forward=()):
    """Return "subreaper" in the child that goes on, or "process_group" when there is no warden.

    `forward`: signals the warden passes on to the child (the runner signals the warden, the
    process it started).
    """
    if not _become_subreaper():
        return "process_group"
    try:
        child = os.fork()
    except OSError:
        return "process_group"
    if child == 0:
        return "subreaper"
    try:
        _watch(child, path, forward)
    finally:
        os._exit(70)  # only if the warden itself failed: EX_SOFTWARE


def _watch(child, path, forward):
    # SIGTERM and SIGHUP too: someone who stops the warden that way means the run, which then ends
    # in order and leaves the warden to stop what is left.
    for signum in {*forward, signal.SIGTERM, signal.SIGHUP}:
        signal.signal(signum, lambda received, _frame: _signal(child, received))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's ^C reaches the child through its group
    while True:  # orphans that end during the run are reaped as they end, not left as zombies
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            break
    stopped = _stop_children()
    with open(path, "w") as out:
        # The signal too: a sandbox (bubblewrap) passes a death by signal N on as exit code 128+N.
        json.dump({"stopped": stopped, "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None}, out)
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        with contextlib.suppress(Exception):  # pytest's crash may have dumped core; one is enough
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)  # a signal that does not kill (SIGCHLD, SIGWINCH): say so all the same
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70)


def _signal(pid, signum):
    with contextlib.suppress(OSError):
        os.kill(pid, signum)


def _stop_children():
    """Kill and reap every child (each orphaned descendant is one), until none is left.

    A killed child's own children are re-parented here in turn, so each round kills one
    generation; a process is counted once, named by its command line.
    """
    me = os.getpid()
    stopped = {}
    while True:
        for pid in _live_children(me):
            if pid not in stopped:
                stopped[pid] = _command(pid)
            _signal(pid, signal.SIGKILL)
        reaped = False
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return list(stopped.values())
            if pid == 0:
                break
            reaped = True
        if not reaped:
            time.sleep(0.001)  # killed, not yet dead: the kernel has to schedule them


def _live_children(me):
    """The pids of this process's children that are not zombies."""
    try:
        with open("/proc/%d/task/%d/children" % (me, me)) as listing:
            pids = [int(pid) for pid in listing.read().split()]
    except OSError:  # a kernel without CONFIG_PROC_CHILDREN: scan every process
        pids = [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]
    children = []
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid, "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == me and fields[0] != b"Z":
            children.append(pid)
    return children


def _cmdline(pid):
    with open("/proc/%s/cmdline" % pid, "rb") as cmdline:
        return cmdline.read()


def _one_line(raw):
    """A process's own text (its command line, the name it set with prctl) as one line of words.
    (The server quotes it through domain.text.one_line too, which also replaces control characters.)"""
    return " ".join(raw.decode("utf-8", "replace").split())


def _command(pid):
    try:
        raw = _cmdline(pid)
        # A test's fork that never exec'd runs our own command line, the bootstrap's source: say what it is.
        if raw == _cmdline("self"):
            return "[a fork of pytest]"
        if _XDIST_WORKER in raw:
            return "[a fork of a pytest-xdist worker]"
        command = _one_line(raw.replace(b"\0", b" "))
        if not command:  # a kernel thread's, or a process that emptied its argv: the name it gave itself
            with open("/proc/%d/comm" % pid, "rb") as comm:
                command = "[%s]" % _one_line(comm.read())
    except OSError:
        command = "[pid %d]" % pid
    return command if len(command) <= COMMAND_CHARS else command[: COMMAND_CHARS - 3] + "..."
