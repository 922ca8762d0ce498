"""Benchmark pytest-mcp against raw pytest, a bare MCP SDK server and the other pytest MCP servers.

    .venv/bin/python bench/run.py              # the full run: about 12 minutes on 2 busy cores
    .venv/bin/python bench/run.py --quick      # 3 rounds, 1 peer round, 5 start-ups, 50 calls for RSS
    .venv/bin/python bench/run.py --baseline REV   # also pytest-mcp at commit REV: a before and an after

Writes bench/results/benchmark.md, benchmark.json and benchmark.png (see bench/README.md).
Every figure is a ratio to a floor measured in the same run, interleaved round by round in a
shuffled order, because absolute times drift on shared machines. Peers are installed on first
use, each in its own venv under bench/.cache/ (gitignored), as are matplotlib for the chart and
a clean, non-editable install of this repository for the user-facing start-up figure.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import distributions, version
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import CallToolResult

sys.path.insert(0, str(Path(__file__).resolve().parent))
import baseline
from suites import Suite, generate, generate_mixed

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CACHE = BENCH / ".cache"
RESULTS = BENCH / "results"
TARGET_PYTHON = Path(sys.executable)  # the project venv: raw pytest, pytest-mcp and every peer's pytest
TARGET_BIN = TARGET_PYTHON.parent
OURS = "pytest-mcp"
AGAIN = "raw again"  # the floor measured a second time in the same round: the noise floor
BARE_AGAIN = "bare SDK server again: the noise floor"
# On suites this small (at most about 1.5 s a run) the peers run in every round, not only in the
# first `--peer-rounds`: three samples cannot resolve a few per cent. It costs about 2 minutes;
# on the 10,000-test suites, where a peer's run takes 6 s, it would cost 6 more.
PEERS_EVERY_ROUND_UP_TO = 2000


def peer_rounds_for(suite: Suite, rounds: int, peer_rounds: int) -> int:
    return rounds if suite.tests <= PEERS_EVERY_ROUND_UP_TO else peer_rounds


COUNT_KEYS = ("passed", "failed", "errors", "skipped", "xfailed", "xpassed")


# --------------------------------------------------------------------------- environment


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


@dataclass(frozen=True)
class Peer:
    key: str
    requirement: str
    needs_312: bool = False


PEERS = (
    Peer("mcp-pytest-runner", "mcp-pytest-runner==0.2.1", needs_312=True),
    Peer("mcp-tools-py", "mcp-tools-py==0.1.10"),
    Peer("lovranran-mcp-test-runner", "lovranran-mcp-test-runner==0.1.0"),
)


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


# --------------------------------------------------------------------------- servers


@dataclass(frozen=True)
class ServerKind:
    """How to start one MCP server on a suite, which tool runs the tests, and how to read its counts."""

    key: str
    params: Callable[[Suite], StdioServerParameters]
    run_call: Callable[[Suite], tuple[str, dict[str, Any]]]
    counts: Callable[[CallToolResult], dict[str, int | None]]
    is_peer: bool = True


def structured_or_text_json(result: CallToolResult) -> dict[str, Any]:
    if isinstance(result.structured_content, dict):
        return result.structured_content
    for block in result.content:
        text = getattr(block, "text", None)
        if text:
            with contextlib.suppress(ValueError):
                loaded = json.loads(text)
                if isinstance(loaded, dict):
                    return loaded
    return {}


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") or "" for block in result.content)


def ours_counts(result: CallToolResult) -> dict[str, int | None]:
    """A count the answer leaves out is 0, the default its output schema states (ADR 0009)."""
    if result.structured_content is None or "summary" not in result.structured_content:
        return dict.fromkeys(COUNT_KEYS)
    summary = result.structured_content["summary"]
    return {key: summary.get(key, 0) for key in COUNT_KEYS}


def pytest_summary_counts(text: str) -> dict[str, int | None]:
    """Counts from pytest's own final line (`=== 3 failed, 7 passed in 0.2s ===`); None if absent."""
    lines = [line for line in text.splitlines() if re.search(r"\b(passed|failed|error|errors)\b.* in [\d.]+s", line)]
    if not lines:
        return dict.fromkeys(COUNT_KEYS)
    counts: dict[str, int | None] = dict.fromkeys(COUNT_KEYS, 0)
    for number, word in re.findall(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)", lines[-1]):
        counts["errors" if word.startswith("error") else word] = int(number)
    return counts


