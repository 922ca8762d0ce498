"""Where an affected run's pytest-testmon data lives, and the lock that keeps two runs of a project apart.

Unless the project keeps its own (the target side decides, `_pytest_mcp_testmon`), the data is
`$XDG_CACHE_HOME/pytest-mcp/testmon/<digest of the root's real path>/.testmondata` (XDG_CACHE_HOME
defaulting to ~/.cache): outside the project, one directory per project. testmon keeps it in SQLite;
two runs writing it at once would interleave their executions, so affected runs of one project take
turns, through an advisory lock on `<digest>.lock` beside that directory. Not in it: a sandboxed run
can write the data directory, and a `lock` there made a link or a FIFO once steered the server's
open (a file created anywhere, a run that hung); beside it, no test can reach the lock, and it is
opened as untrusted all the same.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import anyio

from pytest_mcp.adapters.pytest_subprocess.untrusted import open_untrusted

DATA_FILE = ".testmondata"
_POLL_SECONDS = 0.05


def data_directory(root: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The per-project cache directory for `root`, keyed by a digest of its real path."""
    env = os.environ if environ is None else environ
    cache = Path(env.get("XDG_CACHE_HOME") or Path(env.get("HOME") or Path.home()) / ".cache")
    digest = hashlib.sha256(os.path.realpath(root).encode("utf-8")).hexdigest()[:20]
    return cache / "pytest-mcp" / "testmon" / digest


def lock_file(directory: Path) -> Path:
    """The lock of a data directory: beside it, where no sandboxed run can write."""
    return directory.parent / f"{directory.name}.lock"


@contextlib.asynccontextmanager
async def taking_turns(directory: Path) -> AsyncIterator[None]:
    """Hold the directory's lock for the block; wait for it (cancellably) while another run holds it."""
    os.makedirs(directory, mode=0o700, exist_ok=True)  # a few microseconds: no thread for it
    with open_untrusted(lock_file(directory), create=True) as handle:  # never blocks: likewise
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                await anyio.sleep(_POLL_SECONDS)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
