"""Benchmark: the instructions one run costs, counted by valgrind, against raw pytest.

    .venv/bin/python bench/instructions.py [--tests 2000 10000] [--failures 0 3]

On these shared machines wall time moves by more than the 3% the run-overhead target allows at
10,000 tests: bench/run.py has put the same code anywhere from 1.00x to 1.05x from one run to
the next. The instructions a process executes barely move, so this is where the pytest process's
share of the overhead can be read. valgrind's cachegrind (no cache simulation) counts, with
PYTHONHASHSEED=0, on the same generated suite:

- raw: `python -m pytest -q`, output to /dev/null, the floor bench/run.py uses;
- pytest-mcp: the pytest process that `execute_tests` starts, with default arguments and with
  `verbosity: 0`. The server runs in-process, and `--python` names a wrapper script that starts
  the target interpreter under valgrind, so the command is exactly the runner's;
- pytest (verbosity 0): `python -m pytest`, what pytest-mcp ran by default before -q.

The server's own work is not in the counts. Its CPU time per call is measured without valgrind
(this process's time, median of `--reps` calls after a first one) and given as a share of a plain
run's CPU time. Counts plus share is an upper bound on the call's overhead in CPU, since part of
the server's work overlaps pytest's, on the other core. Two counts run at a time. Writes
bench/results/instructions.md.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any

import anyio

from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import CACHE, RESULTS, bench_env
from suites import Suite, generate

VALGRIND = ("valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null")
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")
RAW_Q = "`pytest -q` (the floor)"
RAW_0 = "`pytest`, verbosity 0"
OURS = "pytest-mcp, default arguments"
OURS_0 = "pytest-mcp, `verbosity: 0`"


def refs(log: Path) -> int:
    match = _REFS.search(log.read_text())
    if match is None:
        raise RuntimeError(f"valgrind wrote no instruction count to {log}:\n{log.read_text()[-2000:]}")
    return int(match[1].replace(",", ""))


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def raw(suite: Path, logs: Path, name: str, args: Sequence[str]) -> int:
    """The instructions of `python -m pytest ARGS`."""
    log = logs / f"{name}.log"
    command = [*VALGRIND, f"--log-file={log}", sys.executable, "-m", "pytest", *args]
    await anyio.run_process(command, cwd=suite, check=False, stdout=subprocess.DEVNULL)
    return refs(log)


async def ours(suite: Path, logs: Path, name: str, arguments: dict[str, Any]) -> int:
    """The instructions of the pytest process one execute_tests call starts."""
    wrapper = logs / f"{name}.python"
    log = logs / f"{name}.log"
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.join([*VALGRIND, f"--log-file={log}", sys.executable])} "$@"\n')
    wrapper.chmod(0o755)
    container = create_container(Settings(root=suite, python=wrapper, log_level="error", max_timeout=3600))
    container.init_resources()
    result = await container.tool_server().call("execute_tests", {**arguments, "timeout": 3600})
    if result.is_error or not result.structured_content or "summary" not in result.structured_content:
        raise RuntimeError(f"the call under valgrind did not answer with a result: {result}")
    return refs(log)


async def counts(suite: Suite, logs: Path) -> dict[str, int]:
    """Instructions per command, two counts at a time."""
    figures: dict[str, int] = {}

    async def one(name: str, count: Awaitable[int]) -> None:
        started = time.perf_counter()
        figures[name] = await count
        print(f"  {suite.label}: {name} counted in {(time.perf_counter() - started) / 60:.1f} min", flush=True)

    async with anyio.create_task_group() as pair:
        pair.start_soon(one, RAW_Q, raw(suite.path, logs, "raw-q", ["-q"]))
        pair.start_soon(one, OURS, ours(suite.path, logs, "ours", {}))
    async with anyio.create_task_group() as pair:
        pair.start_soon(one, RAW_0, raw(suite.path, logs, "raw-0", []))
        pair.start_soon(one, OURS_0, ours(suite.path, logs, "ours-0", {"verbosity": 0}))
    return figures


async def server_share(suite: Suite, reps: int) -> tuple[float, float]:
    """(the server's CPU seconds per call, that as a share of a plain `pytest -q` run's CPU).

    Without valgrind, alternating, medians of `reps`; after one call, as an agent's session would
    have made before (the first call's imports are not what a run costs).
    """
    container = create_container(Settings(root=suite.path, python=Path(sys.executable), log_level="error"))
    container.init_resources()
    server = container.tool_server()
    await server.call("execute_tests", {})
    own, base = [], []
    for _ in range(reps):
        started = time.process_time()
        await server.call("execute_tests", {})
        own.append(time.process_time() - started)
        before = children_cpu()
        command = [sys.executable, "-m", "pytest", "-q"]
        await anyio.run_process(command, cwd=suite.path, check=False, stdout=subprocess.DEVNULL)
        base.append(children_cpu() - before)
    return statistics.median(own), statistics.median(own) / statistics.median(base)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--failures", type=int, nargs="+", default=[0, 3])
    parser.add_argument("--reps", type=int, default=5, help="calls and raw runs for the server's CPU share")
    parser.add_argument("--out", type=Path, default=RESULTS / "instructions.md")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    lines = [
        "# Instructions per run, counted by valgrind",
        "",
        f"`bench/instructions.py --tests {' '.join(map(str, args.tests))} "
        f"--failures {' '.join(map(str, args.failures))}`, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. One count each, PYTHONHASHSEED=0. "
        "Below the table, the server's own CPU per call (median of "
        f"{args.reps}, without valgrind) as a share of a plain run's, and the sum of the two: an upper "
        "bound on the call's overhead in CPU, since part of the server's work overlaps pytest's.",
        "",
        "| suite | command | instructions (G) | x `pytest -q` |",
        "|---|---|---:|---:|",
    ]
    shares: list[str] = []
    # Every pytest compared, raw or started by the server (which passes its own environment on),
    # runs in the same environment, with the same hash seed.
    os.environ.clear()
    os.environ.update(bench_env() | {"PYTHONHASHSEED": "0"})
    for tests, failures in itertools.product(args.tests, args.failures):
        suite = generate(CACHE / "suites", tests, failures)
        cpu, share = anyio.run(server_share, suite, args.reps)
        with tempfile.TemporaryDirectory(prefix="pytest-mcp-instructions-") as logs:
            figures = anyio.run(counts, suite, Path(logs))
        floor = figures[RAW_Q]
        for name in (RAW_Q, RAW_0, OURS, OURS_0):
            ratio = figures[name] / floor
            lines.append(f"| {suite.label} | {name} | {figures[name] / 1e9:.3f} | {ratio:.4f} |")
        shares.append(
            f"- {suite.label}: the server's CPU per call {cpu * 1000:.0f} ms, {share:.2%} of a plain `pytest -q` "
            f"run's; with the default call's instructions, at most {figures[OURS] / floor + share:.3f}x."
        )
    lines += ["", *shares, "", f"Took {(time.perf_counter() - started) / 60:.1f} minutes."]
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