def mpr_counts(result: CallToolResult) -> dict[str, int | None]:
    summary = structured_or_text_json(result).get("summary", {})
    return {key: summary.get(key) for key in COUNT_KEYS}


def mtp_counts(result: CallToolResult) -> dict[str, int | None]:
    text = text_of(result)
    words = {
        "passed": "Passed",
        "failed": "Failed",
        "errors": "Error",
        "skipped": "Skipped",
        "xfailed": "Expected failures",
        "xpassed": "Unexpected passes",
    }
    if "Collected " in text:  # the all-pass summary: categories left out are zero
        return {key: int(m.group(1)) if (m := re.search(rf"{word}: (\d+)", text)) else 0 for key, word in words.items()}
    # The failure prompt states no counts; the failures it lists are all one can count.
    listed = len(set(re.findall(r"Test ID: (\S+) - outcome failed", text)))
    return {**dict.fromkeys(COUNT_KEYS), "failed": listed or None}


def lovranran_counts(result: CallToolResult) -> dict[str, int | None]:
    return pytest_summary_counts(str(structured_or_text_json(result).get("stdout", "")))


def server_kinds(
    peer_venvs: dict[str, Path], env: dict[str, str], before: tuple[str, Path] | None
) -> dict[str, ServerKind]:
    def ours(suite: Suite) -> StdioServerParameters:
        args = ["--root", str(suite.path), "--python", str(TARGET_PYTHON)]
        return StdioServerParameters(command=str(TARGET_BIN / "pytest-mcp"), args=args, env=env)

    kinds = {OURS: ServerKind(OURS, ours, lambda suite: ("execute_tests", {}), ours_counts, is_peer=False)}
    if before is not None:
        name, copy = f"{OURS} @{before[0]}", before[1]
        before_env = env | {"PYTHONPATH": str(copy)}

        def earlier(suite: Suite) -> StdioServerParameters:
            args = [*baseline.server_args(), "--root", str(suite.path), "--python", str(TARGET_PYTHON)]
            return StdioServerParameters(command=str(TARGET_PYTHON), args=args, env=before_env)

        kinds[name] = ServerKind(name, earlier, lambda suite: ("execute_tests", {}), ours_counts, is_peer=False)
    if "mcp-pytest-runner" in peer_venvs:
        mpr = peer_venvs["mcp-pytest-runner"] / "bin" / "mcp-pytest-runner"
        kinds["mcp-pytest-runner"] = ServerKind(
            "mcp-pytest-runner",
            # Runs `pytest -v` from PATH in its working directory; it has no root option.
            lambda suite: StdioServerParameters(command=str(mpr), args=[], env=env, cwd=suite.path),
            lambda suite: ("execute_tests", {"timeout": 1800}),
            mpr_counts,
        )
    if "mcp-tools-py" in peer_venvs:
        mtp = peer_venvs["mcp-tools-py"] / "bin" / "mcp-tools-py"
        mtp_args = ["--python-executable", str(TARGET_PYTHON), "--console-only", "--log-level", "ERROR"]
        kinds["mcp-tools-py"] = ServerKind(
            "mcp-tools-py",
            # Runs `python -m pytest -vv -s --json-report ... ROOT/tests`.
            lambda suite: StdioServerParameters(
                command=str(mtp), args=["--project-dir", str(suite.path), *mtp_args], env=env
            ),
            lambda suite: ("run_pytest_check", {}),
            mtp_counts,
        )
    if "lovranran-mcp-test-runner" in peer_venvs:
        lov = peer_venvs["lovranran-mcp-test-runner"] / "bin" / "mcp-test-runner"
        kinds["lovranran-mcp-test-runner"] = ServerKind(
            "lovranran-mcp-test-runner",
            # Runs `pytest --json-report` from PATH in `path`.
            lambda suite: StdioServerParameters(command=str(lov), args=[], env=env),
            lambda suite: ("run_pytest", {"path": str(suite.path), "timeout_seconds": 1800}),
            lovranran_counts,
        )
    return kinds


