"""The `--sandbox` for test code: every pytest process a run starts, contained by bubblewrap (ADR 0021).

Files are read-only but for the project root (less its `.git` and virtual environments) and the
run's private directory; `/tmp` is a bounded tmpfs; `$HOME` is an empty directory, but for the
interpreter's own directories under it, resolved once from files no test has written; variables
that look like credentials are withheld; the network is a namespace with only its own loopback
unless `--sandbox-network`; the processes are in a PID namespace of their own, with that
namespace's `/proc`, and hold no capability. Where bubblewrap cannot do this (not Linux, no
`bwrap`, user namespaces refused) the server refuses to start.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_mcp.adapters.pytest_subprocess.untrusted import open_untrusted, read_untrusted

SANDBOX_TMP = "/tmp"  # noqa: S108 - inside the sandbox: the run's own private directory, bound there
"""Where a sandboxed run's private temporary directory appears."""
INSTALL_HINT = "apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora), pacman -S bubblewrap"
_CHECK_SECONDS = 10.0
# bwrap prints its own failures (exec, mounts) on stderr with this prefix, and exits 1.
BWRAP_ERROR_PREFIX = "bwrap: "


class SandboxUnavailable(Exception):
    """`--sandbox` was asked for where it cannot be had: the message names the setting, the reason and the fix."""


SECRET_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL")
"""A variable whose name holds one of these (in any case) is withheld from sandboxed tests, unless named."""
DEFAULT_TMP_MIB = 512


