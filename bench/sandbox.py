"""What --sandbox (bubblewrap, ADR 0019) costs: a clean run of 2,000 tests, and one run's start-up. Opt-in.

Usage: .venv/bin/python -m bench.sandbox [--tests 2000] [--rounds 9] [--startups 21]

Each round runs the same suite three times through the real runner, in an order that rotates from
round to round: without the sandbox, with it, and without it again (the noise floor: the same
runner twice). The start-up figure is the same three-way rotation on a suite of one test, where
a run is nearly all start-up, so the difference of the medians is the milliseconds the sandbox
adds to a run; and the one-time check `open_bubblewrap` makes when the server starts. Writes
bench/results/sandbox.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from bench.suites import generate
from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.runner import SubprocessPytestRunner
from pytest_mcp.adapters.pytest_subprocess.sandbox import open_bubblewrap
from pytest_mcp.domain.runs import RunSpec

RESULTS = Path(__file__).resolve().parent / "results" / "sandbox.md"
NAMES = ("no sandbox", "sandbox", "no sandbox again")


async def _timed(runner: SubprocessPytestRunner) -> float:
    started = time.perf_counter()
    report = await runner.run(RunSpec(timeout=600))
    elapsed = time.perf_counter() - started
    assert report.termination.exit_code == 0, (report.termination, report.stderr[-2000:])
    return elapsed


async def rotate(root: Path, rounds: int) -> dict[str, list[float]]:
    python = TargetInterpreter.given(Path(sys.executable))
    sandbox = open_bubblewrap(False)
    runners = {
        "no sandbox": SubprocessPytestRunner(python, root),
        "sandbox": SubprocessPytestRunner(python, root, sandbox=sandbox),
        "no sandbox again": SubprocessPytestRunner(python, root),
    }
    for runner in runners.values():  # warm the file cache and the bytecode
        await _timed(runner)
    times: dict[str, list[float]] = {name: [] for name in NAMES}
    for index in range(rounds):
        for name in NAMES[index % 3 :] + NAMES[: index % 3]:
            times[name].append(await _timed(runners[name]))
    return times


def check_seconds(repetitions: int = 11) -> float:
    started = []
    for _ in range(repetitions):
        begin = time.perf_counter()
        open_bubblewrap(False)
        started.append(time.perf_counter() - begin)
    return statistics.median(started)


def table(times: dict[str, list[float]]) -> str:
    rows = "\n".join(
        f"| {name} | {statistics.median(values):.3f} | {min(values):.3f} | {max(values):.3f} |"
        for name, values in times.items()
    )
    return "| runner | median s | min s | max s |\n|---|---|---|---|\n" + rows


def ratios(times: dict[str, list[float]]) -> tuple[float, float]:
    # Paired within each round, where the machine's load is most alike: the medians of the ratios.
    cost = statistics.median(s / n for s, n in zip(times["sandbox"], times["no sandbox"], strict=True))
    floor = statistics.median(a / n for a, n in zip(times["no sandbox again"], times["no sandbox"], strict=True))
    return cost, floor


def report(big: dict[str, list[float]], small: dict[str, list[float]], check: float, tests: int) -> str:
    cost, floor = ratios(big)
    added = statistics.median(s - n for s, n in zip(small["sandbox"], small["no sandbox"], strict=True))
    added_floor = statistics.median(a - n for a, n in zip(small["no sandbox again"], small["no sandbox"], strict=True))
    verdict = "met" if cost <= 1.05 else "missed"
    return (
        f"# What --sandbox costs\n\n"
        "The real runner with and without bubblewrap (`.venv` Python, whose base interpreter lives under "
        "$HOME in pyenv, so its directories are bound into the emptied home), interleaved; this machine has "
        "2 cores shared with other work (noisy).\n\n"
        f"## A clean {tests:,}-test run, {len(big['sandbox'])} rounds\n\n{table(big)}\n\n"
        f"- with / without the sandbox, median of the rounds' ratios: **{cost:.3f}x** (target 1.05x: {verdict})\n"
        f"- noise floor, without again / without: {floor:.3f}x\n\n"
        f"## One run's start-up (a 1-test suite), {len(small['sandbox'])} rounds\n\n{table(small)}\n\n"
        f"- the sandbox adds **{added * 1000:.1f} ms** to a run (median of the rounds' differences); "
        f"the same runner twice differs by {added_floor * 1000:+.1f} ms\n"
        f"- the check at server start-up (`open_bubblewrap`: `bwrap --version` and one empty sandbox), once per "
        f"server: **{check * 1000:.1f} ms**\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--startups", type=int, default=21)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))
    big = anyio.run(rotate, generate(base, args.tests, failures=0).path, args.rounds)
    small = anyio.run(rotate, generate(base, 1, failures=0).path, args.startups)
    text = report(big, small, check_seconds(), args.tests)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