def response_bytes(result: CallToolResult) -> int:
    """Structured content (as JSON) plus every content block: what the client hands to the model."""
    size = len(json.dumps(result.structured_content).encode()) if result.structured_content is not None else 0
    for block in result.content:
        text = getattr(block, "text", None)
        size += len(text.encode()) if text is not None else len(json.dumps(block.model_dump(mode="json")).encode())
    return size


def verdict(counts: dict[str, int | None], truth: dict[str, int]) -> str:
    wrong = [k for k in COUNT_KEYS if counts.get(k) is not None and counts[k] != truth[k]]
    if wrong:
        return "**wrong** (" + ", ".join(f"{k} {counts[k]} vs {truth[k]}" for k in wrong) + ")"
    missing = [k for k in COUNT_KEYS if counts.get(k) is None and truth[k]]
    if missing:
        return "incomplete (no " + ", ".join(missing) + ")"
    return "correct"


# --------------------------------------------------------------------------- processes


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


# --------------------------------------------------------------------------- measurements


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


def startup_contenders(
    kinds: dict[str, ServerKind], suite: Suite, env: dict[str, str], clean_venv: Path | None
) -> dict[str, tuple[StdioServerParameters, str]]:
    """Every server to start, and the bare SDK server that is its floor (same interpreter)."""
    bare = "bare SDK server"
    bare_params = StdioServerParameters(command=str(TARGET_PYTHON), args=[str(BENCH / "bare_server.py")], env=env)
    contenders = {
        bare: (bare_params, bare),
        # The floor against itself: how far apart two identical measurements land on this machine.
        BARE_AGAIN: (bare_params, bare),
        OURS: (kinds[OURS].params(suite), bare),
        f"{OURS} (interpreter detected)": (
            StdioServerParameters(command=str(TARGET_BIN / "pytest-mcp"), args=["--root", str(suite.path)], env=env),
            bare,
        ),
    }
    for key in (key for key, kind in kinds.items() if not kind.is_peer and key != OURS):  # the baseline
        earlier = kinds[key].params(suite)
        contenders[key] = (earlier, bare)
        detected = earlier.model_copy(update={"args": [*baseline.server_args(), "--root", str(suite.path)]})
        contenders[f"{key} (interpreter detected)"] = (detected, bare)
    if clean_venv is not None:
        clean_bare = "bare SDK server (clean venv)"
        python = clean_venv / "bin" / "python"
        contenders[clean_bare] = (
            StdioServerParameters(command=str(python), args=[str(BENCH / "bare_server.py")], env=env),
            clean_bare,
        )
        args = ["--root", str(suite.path), "--python", str(TARGET_PYTHON)]
        contenders[f"{OURS} (clean install)"] = (
            StdioServerParameters(command=str(clean_venv / "bin" / "pytest-mcp"), args=args, env=env),
            clean_bare,
        )
        # What a user who configured nothing gets: python3 on PATH (the project venv) is detected.
        contenders[f"{OURS} (clean install, interpreter detected)"] = (
            StdioServerParameters(command=str(clean_venv / "bin" / "pytest-mcp"), args=args[:2], env=env),
            clean_bare,
        )
    for key, kind in kinds.items():
        if kind.is_peer:
            contenders[key] = (kind.params(suite), bare)
    return contenders


async def measure_startup(
    contenders: dict[str, tuple[StdioServerParameters, str]], repetitions: int, results: Results
) -> None:
    """Spawn to `tools/list` answered, every contender once per repetition, in a shuffled order."""
    order = list(contenders)
    for repetition in range(repetitions):
        random.Random(repetition).shuffle(order)  # noqa: S311 - an order, not a secret
        for name in order:
            started = time.perf_counter()
            async with connect(contenders[name][0], f"startup-{name}") as session:
                await session.client.list_tools()
                results.startup[name].append(time.perf_counter() - started)
        print(f"  start-up round {repetition + 1}/{repetitions}", flush=True)


