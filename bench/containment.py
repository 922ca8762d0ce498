"""What the warden (a child subreaper around pytest, ADR 0004) costs a clean run: opt-in.

Usage: .venv/bin/python -m bench.containment [--tests 2000] [--rounds 9]

Each round runs the same clean suite three times through the real runner, in an order that
rotates from round to round: with the warden, without it (the bootstrap's guard line left
out, so pytest runs in the process the runner started, as before issue 25), and with the
warden again. The two runs with the warden against each other are the noise floor. Then, as
wall time on a shared machine moves by more than the cost, the instructions of each variant's
processes (the warden and pytest: every process the runner's interpreter became), counted by
valgrind's cachegrind as bench/instructions.py counts them, twice each. Writes
bench/results/containment.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from bench.suites import generate
from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.runner import SubprocessPytestRunner
from pytest_mcp.domain.runs import RunSpec

RESULTS = Path(__file__).resolve().parent / "results" / "containment.md"
_GUARD = '_load("_pytest_mcp_warden").guard('


def _without_warden(runner: SubprocessPytestRunner) -> SubprocessPytestRunner:
    source = runner._bootstrap
    start = source.index(_GUARD)
    end = source.index("\n)\n", start) + 3
    runner._bootstrap = source[:start] + "pass\n" + source[end:]
    return runner


async def _timed(runner: SubprocessPytestRunner) -> float:
    started = time.perf_counter()
    report = await runner.run(RunSpec(timeout=600))
    elapsed = time.perf_counter() - started
    assert report.termination.exit_code == 0, report.termination
    return elapsed


VALGRIND = ("valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null")
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


# What the bootstrap has done when it reaches the warden: Python's start-up and these imports.
# A forked child's count goes on from its parent's, so this part is in both the warden's count
# and pytest's; taken off the warden's, the rest is an upper bound of what the warden adds.
_BEFORE_THE_FORK = "import faulthandler, importlib.util, os, runpy, signal"


def _wrapper(logs: Path) -> Path:
    wrapper = logs / "python"
    command = shlex.join([*VALGRIND, f"--log-file={logs}/%p.log", sys.executable])
    wrapper.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


async def instructions(root: Path, warden: bool) -> tuple[int, int]:
    """(the instructions of the process that ran pytest, those of the warden; 0 without one).

    valgrind follows the fork. Under valgrind pytest forks once more at its end, and that fork,
    killed by the warden or the group kill, writes no count (without the warden too).
    """
    logs = Path(tempfile.mkdtemp(prefix="bench-containment-logs-"))
    runner = SubprocessPytestRunner(TargetInterpreter.given(_wrapper(logs)), root)
    await _timed(runner if warden else _without_warden(runner))
    counted = sorted(_counts(logs), reverse=True)
    return counted[0], (counted[1] if warden else 0)


async def before_the_fork() -> int:
    logs = Path(tempfile.mkdtemp(prefix="bench-containment-logs-"))
    await anyio.run_process([str(_wrapper(logs)), "-c", _BEFORE_THE_FORK])
    return _counts(logs)[0]


def _counts(logs: Path) -> list[int]:
    found = [_REFS.search(log.read_text()) for log in logs.glob("*.log")]
    return [int(match[1].replace(",", "")) for match in found if match]


async def measure(tests: int, rounds: int) -> tuple[dict[str, list[float]], dict[str, list[tuple[int, int]]], int]:
    root = Path(tempfile.mkdtemp(prefix="bench-containment-"))
    generate(root, tests, failures=0)
    python = TargetInterpreter.given(Path(sys.executable))
    runners = {
        "warden": SubprocessPytestRunner(python, root),
        "no warden": _without_warden(SubprocessPytestRunner(python, root)),
        "warden again": SubprocessPytestRunner(python, root),
    }
    times: dict[str, list[float]] = {name: [] for name in runners}
    names = list(runners)
    await _timed(runners["warden"])  # warm the file cache and the bytecode
    for index in range(rounds):
        for name in names[index % 3 :] + names[: index % 3]:
            times[name].append(await _timed(runners[name]))
    os.environ["PYTHONHASHSEED"] = "0"  # the runs inherit it: the same hashes, the same instructions
    counted: dict[str, list[tuple[int, int]]] = {"warden": [], "no warden": []}
    for _ in range(2):
        for name in counted:
            counted[name].append(await instructions(root, warden=name == "warden"))
    return times, counted, await before_the_fork()


def report(times: dict[str, list[float]], counted: dict[str, list[tuple[int, int]]], before: int, tests: int) -> str:
    median = {name: statistics.median(values) for name, values in times.items()}
    # Paired within each round, where the machine's load is most alike: the medians of the ratios.
    cost = statistics.median(w / n for w, n in zip(times["warden"], times["no warden"], strict=True))
    floor = statistics.median(a / w for a, w in zip(times["warden again"], times["warden"], strict=True))
    pytests = {name: [p for p, _ in values] for name, values in counted.items()}
    base = min(pytests["no warden"])
    pytest_ratio = min(pytests["warden"]) / base
    added = max(min(w for _, w in counted["warden"]) - before, 0)
    summed_added = min(p + w for p, w in counted["warden"]) - base
    summed = (base + summed_added) / base
    spread_without = max(pytests["no warden"]) / base
    spread_with = max(pytests["warden"]) / min(pytests["warden"])
    spread = statistics.median(
        max(a, w) / min(a, w) for a, w in zip(times["warden again"], times["warden"], strict=True)
    )
    rows = "\n".join(
        f"| {name} | {median[name]:.3f} | {min(values):.3f} | {max(values):.3f} |" for name, values in times.items()
    )
    return (
        f"# The warden's cost on a clean {tests:,}-test run\n\n"
        f"{len(times['warden'])} interleaved rounds through the real runner, `.venv` Python, this machine "
        "(2 cores, shared with other work: noisy).\n\n"
        "| runner | median s | min s | max s |\n|---|---|---|---|\n"
        f"{rows}\n\n"
        f"- with / without the warden, median of the rounds' ratios: **{cost:.3f}x**\n"
        f"- noise floor, the warden again / the warden: {floor:.3f}x (the two differ by {spread:.3f}x "
        "in the median round)\n\n"
        "Instructions (valgrind cachegrind, PYTHONHASHSEED=0), two runs each:\n\n"
        "| runner | the process that ran pytest | the warden |\n|---|---|---|\n"
        + "\n".join(
            f"| {name} | {', '.join(f'{p:,}' for p, _ in values)} | {', '.join(f'{w:,}' for _, w in values)} |"
            for name, values in counted.items()
        )
        + f"\n\n- the process that ran pytest, with / without the warden: **{pytest_ratio:.4f}x**\n"
        f"- both processes summed, with / without the warden: **{summed:.4f}x** ({summed_added:+,} "
        "instructions; an upper bound, as it counts twice what the two shared before the fork if valgrind "
        "carries a parent's count into its fork)\n"
        f"- the warden's own work, at most (its count less Python's start-up and the bootstrap's imports, "
        f"{before:,}, which pytest's count holds too): {added:,} instructions, "
        f"**{added / base:.2%}** of a run without it\n"
        f"- floor, the same runner twice: {spread_without:.4f}x without the warden, {spread_with:.4f}x with it\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    times, counted, before = anyio.run(measure, args.tests, args.rounds)
    text = report(times, counted, before, args.tests)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
