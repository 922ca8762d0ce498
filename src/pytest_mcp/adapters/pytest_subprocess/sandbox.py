"""The `--sandbox` for test code: every pytest process a run starts, contained by bubblewrap (ADR 0021).

Files are read-only but for the project root and the run's private directory (its `/tmp`); `$HOME`
is an empty directory, but for the interpreter's own directories under it; the network is a
namespace with only its own loopback unless `--sandbox-network`; the processes are in a PID
namespace of their own, with that namespace's `/proc`, and hold no capability. Where bubblewrap
cannot do this (not Linux, no `bwrap`, user namespaces refused) the server refuses to start.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

SANDBOX_TMP = "/tmp"  # noqa: S108 - inside the sandbox: the run's own private directory, bound there
"""Where a sandboxed run's private temporary directory appears."""
INSTALL_HINT = "apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora), pacman -S bubblewrap"
_CHECK_SECONDS = 10.0
# bwrap prints its own failures (exec, mounts) on stderr with this prefix, and exits 1.
BWRAP_ERROR_PREFIX = "bwrap: "


class SandboxUnavailable(Exception):
    """`--sandbox` was asked for where it cannot be had: the message names the setting, the reason and the fix."""


@dataclass(frozen=True)
class BubblewrapSandbox:
    """How pytest's command is wrapped: `bwrap OPTIONS -- python ...`.

    `network`: True shares the host's network (`--sandbox-network`); False gives a namespace with
    only its own loopback.
    """

    bwrap: str
    network: bool = False
    home: Path = field(default_factory=Path.home)
    version: str = ""

    @property
    def description(self) -> str:
        """The sandbox in one line, as check_environment and a run's `command` show it."""
        net = "the host's network (--sandbox-network)" if self.network else "loopback only"
        return f"bubblewrap: read-only but the root and a private /tmp, $HOME empty, network: {net}"

    def command_prefix(self) -> tuple[str, ...]:
        """What a run's `command` shows before the interpreter: the sandbox, not its every mount."""
        return ("bwrap", f"<pytest-mcp --sandbox{'-network' if self.network else ''}: {self.description}>", "--")

    def wrap(self, argv: Sequence[str], *, root: Path, private_dir: Path, writable: Sequence[Path] = ()) -> list[str]:
        """`argv` (an interpreter and its arguments) as the sandbox runs it, in `root`.

        `private_dir` is bound where it is and its `tmp` at /tmp (created here); `writable` are
        more directories the run writes (testmon's data, outside the project).
        """
        private_tmp = private_dir / "tmp"
        private_tmp.mkdir(exist_ok=True)
        options = ["--unshare-all", "--die-with-parent", "--cap-drop", "ALL"]
        if self.network:
            options.append("--share-net")
        options += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run"]
        if self.network:
            resolv = os.path.realpath("/etc/resolv.conf")  # often under /run (systemd-resolved)
            if resolv.startswith("/run/") and os.path.exists(resolv):
                options += ["--ro-bind", resolv, resolv]
        options += ["--bind", str(private_tmp), SANDBOX_TMP]
        hidden = [Path(SANDBOX_TMP), Path("/run")]
        if self.home != Path("/"):  # after /tmp: a home under /tmp is emptied, not lost
            hidden.insert(0, self.home)
            options += ["--tmpfs", str(self.home)]
        readable = [path for path in interpreter_directories(Path(argv[0]), hidden) if not _inside(path, root)]
        options += _read_only(readable)
        options += ["--bind", str(root), str(root)]
        if self.home != root and _inside(self.home, root):  # a home inside the root is hidden all the same
            options += ["--tmpfs", str(self.home), *_read_only(p for p in readable if _inside(p, self.home))]
        options += ["--bind", str(private_dir), str(private_dir)]
        for directory in writable:
            options += ["--bind", str(directory), str(directory)]
        options += ["--setenv", "TMPDIR", SANDBOX_TMP, "--chdir", str(root)]
        return [self.bwrap, *options, "--", *argv]