async def measure_runs(
    kinds: dict[str, ServerKind],
    suites: list[Suite],
    env: dict[str, str],
    rounds: int,
    peer_rounds: int,
    results: Results,
) -> None:
    """Per round and suite, shuffled: raw `pytest -q` and execute_tests on every server; on the
    all-pass suites also raw `pytest --collect-only -q` and discover_tests. One long-lived
    server per (server, suite), as an agent's session would have."""
    raw_argv = {
        "run": [str(TARGET_PYTHON), "-m", "pytest", "-q"],
        "collect": [str(TARGET_PYTHON), "-m", "pytest", "--collect-only", "-q"],
    }
    async with contextlib.AsyncExitStack() as stack:
        sessions: dict[tuple[str, str], Session] = {}
        for suite in suites:
            for key, kind in kinds.items():
                session = await stack.enter_async_context(connect(kind.params(suite), f"{key}-{suite.name}"))
                await session.client.list_tools()  # what an agent does first; the client learns the schemas
                sessions[key, suite.name] = session
        for round_number in range(rounds):
            rng = random.Random(1000 + round_number)  # noqa: S311 - an order, not a secret
            ordered = list(suites)
            rng.shuffle(ordered)
            for suite in ordered:
                # Raw pytest runs twice per round: the second run against the first is the noise floor.
                steps = [("run", "raw"), ("run", AGAIN)]
                with_peers = round_number < peer_rounds_for(suite, rounds, peer_rounds)
                steps += [("run", key) for key, kind in kinds.items() if not kind.is_peer or with_peers]
                if suite.failures == 0 and suite.name != "mixed":
                    steps += [("collect", "raw"), ("collect", AGAIN)] + [
                        ("collect", key) for key, kind in kinds.items() if not kind.is_peer
                    ]
                rng.shuffle(steps)
                for what, who in steps:
                    if who in ("raw", AGAIN):
                        table = results.runs if what == "run" else results.discovery
                        table[suite.name][who].append(await timed_process(raw_argv[what], suite.path, env))
                    else:
                        await call_server(what, kinds[who], suite, sessions[who, suite.name], results)
            print(f"  round {round_number + 1}/{rounds} done", flush=True)


async def call_server(what: str, kind: ServerKind, suite: Suite, session: Session, results: Results) -> None:
    tool, arguments = kind.run_call(suite) if what == "run" else ("discover_tests", {})
    started = time.perf_counter()
    try:
        result = await session.client.call_tool(tool, arguments)
    except Exception as exc:  # a peer's protocol error is a result to report, not a crash
        results.errors[suite.name][kind.key] = f"{type(exc).__name__}: {str(exc)[:200]}"
        return
    elapsed = time.perf_counter() - started
    if what == "collect":
        results.discovery[suite.name][kind.key].append(elapsed)
        results.discovery_sizes[suite.name][kind.key] = response_bytes(result)
    else:
        results.runs[suite.name][kind.key].append(elapsed)
        results.sizes[suite.name][kind.key] = response_bytes(result)
        results.counts[suite.name][kind.key] = kind.counts(result)
        if result.is_error:
            results.errors[suite.name][kind.key] = text_of(result)[:200]
    if session.pid is not None and (rss := rss_mb(session.pid)) is not None:
        results.rss_after_run[suite.name][kind.key].append(rss)


