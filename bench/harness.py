"""What every measurement shares: paths, one environment, venvs, a client on a spawned server, processes, results.

The measurements (`startup.py`, `overhead.py`, `memory.py`, `peers.py`) and the scripts beside
them import these; `run.py` plays them together.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CACHE = BENCH / ".cache"
RESULTS = BENCH / "results"
TARGET_PYTHON = Path(sys.executable)  # the project venv: raw pytest, pytest-mcp and every peer's pytest
TARGET_BIN = TARGET_PYTHON.parent
OURS = "pytest-mcp"
AGAIN = "raw again"  # the floor measured a second time in the same round: the noise floor
BARE_AGAIN = "bare SDK server again: the noise floor"


def bench_env() -> dict[str, str]:
    """One environment for every process compared: the target venv first on PATH, no PYTEST_* knobs.

    Plugin autoload stays ON everywhere (PYTEST_DISABLE_PLUGIN_AUTOLOAD unset): two peers need the
    autoloaded pytest-json-report plugin, so disabling it would break them, not level the field.
    """
    drop = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith(("PYTEST_", "COV_"))}
    env["PATH"] = f"{TARGET_BIN}{os.pathsep}{env.get('PATH', os.defpath)}"
    return env


def python312() -> str | None:
    """An interpreter for mcp-pytest-runner (Python >= 3.12) that actually runs (pyenv shims may not)."""
    candidates = [str(path) for path in sorted(Path.home().glob(".pyenv/versions/3.1[23]*/bin/python"))]
    candidates += [found for name in ("python3.12", "python3.13") if (found := shutil.which(name))]
    for candidate in candidates:
        probe = subprocess.run(
            [candidate, "-c", "import sys; sys.exit(sys.version_info < (3, 12))"], capture_output=True, check=False
        )
        if probe.returncode == 0:
            return candidate
    return None


def ensure_venv(name: str, requirements: Sequence[str], python: str, stamp_extra: str = "") -> Path:
    """A venv under bench/.cache holding `requirements`, created once (a stamp records what is in it)."""
    venv = CACHE / name
    stamp = venv / ".bench-requirements"
    wanted = "\n".join([*requirements, stamp_extra])
    if stamp.exists() and stamp.read_text() == wanted:
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    print(f"  installing {' '.join(requirements)} into bench/.cache/{name}", flush=True)
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    install = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *requirements]
    done = subprocess.run(install, capture_output=True, text=True, check=False)
    (venv / "pip-install.log").write_text(done.stdout + done.stderr)
    if done.returncode:
        raise RuntimeError(f"pip install failed for {name}; see {venv / 'pip-install.log'}")
    stamp.write_text(wanted)
    return venv


def source_digest() -> str:
    digest = hashlib.sha256((REPO / "pyproject.toml").read_bytes())
    for path in sorted((REPO / "src").rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def children() -> set[int]:
    """Process ids whose parent is this process (Linux /proc)."""
    me = os.getpid()
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            found.add(int(entry.name))
    return found


def rss_mb(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    match = re.search(r"VmRSS:\s+(\d+) kB", status)
    return int(match.group(1)) / 1024 if match else None


@dataclass
class Session:
    client: Client
    pid: int | None


@contextlib.asynccontextmanager
async def connect(params: StdioServerParameters, log_name: str) -> AsyncIterator[Session]:
    """An SDK 2.x client (legacy handshake) on a spawned server; its stderr goes to a log file."""
    logs = CACHE / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / f"{log_name}.log").open("a") as errlog:
        before = children()
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None) as client:
            spawned = children() - before
            yield Session(client, min(spawned) if len(spawned) == 1 else None)


async def timed_process(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> float:
    """Raw pytest as the physical floor: its output goes to /dev/null, which costs nobody a read."""
    started = time.perf_counter()
    await anyio.run_process(
        list(argv), cwd=cwd, env=env, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - started


Nested = defaultdict[str, defaultdict[str, list[float]]]


def _nested() -> Nested:
    return defaultdict(lambda: defaultdict(list))


@dataclass
class Results:
    config: dict[str, Any] = field(default_factory=dict)
    startup: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    runs: Nested = field(default_factory=_nested)  # suite -> runner -> seconds
    discovery: Nested = field(default_factory=_nested)
    sizes: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))
    discovery_sizes: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))
    counts: dict[str, dict[str, dict[str, int | None]]] = field(default_factory=lambda: defaultdict(dict))
    errors: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    rss_after_run: Nested = field(default_factory=_nested)
    rss_calls: list[tuple[int, float]] = field(default_factory=list)


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples) if samples else float("nan")


def paired_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    pairs = [a / b for a, b in zip(numerator, denominator, strict=False) if b]
    return statistics.median(pairs) if pairs else float("nan")


def size_text(size: int | None) -> str:
    return "n/a" if size is None else f"{size:,} (≈ {size // 4:,})"


async def healthy(url: str, tries: int = 600) -> None:
    """Wait until the HTTP server at `url` (its /mcp endpoint) answers /healthz 200, 0.05 s apart."""
    import httpx2

    async with httpx2.AsyncClient() as http:
        for _ in range(tries):
            try:
                if (await http.get(url.replace("/mcp", "/healthz"))).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            await anyio.sleep(0.05)
    raise SystemExit("the server did not come up")


def stopped(process: subprocess.Popen[Any]) -> None:
    """SIGTERM, then SIGKILL after 30 s."""
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def free_port() -> int:
    """A loopback port nothing listens on now (another process may take it before the server does).

    The tests start the server with `--port 0 --port-file`, which has no such race; the benches keep
    this because they also start baseline copies of the server older than `--port-file`."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_env(pythonpath: Path | None) -> dict[str, str]:
    """This environment without pytest's variables, plugin autoload off, and `pythonpath` first if given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return env