def _read_only(directories: Iterable[Path]) -> list[str]:
    return [option for path in directories for option in ("--ro-bind", os.path.realpath(path), str(path))]


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def interpreter_directories(python: Path, hidden: Sequence[Path]) -> list[Path]:
    """The directories in `hidden` places (the home, /tmp) that `python` needs to start and import its packages.

    Each environment along the executable's symlinks (a virtualenv, the interpreter it was made
    from: pyenv, uv), the base named by a virtualenv's `pyvenv.cfg`, the directories a
    site-packages `.pth` file adds, and the user's site-packages. A `--python` that is a script
    (`#!/path/to/python`, a wrapper) is followed to the interpreter its first line names. A hidden
    place itself is never one (that would show the whole home).
    """
    found: list[Path] = []

    def add(directory: Path) -> None:
        for candidate in (directory, Path(os.path.realpath(directory))):
            if candidate not in found and candidate not in hidden and any(_inside(candidate, h) for h in hidden):
                found.append(candidate)

    link = Path(os.path.abspath(_shebang(python) or python))
    for _ in range(40):  # the kernel's own limit on symlinks followed
        add(link.parent.parent)  # ENV/bin/python: ENV
        config = link.parent.parent / "pyvenv.cfg"
        if config.is_file():
            for line in config.read_text(encoding="utf-8", errors="replace").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "home" and value.strip():
                    add(Path(value.strip()).parent)
        if not link.is_symlink():
            break
        link = Path(os.path.normpath(link.parent / os.readlink(link)))
    for environment in list(found):
        for site_packages in environment.glob("lib/python*/site-packages"):
            for pth in site_packages.glob("*.pth"):
                for line in pth.read_text(encoding="utf-8", errors="replace").splitlines():
                    entry = line.strip()
                    if entry.startswith("/") and os.path.isdir(entry):
                        add(Path(entry))
    for user_site in Path.home().glob(".local/lib/python*/site-packages"):
        add(user_site)
    # The deepest last: bwrap mounts in order, and a directory inside another must come after it.
    return sorted(found, key=lambda path: len(path.parts))


def _shebang(path: Path) -> str | None:
    """The interpreter a script's `#!` line names (through `env`, looked up on PATH), if it is a script."""
    try:
        with open(path, "rb") as script:
            first = script.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [word for word in words[1:] if not word.startswith("-")]
        return shutil.which(words[0]) if words else None
    return words[0] if words else None


def open_bubblewrap(
    network: bool,
    *,
    platform: str = sys.platform,
    which: Callable[[str], str | None] = shutil.which,
) -> BubblewrapSandbox:
    """The sandbox, after checking that bubblewrap can make one here; else SandboxUnavailable.

    The check runs `bwrap` once with the namespaces a run uses, so a kernel or a policy that
    refuses them (user namespaces off, AppArmor's restriction on Ubuntu 24.04) is found at
    start-up, not by the first run.
    """
    if not platform.startswith("linux"):
        raise SandboxUnavailable(
            f"sandbox: --sandbox runs tests under bubblewrap, which needs Linux; this is {platform}. "
            "Run the server on Linux (a container or VM will do), or serve without --sandbox "
            "(see ADR 0021 for macOS and Windows)"
        )
    bwrap = which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable(
            f"sandbox: --sandbox needs bubblewrap, and bwrap is not on PATH; install it: {INSTALL_HINT}"
        )
    probe = [bwrap, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/"]
    probe += ["--proc", "/proc", "--dev", "/dev", "--", "/bin/sh", "-c", "exit 0"]
    try:
        checked = subprocess.run(
            probe, capture_output=True, timeout=_CHECK_SECONDS, stdin=subprocess.DEVNULL, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"sandbox: {bwrap} could not be run ({exc})") from None
    if checked.returncode != 0:
        reason = checked.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SandboxUnavailable(
            f"sandbox: {bwrap} cannot create the sandbox here: {reason[-1] if reason else checked.returncode}. "
            "It needs user namespaces: allow them (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 "
            "also kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap), "
            "or run the server where they are allowed"
        )
    version = subprocess.run(
        [bwrap, "--version"], capture_output=True, timeout=_CHECK_SECONDS, check=False, text=True
    ).stdout.strip()
    return BubblewrapSandbox(bwrap=bwrap, network=network, version=version)