async def measure_rss_growth(kind: ServerKind, suite: Suite, calls: int, results: Results) -> None:
    """One fresh pytest-mcp, `calls` sequential execute_tests on a failing suite: RSS as it goes."""
    marks = {1, 10, 25, 50, 100, 150, calls} | set(range(0, calls + 1, max(calls // 8, 1)))
    async with connect(kind.params(suite), f"{kind.key}-rss-{suite.name}") as session:
        await session.client.list_tools()
        if session.pid is None:
            raise RuntimeError("could not find the server's process id")
        for call in range(1, calls + 1):
            await session.client.call_tool("execute_tests", {})
            if call in marks:
                results.rss_calls.append((call, rss_mb(session.pid) or 0.0))
        print(f"  {calls} calls done", flush=True)


# --------------------------------------------------------------------------- report


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples) if samples else float("nan")


def paired_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    pairs = [a / b for a, b in zip(numerator, denominator, strict=False) if b]
    return statistics.median(pairs) if pairs else float("nan")


def size_text(size: int | None) -> str:
    return "n/a" if size is None else f"{size:,} (≈ {size // 4:,})"


def render(
    results: Results, suites: list[Suite], floors: dict[str, str], ours_keys: list[str]
) -> tuple[str, dict[str, Any]]:
    """The Markdown report and the figures behind it (written to benchmark.json for the chart)."""
    cfg = results.config
    summary: dict[str, Any] = {"suites": {}, "startup": {}, "targets": {}, "config": cfg}
    lines = [
        "# pytest-mcp benchmark",
        "",
        f"`{cfg['command']}` on {cfg['machine']}, {cfg['date']}, {cfg['minutes']} minutes "
        f"({', '.join(f'{name} {minutes}' for name, minutes in cfg['phase_minutes'].items())}). {cfg['rounds']} "
        f"interleaved rounds (peers in every round up to {PEERS_EVERY_ROUND_UP_TO:,} tests, in the first "
        f"{cfg['peer_rounds']} on larger suites), {cfg['startup_reps']} start-ups per server, {cfg['rss_calls']} "
        f"sequential calls for memory. Target interpreter `{cfg['python']}` (Python "
        f"{cfg['python_version']}, pytest {cfg['pytest']}, mcp {cfg['mcp']}); pytest plugin autoload is **on** "
        f"for every run compared (installed plugins: {cfg['plugins']}), because two peers need the autoloaded "
        "pytest-json-report. Raw pytest writes to /dev/null. Ratios are the median of per-round ratios "
        "(server / floor measured in the same round); the ratio of the medians is shown beside them.",
        "",
    ]
    lines += ["## Start-up: spawn to `tools/list` answered", ""]
    lines += [
        "| server | median ms | min ms | x its bare SDK floor (paired) | x floor (of minimums) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, samples in sorted(results.startup.items(), key=lambda item: median(item[1])):
        floor = results.startup.get(floors[name], [])
        ratio = paired_ratio(samples, floor)
        summary["startup"][name] = {"median": median(samples), "ratio": ratio, "floor": floors[name]}
        lines.append(
            f"| {name} | {median(samples) * 1000:.0f} | {min(samples) * 1000:.0f} | {ratio:.2f} | "
            f"{min(samples) / min(floor):.2f} |"
        )
    for what, title, raw_words, tool in (
        ("run", "Run overhead", "`pytest -q`", "`execute_tests`"),
        ("collect", "Discovery overhead", "`pytest --collect-only -q`", "`discover_tests`"),
    ):
        table = results.runs if what == "run" else results.discovery
        sizes = results.sizes if what == "run" else results.discovery_sizes
        lines += ["", f"## {title}: pytest-mcp against {raw_words} on the same suite", ""]
        lines += [
            f"| suite | server | {raw_words} median s | {tool} median s | x raw (paired) | x raw (of medians) "
            "| x raw (of minimums) | answer bytes (≈ tokens) | server RSS MB, max after a call |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for suite in suites:
            if suite.name not in table:
                continue
            raw = table[suite.name]["raw"]
            again = table[suite.name].get(AGAIN, [])
            entry = summary["suites"].setdefault(suite.name, {"tests": suite.tests, "failures": suite.failures})
            entry.setdefault("noise", {})[what] = paired_ratio(again, raw)
            lines.append(
                f"| {suite.label} | {raw_words} again: the noise floor | {median(raw):.2f} | {median(again):.2f} | "
                f"{paired_ratio(again, raw):.3f} | {median(again) / median(raw):.3f} | {min(again) / min(raw):.3f} "
                "| | |"
            )
            for key in ours_keys:
                mine = table[suite.name].get(key, [])
                figures = entry.setdefault(what, {}).setdefault(key, {})
                rss = results.rss_after_run[suite.name].get(key, [])
                figures |= {
                    "raw": median(raw),
                    "median": median(mine),
                    "ratio": paired_ratio(mine, raw),
                    "ratio_of_minimums": min(mine) / min(raw) if mine and raw else float("nan"),
                    "bytes": sizes[suite.name].get(key),
                    "rss": max(rss) if rss else None,
                }
                lines.append(
                    f"| {suite.label} | {key} | {median(raw):.2f} | {median(mine):.2f} | {figures['ratio']:.3f} | "
                    f"{median(mine) / median(raw):.3f} | {figures['ratio_of_minimums']:.3f} | "
                    f"{size_text(figures['bytes'])} | "
                    f"{max(rss) if rss else float('nan'):.1f} |"
                )
    lines += ["", f"## Server memory across {cfg['rss_calls']} sequential calls (`{suites[1].label}`)", ""]
    lines += ["| calls | server RSS MB |", "|---:|---:|"] + [f"| {n} | {rss:.1f} |" for n, rss in results.rss_calls]
    peers = [key for key in cfg["servers"] if key not in ours_keys]
    if peers:
        lines += peer_table(results, suites, [*ours_keys, *peers], summary)
    lines += ["", "## Targets", ""]
    lines += ["| target | " + " | ".join(ours_keys) + " |", "|---|" + "---|" * len(ours_keys)]
    verdicts = {key: targets(summary, results, suites, peers, key) for key in ours_keys}
    for index, (name, _, _) in enumerate(verdicts[OURS]):
        cells = []
        for key in ours_keys:
            _, measured, met = verdicts[key][index]
            cells.append(f"{measured}: {'met' if met else '**missed**'}" if measured else "not measured")
            summary["targets"].setdefault(key, []).append({"target": name, "measured": measured, "met": met})
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "![overhead and answer size against suite size](benchmark.png)", ""]
    return "\n".join(lines), summary


def peer_table(results: Results, suites: list[Suite], keys: list[str], summary: dict[str, Any]) -> list[str]:
    peer_rounds = results.config["peer_rounds"]
    lines = [
        "",
        "## Peers: the same suites through the same client",
        "",
        f"Medians over all {results.config['rounds']} rounds on the suites of up to "
        f"{PEERS_EVERY_ROUND_UP_TO:,} tests, and over the {peer_rounds} peer round(s) on the larger ones; "
        "`x pytest-mcp` and `x raw` are the medians of the per-round "
        "ratios to pytest-mcp and to raw pytest in the same rounds. Counts are read from whatever the server "
        "returns (structured fields, or its text) and checked against the suite's truth; pytest-mcp's come from "
        "`structuredContent`.",
        "",
        "| suite | server | median s | x pytest-mcp | x raw | answer bytes (≈ tokens) | counts | server RSS MB |",
        "|---|---|---:|---:|---:|---:|---|---:|",
    ]
    for suite in suites:
        runs = results.runs[suite.name]
        rounds = peer_rounds_for(suite, results.config["rounds"], peer_rounds)
        for key in keys:
            samples = runs.get(key, [])[:rounds]
            counts = results.counts[suite.name].get(key)
            said = verdict(counts, suite.truth) if counts is not None else "no answer"
            if error := results.errors[suite.name].get(key):
                said += f"; error: {error[:80]!r}"
            rss = results.rss_after_run[suite.name].get(key, [])
            size = results.sizes[suite.name].get(key)
            summary["suites"].setdefault(suite.name, {"tests": suite.tests, "failures": suite.failures})
            summary["suites"][suite.name].setdefault("peers", {})[key] = {
                "median": median(samples),
                "bytes": size,
                "counts": said,
                "ratio_to_ours": paired_ratio(samples, runs[OURS][:rounds]),
                "ratio_to_raw": paired_ratio(samples, runs["raw"][:rounds]),
                "samples": samples,
            }
            figures = summary["suites"][suite.name]["peers"][key]
            lines.append(
                f"| {suite.label} | {key} | {median(samples):.2f} | {figures['ratio_to_ours']:.2f} | "
                f"{figures['ratio_to_raw']:.2f} | {size_text(size)} | {said} | "
                f"{max(rss) if rss else float('nan'):.0f} |"
            )
    return lines


def targets(
    summary: dict[str, Any], results: Results, suites: list[Suite], peers: list[str], key: str
) -> list[tuple[str, str, bool]]:
    """(target, measured, met) for one pytest-mcp variant, in a fixed order."""
    found: list[tuple[str, str, bool]] = []
    for suffix in ("", " (interpreter detected)", " (clean install)", " (clean install, interpreter detected)"):
        entry = summary["startup"].get(key + suffix)
        label = f"start-up ≤ 1.10x bare SDK server{suffix or ' (--python given)'}"
        noise = summary["startup"].get(BARE_AGAIN, {}).get("ratio", float("nan"))
        measured = f"{entry['ratio']:.2f}x (floor against itself {noise:.2f}x)" if entry else ""
        found.append((label, measured, bool(entry) and entry["ratio"] <= 1.10))
    for tests, limit in ((2000, 1.05), (10000, 1.03)):
        for suite in (s for s in suites if s.tests == tests):
            figures = summary["suites"][suite.name]["run"].get(key, {})
            ratio, lowest = figures.get("ratio", float("nan")), figures.get("ratio_of_minimums", float("nan"))
            noise = summary["suites"][suite.name].get("noise", {}).get("run", float("nan"))
            measured = f"{ratio:.3f}x (of minimums {lowest:.3f}x; raw against itself {noise:.3f}x)"
            found.append((f"run overhead ≤ {limit:.2f}x raw pytest, {suite.label}", measured, ratio <= limit))
    for failures, limit, label in ((0, 1024, "all-pass answer ≤ 1 KB"), (3, 4096, "3-failure answer ≤ 4 KB")):
        sizes = [
            summary["suites"][s.name]["run"].get(key, {}).get("bytes") or 0
            for s in suites
            if s.failures == failures and s.name != "mixed"
        ]
        found.append((f"{label}, every suite size", f"largest {max(sizes):,} B", max(sizes) <= limit))
    rss = [value for suite in results.rss_after_run.values() for value in suite.get(key, [])]
    rss += [value for _, value in results.rss_calls] if key == OURS else []
    found.append(("server RSS ≤ 120 MB", f"peak {max(rss):.1f} MB" if rss else "", bool(rss) and max(rss) <= 120))
    if key == OURS and len(results.rss_calls) >= 2:
        drift = results.rss_calls[-1][1] - results.rss_calls[0][1]
        found.append(("RSS drift ≤ 5 MB across the sequential calls", f"{drift:+.1f} MB", drift <= 5))
    else:
        found.append(("RSS drift ≤ 5 MB across the sequential calls", "", False))
    for peer in peers:
        smaller, faster, slowest = True, True, 0.0
        for suite in suites:
            theirs = summary["suites"][suite.name].get("peers", {}).get(peer, {})
            mine = summary["suites"][suite.name].get("peers", {}).get(key, {})
            if theirs.get("bytes") is not None and mine.get("bytes") is not None:
                smaller &= mine["bytes"] < theirs["bytes"]
            if theirs.get("samples") and mine.get("samples"):
                ratio = paired_ratio(mine["samples"], theirs["samples"])
                slowest = max(slowest, ratio)
                faster &= ratio <= 1.03  # "match": within 3%, which a few rounds cannot resolve on this machine
        found.append((f"smaller answers than {peer} on every suite", "yes" if smaller else "no", smaller))
        found.append((f"wall time ≤ {peer}'s (worst suite, ours / theirs)", f"{slowest:.2f}x", faster))
    return found


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="3 rounds, 1 peer round, 5 start-ups, 50 RSS calls")
    parser.add_argument("--baseline", metavar="REV", help="also run pytest-mcp as it was at commit REV")
    parser.add_argument("--rounds", type=int, help="interleaved rounds of every run (default 11; quick 3)")
    parser.add_argument(
        "--peer-rounds", type=int, help="rounds that include the peers on suites over 2,000 tests (default 3; quick 1)"
    )
    parser.add_argument("--startup-reps", type=int, help="start-ups per server (default 11; quick 5)")
    parser.add_argument("--rss-calls", type=int, help="sequential calls for memory growth (default 200; quick 50)")
    parser.add_argument("--sizes", default="10,2000,10000", help="suite sizes (default 10,2000,10000)")
    parser.add_argument("--no-peers", action="store_true", help="leave the peer servers out")
    parser.add_argument("--no-clean-install", action="store_true", help="no start-up figure from a clean install")
    parser.add_argument("--python312", default=python312(), help="interpreter for mcp-pytest-runner (>= 3.12)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory (default bench/results)")
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (3 if args.quick else 11)
    args.peer_rounds = min(args.rounds, args.peer_rounds or (1 if args.quick else 3))
    args.startup_reps = args.startup_reps or (5 if args.quick else 11)
    args.rss_calls = args.rss_calls or (50 if args.quick else 200)
    args.command = "bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    return args


def install_peers(args: argparse.Namespace) -> dict[str, Path]:
    venvs: dict[str, Path] = {}
    for peer in () if args.no_peers else PEERS:
        python = args.python312 if peer.needs_312 else sys.executable
        if python is None:
            print(f"  leaving out {peer.key}: it needs Python >= 3.12 (pass --python312)", flush=True)
            continue
        venvs[peer.key] = ensure_venv(f"peer-{peer.key}", [peer.requirement, "mcp<2"], python)
    return venvs


def clean_install(args: argparse.Namespace) -> Path | None:
    """pytest-mcp as a user gets it: a non-editable install of this repository, no dev extras."""
    if args.no_clean_install:
        return None
    try:
        return ensure_venv("clean-install", [str(REPO)], sys.executable, stamp_extra=source_digest())
    except RuntimeError as exc:
        print(f"  no clean-install start-up figure: {exc}", flush=True)
        return None


def plugin_list() -> str:
    names = {
        dist.metadata["Name"] for dist in distributions() if any(ep.group == "pytest11" for ep in dist.entry_points)
    }
    return ", ".join(sorted(names)) or "none"


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    started = time.perf_counter()
    env = bench_env()
    print("setting up suites, venvs and servers", flush=True)
    sizes = [int(size) for size in args.sizes.split(",")]
    suites = [generate(CACHE / "suites", size, failures) for size in sizes for failures in (0, 3)]
    suites.append(generate_mixed(CACHE / "suites"))
    kinds = server_kinds(install_peers(args), env, baseline.build(args.baseline) if args.baseline else None)
    ours_keys = [key for key, kind in kinds.items() if not kind.is_peer]
    contenders = startup_contenders(kinds, suites[0], env, clean_install(args))
    for suite in suites:  # compile each suite's .pyc once, outside any measurement
        subprocess.run([str(TARGET_PYTHON), "-m", "pytest", "-q"], cwd=suite.path, env=env, capture_output=True)
    results = Results()

    phases: dict[str, float] = {"setup": time.perf_counter() - started}

    async def measure() -> None:
        print("start-up", flush=True)
        phase = time.perf_counter()
        await measure_startup(contenders, args.startup_reps, results)
        phases["start-up"] = time.perf_counter() - phase
        print("runs and discovery", flush=True)
        phase = time.perf_counter()
        await measure_runs(kinds, suites, env, args.rounds, args.peer_rounds, results)
        phases["runs"] = time.perf_counter() - phase
        print("memory across calls", flush=True)
        phase = time.perf_counter()
        await measure_rss_growth(kinds[OURS], suites[1], args.rss_calls, results)
        phases["memory"] = time.perf_counter() - phase

    anyio.run(measure)
    results.config = {
        "command": args.command.strip(),
        "rounds": args.rounds,
        "peer_rounds": args.peer_rounds if len(kinds) > len(ours_keys) else 0,
        "startup_reps": args.startup_reps,
        "rss_calls": args.rss_calls,
        "servers": list(kinds),
        "python": str(TARGET_PYTHON),
        "python_version": platform.python_version(),
        "pytest": version("pytest"),
        "mcp": version("mcp"),
        "plugins": plugin_list(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "minutes": round((time.perf_counter() - started) / 60, 1),
        "phase_minutes": {name: round(seconds / 60, 1) for name, seconds in phases.items()},
    }
    floors = {name: floor for name, (_, floor) in contenders.items()}
    markdown, summary = render(results, suites, floors, ours_keys)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "benchmark.md").write_text(markdown)
    (args.out / "benchmark.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    draw_chart(args.out)
    print(markdown)


def draw_chart(out: Path) -> None:
    python = ensure_venv("chart-venv", ["matplotlib"], sys.executable) / "bin" / "python"
    chart = [str(python), str(BENCH / "chart.py"), str(out / "benchmark.json"), str(out / "benchmark.png")]
    subprocess.run(chart, check=True)


if __name__ == "__main__":
    main()