@dataclass(frozen=True)
class BubblewrapSandbox:
    """How pytest's command is wrapped: `bwrap OPTIONS -- python ...`, and the environment it gets.

    `network`: True shares the host's network (`--sandbox-network`); False gives a namespace with
    only its own loopback. `writable`: paths under the root made writable again (`--sandbox-writable`:
    the root's `.git` and virtual environments are read-only). `passed_env`: variables passed on
    although their names look like credentials (`--sandbox-env`). `tmp_mib`: the size of /tmp.
    """

    bwrap: str
    network: bool = False
    home: Path = field(default_factory=Path.home)
    version: str = ""
    writable: tuple[Path, ...] = ()
    passed_env: tuple[str, ...] = ()
    tmp_mib: int = DEFAULT_TMP_MIB
    # The interpreter's directories, per interpreter: resolved by its first sandboxed process, before
    # any test of this server ran, and kept. What a later test writes (a `home =` line, a venv's
    # files) never changes what is mounted (ADR 0021).
    _environments: dict[str, tuple[Path, ...]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def description(self) -> str:
        """The sandbox in one line, as check_environment and a run's `command` show it."""
        net = "the host's network (--sandbox-network)" if self.network else "loopback only"
        writable = f" (writable too: {', '.join(map(str, self.writable))})" if self.writable else ""
        return (
            f"bubblewrap: read-only but the root (not its .git nor its virtualenv{writable}) and a private "
            f"/tmp of {self.tmp_mib} MiB, $HOME empty but for the interpreter's directories, network: {net}"  # noqa: S108
        )

    def command_prefix(self) -> tuple[str, ...]:
        """What a run's `command` shows before the interpreter: the sandbox, not its every mount."""
        return ("bwrap", f"<pytest-mcp --sandbox{'-network' if self.network else ''}: {self.description}>", "--")

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """`environ` less the variables `withheld` names."""
        withheld = set(self.withheld(environ))
        return {name: value for name, value in environ.items() if name not in withheld}

    def withheld(self, environ: Mapping[str, str]) -> tuple[str, ...]:
        """The names in `environ` that look like credentials and were not passed on by name.

        PATH, the locale and PYTHON* always pass: what an interpreter needs to start as the user
        would have it is never a credential (PYTHON_KEYRING_BACKEND names a backend, not a key).
        """
        passed = {name.upper() for name in self.passed_env}
        return tuple(sorted(name for name in environ if _credential(name) and name.upper() not in passed))

    def wrap(self, argv: Sequence[str], *, root: Path, private_dir: Path, writable: Sequence[Path] = ()) -> list[str]:
        """`argv` (an interpreter and its arguments) as the sandbox runs it, in `root`.

        `private_dir` is bound where it is; `writable` are more directories the run writes
        (testmon's data, outside the project).
        """
        options = ["--unshare-all", "--die-with-parent", "--cap-drop", "ALL"]
        if self.network:
            options.append("--share-net")
        options += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run"]
        if self.network:
            resolv = os.path.realpath("/etc/resolv.conf")  # often under /run (systemd-resolved)
            if resolv.startswith("/run/") and os.path.exists(resolv):
                options += ["--ro-bind", resolv, resolv]
        # In memory and bounded: a test that fills it gets ENOSPC, and the sandbox plugin says why.
        options += ["--size", str(self.tmp_mib * 1024 * 1024), "--tmpfs", SANDBOX_TMP]
        hidden = [Path(SANDBOX_TMP), Path("/run")]
        if self.home != Path("/"):  # after /tmp: a home under /tmp is emptied, not lost
            hidden.insert(0, self.home)
            options += ["--tmpfs", str(self.home)]
        environments = self._environments.get(argv[0])
        if environments is None:
            environments = self._environments.setdefault(argv[0], tuple(python_environments(Path(argv[0]))))
        readable = readable_directories(environments, hidden)
        options += _read_only(path for path in readable if not _inside(path, root))
        options += ["--bind", str(root), str(root)]
        if self.home != root and _inside(self.home, root):  # a home inside the root is hidden all the same
            options += ["--tmpfs", str(self.home), *_read_only(p for p in readable if _inside(p, self.home))]
        # What runs later outside the sandbox: git's hooks and configuration, the project's environments.
        kept = [root / ".git", root / ".venv", root / "venv", *(e for e in environments if _inside(e, root))]
        options += _read_only(_sorted(p for p in dict.fromkeys(kept) if _bindable(p, root)))
        options += ["--bind", str(private_dir), str(private_dir)]
        for directory in (*writable, *(p for p in self.writable if os.path.lexists(p))):
            options += ["--bind", str(directory), str(directory)]
        options += ["--setenv", "TMPDIR", SANDBOX_TMP, "--chdir", str(root)]
        return [self.bwrap, *options, "--", *argv]


def _credential(name: str) -> bool:
    upper = name.upper()
    if upper in ("PATH", "LANG", "LANGUAGE") or upper.startswith(("LC_", "PYTHON")):
        return False
    return any(word in upper for word in SECRET_WORDS)


def _read_only(directories: Iterable[Path]) -> list[str]:
    return [option for path in directories for option in ("--ro-bind", os.path.realpath(path), str(path))]


def _bindable(path: Path, root: Path) -> bool:
    """Whether `path` exists and is, link resolved, inside the root (elsewhere it is read-only already)."""
    return os.path.lexists(path) and _inside(Path(os.path.realpath(path)), Path(os.path.realpath(root)))


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def _sorted(paths: Iterable[Path]) -> list[Path]:
    # The deepest last: bwrap mounts in order, and a directory inside another must come after it.
    return sorted(paths, key=lambda path: len(path.parts))


_MAX_CONFIG_BYTES = 64 * 1024


def python_environments(python: Path) -> list[Path]:
    """The installations `python` runs from, as Python itself finds them: canonical, each a real prefix.

    Each environment along the executable's symlinks (a virtualenv, the interpreter it was made
    from: pyenv's `versions/3.11` and `versions/3.11.7`, uv's `cpython-*`) and the base that the
    *first* `home =` of a `pyvenv.cfg` names (Python reads no other). A `--python` that is a script
    (`#!/path/to/python`, a wrapper) is followed to the interpreter its first line names. A
    directory counts only when it is a prefix Python would use: a virtualenv (`pyvenv.cfg`) or an
    installation with its standard library (`lib/python3.*/os.py`); a path with `..` never does.
    `.pth` files add nothing: any process that can write site-packages can write them.
    """
    found: list[Path] = []

    def add(directory: Path) -> None:
        if ".." in directory.parts or not _is_prefix(directory):
            return
        for candidate in (directory, Path(os.path.realpath(directory))):
            if candidate not in found:
                found.append(candidate)

    link = Path(os.path.abspath(_shebang(python) or python))
    for _ in range(40):  # the kernel's own limit on symlinks followed
        add(link.parent.parent)  # ENV/bin/python: ENV
        home = _first_home(link.parent.parent / "pyvenv.cfg")
        if home is not None:
            add(home.parent)
        if not link.is_symlink():
            break
        link = Path(os.path.normpath(link.parent / os.readlink(link)))
    return _sorted(found)


def readable_directories(environments: Iterable[Path], hidden: Sequence[Path]) -> list[Path]:
    """Of `environments` (and the user's site-packages), those in a hidden place (the home, /tmp), never
    one of them nor a directory above one: those are what a sandboxed interpreter needs bound back."""
    places = [*hidden, *(Path(os.path.realpath(h)) for h in hidden)]
    user_sites = Path.home().glob(".local/lib/python*/site-packages")
    kept = []
    for path in (*environments, *user_sites):
        real = Path(os.path.realpath(path))
        if any(_inside(place, candidate) for candidate in (path, real) for place in places):
            continue  # the home itself, or above it: that would show the whole home
        if any(_inside(path, place) for place in places) and path not in kept:
            kept.append(path)
    return _sorted(kept)


def interpreter_directories(python: Path, hidden: Sequence[Path]) -> list[Path]:
    """The directories in `hidden` places (the home, /tmp) that `python` needs to start and import its packages."""
    return readable_directories(python_environments(python), hidden)


def _is_prefix(directory: Path) -> bool:
    return (directory / "pyvenv.cfg").is_file() or any(directory.glob("lib/python3*/os.py"))


def _first_home(config: Path) -> Path | None:
    """The first `home =` of a `pyvenv.cfg`, as Python reads it (3.11's getpath: the key in any case)."""
    try:
        text = read_untrusted(Path(os.path.realpath(config)), _MAX_CONFIG_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, equals, value = line.partition("=")
        if equals and key.strip().lower() == "home":
            return Path(value.strip()) if value.strip() else None
    return None


def _shebang(path: Path) -> str | None:
    """The interpreter a script's `#!` line names (through `env`, looked up on PATH), if it is a script."""
    try:
        with open_untrusted(Path(os.path.realpath(path))) as script:
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
    writable: Sequence[Path] = (),
    passed_env: Sequence[str] = (),
    tmp_mib: int = DEFAULT_TMP_MIB,
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
    return BubblewrapSandbox(
        bwrap=bwrap,
        network=network,
        version=version,
        writable=tuple(writable),
        passed_env=tuple(passed_env),
        tmp_mib=tmp_mib,
    )
