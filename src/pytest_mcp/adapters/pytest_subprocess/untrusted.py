"""Opening a file a test could have written (a run's report, its warden's, the probe's facts, testmon's lock).

Everything a run leaves in its private directory is untrusted input, with or without --sandbox: a test
can replace a file there by a FIFO (an open that blocks the event loop, and with it every client),
a link to /dev/zero (a read without end) or to a file of the user's. So each such file is opened
here, the one way: no link followed (O_NOFOLLOW), no blocking open (O_NONBLOCK), a regular file or
nothing (fstat), and read within a size bound.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO


class UntrustedFileRefused(OSError):
    """A file a run left is not one the server reads: a link, a FIFO, a device, or over its bound."""


_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def open_untrusted(path: Path, *, create: bool = False) -> BinaryIO:
    """`path` opened for reading (and appending, with `create`), if it is a regular file and not a link.

    Raises FileNotFoundError when it does not exist (and not `create`), UntrustedFileRefused when
    it is something else, naming what it is.
    """
    flags = (_FLAGS & ~os.O_RDONLY) | os.O_RDWR | os.O_CREAT | os.O_APPEND if create else _FLAGS
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UntrustedFileRefused(errno.ELOOP, f"{path.name} is a symbolic link", str(path)) from None
        if exc.errno == errno.ENXIO:  # a FIFO with no reader, opened for writing
            raise UntrustedFileRefused(exc.errno, f"{path.name} is not a regular file (a FIFO)", str(path)) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else "a device or socket"
            raise UntrustedFileRefused(errno.EINVAL, f"{path.name} is not a regular file ({kind})", str(path))
        os.set_blocking(fd, True)  # a regular file never blocks: ordinary reads from here on
        return os.fdopen(fd, "r+b" if create else "rb")
    except BaseException:
        os.close(fd)
        raise


def read_untrusted(path: Path, max_bytes: int) -> bytes:
    """The whole of `path`, opened as `open_untrusted` does; UntrustedFileRefused past `max_bytes`."""
    with open_untrusted(path) as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UntrustedFileRefused(errno.EFBIG, f"{path.name} is larger than {max_bytes:,} bytes", str(path))
    return data
