"""Benchmark pytest-mcp against raw pytest, a bare MCP SDK server and the other pytest MCP servers.

    .venv/bin/python bench/run.py              # the full run: about 12 minutes on 2 busy cores
    .venv/bin/python bench/run.py --quick      # 3 rounds, 1 peer round, 5 start-ups, 50 calls for RSS
    .venv/bin/python bench/run.py --baseline REV   # also pytest-mcp at commit REV: a before and an after
    .venv/bin/python bench/run.py --large 50000,100000 --rounds 2   # opt-in: the large suites alone
    .venv/bin/python bench/run.py --containment --run-store --sandbox   # opt-in: those scripts alone
    .venv/bin/python bench/run.py --causes      # opt-in: planted bugs in real suites (issue 38)

Writes bench/results/benchmark.md, benchmark.json and benchmark.png (see bench/README.md).
Every figure is a ratio to a floor measured in the same run, interleaved round by round in a
shuffled order, because absolute times drift on shared machines. Peers are installed on first
use, each in its own venv under bench/.cache/ (gitignored), as are matplotlib for the chart and
a clean, non-editable install of this repository for the user-facing start-up figure.

This is the runner: one module per measurement (`startup.py`, `overhead.py`, `memory.py`,
`peers.py`) measures and renders its own table, and `report.py` puts them together. The opt-in
measurements run instead of those: `--large` (`large.py`, writes results/large.md), and
`--containment`, `--run-store`, `--causes` and `--sandbox`, which run those scripts with their own defaults.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib.metadata import distributions, version
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
import baseline
import large
import memory
import overhead
import peers
import report
import startup
from harness import BENCH, CACHE, OURS, RESULTS, TARGET_PYTHON, Results, bench_env, ensure_venv, python312
from servers import ours_kinds
from suites import generate, generate_mixed


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
    opt_in = parser.add_argument_group("opt-in measurements, run instead of the standard one")
    opt_in.add_argument("--large", metavar="SIZES", help="suites of these sizes (e.g. 50000,100000): large.py")
    opt_in.add_argument("--containment", action="store_true", help="what the warden costs: containment.py")
    opt_in.add_argument("--run-store", action="store_true", help="runs in Redis against in memory: run_store.py")
    opt_in.add_argument("--causes", action="store_true", help="planted bugs in real suites, culprits: causes.py")
    opt_in.add_argument("--sandbox", action="store_true", help="what --sandbox (bubblewrap) costs: sandbox.py")
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (3 if args.quick else 11)
    args.peer_rounds = min(args.rounds, args.peer_rounds or (1 if args.quick else 3))
    args.startup_reps = args.startup_reps or (5 if args.quick else 11)
    args.rss_calls = args.rss_calls or (50 if args.quick else 200)
    args.command = "bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    return args


def plugin_list() -> str:
    names = {
        dist.metadata["Name"] for dist in distributions() if any(ep.group == "pytest11" for ep in dist.entry_points)
    }
    return ", ".join(sorted(names)) or "none"


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.large or args.containment or args.run_store or args.causes or args.sandbox:
        opt_in(args)
        return
    started = time.perf_counter()
    env = bench_env()
    print("setting up suites, venvs and servers", flush=True)
    sizes = [int(size) for size in args.sizes.split(",")]
    suites = [generate(CACHE / "suites", size, failures) for size in sizes for failures in (0, 3)]
    suites.append(generate_mixed(CACHE / "suites"))
    kinds = ours_kinds(env, baseline.build(args.baseline) if args.baseline else None)
    kinds |= peers.peer_kinds(peers.install_peers(args), env)
    ours_keys = [key for key, kind in kinds.items() if not kind.is_peer]
    contenders = startup.startup_contenders(kinds, suites[0], env, startup.clean_install(args))
    for suite in suites:  # compile each suite's .pyc once, outside any measurement
        subprocess.run([str(TARGET_PYTHON), "-m", "pytest", "-q"], cwd=suite.path, env=env, capture_output=True)
    results = Results()

    phases: dict[str, float] = {"setup": time.perf_counter() - started}

    async def measure() -> None:
        print("start-up", flush=True)
        phase = time.perf_counter()
        await startup.measure_startup(contenders, args.startup_reps, results)
        phases["start-up"] = time.perf_counter() - phase
        print("runs and discovery", flush=True)
        phase = time.perf_counter()
        await overhead.measure_runs(kinds, suites, env, args.rounds, args.peer_rounds, results)
        phases["runs"] = time.perf_counter() - phase
        print("memory across calls", flush=True)
        phase = time.perf_counter()
        await memory.measure_rss_growth(kinds[OURS], suites[1], args.rss_calls, results)
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
    markdown, summary = report.render(results, suites, floors, ours_keys)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "benchmark.md").write_text(markdown)
    (args.out / "benchmark.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    draw_chart(args.out)
    print(markdown)


def opt_in(args: argparse.Namespace) -> None:
    """The measurements too slow, or needing too much, for every run: each writes its own results."""
    scripts = (
        (args.containment, "bench.containment"),
        (args.run_store, "bench.run_store"),
        (args.causes, "bench.causes"),
        (args.sandbox, "bench.sandbox"),
    )
    for flag, module in scripts:
        if flag:  # scripts of their own, run as modules of the repository, as their usage says
            subprocess.run([sys.executable, "-m", module], cwd=BENCH.parent, check=True)
    if not args.large:
        return
    started = time.perf_counter()
    env = bench_env()
    rounds = args.rounds if "--rounds" in args.command or args.quick else 2
    suites = [
        generate(CACHE / "suites", int(size), failures) for size in args.large.split(",") for failures in large.FAILURES
    ]
    print(f"large suites: {', '.join(s.label for s in suites)}; {rounds} round(s)", flush=True)
    for suite in suites:  # compile each suite's .pyc once, outside any measurement
        subprocess.run([str(TARGET_PYTHON), "-m", "pytest", "-q", "--co"], cwd=suite.path, env=env, capture_output=True)
    results = anyio.run(large.measure, suites, env, rounds)
    config = {
        "command": args.command.strip(),
        "rounds": rounds,
        "python_version": platform.python_version(),
        "pytest": version("pytest"),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "minutes": round((time.perf_counter() - started) / 60, 1),
    }
    markdown = large.render(results, suites, config)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "large.md").write_text(markdown)
    print(markdown)


def draw_chart(out: Path) -> None:
    python = ensure_venv("chart-venv", ["matplotlib"], sys.executable) / "bin" / "python"
    chart = [str(python), str(BENCH / "chart.py"), str(out / "benchmark.json"), str(out / "benchmark.png")]
    subprocess.run(chart, check=True)


if __name__ == "__main__":
    main()
