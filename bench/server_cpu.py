"""What the server itself spends on a run, against what its pytest spends (issue 41's cost, issue 46's loop).

    .venv/bin/python bench/server_cpu.py [--suite trivial-20000] [--calls 3]

Runs `execute_tests` through the real server in this process (`pytest_mcp.testing.connect`, one
session, as an agent's) on one of `bench/run_spectrum.py`'s generated suites, with its Python 3.12
venv (run that bench once first to build them). Per call: the CPU of this process (the server, its
threads and the in-process client) and of its children (pytest and whatever it started), from
`getrusage`. A ratio of two CPU times taken at once moves far less with the machine's load than
wall time does; the first call also probes the interpreter and digests the project's code.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import anyio

from pytest_mcp.testing import connect

CACHE = Path(__file__).resolve().parent / ".cache" / "run-spectrum"


def cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


async def measure(root: Path, python: Path, calls: int) -> None:
    async with connect(root=root, python=python, timeout=3600, max_timeout=3600, detach_after=3600) as client:
        for index in range(calls):
            server, pytest, started = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
            result = await client.call_tool("execute_tests", {})
            server, pytest = cpu(resource.RUSAGE_SELF) - server, cpu(resource.RUSAGE_CHILDREN) - pytest
            if result.is_error or not pytest:
                raise SystemExit(f"call {index}: no run to measure: {result.content}")
            print(
                f"call {index}: server {server:.2f} s CPU, its pytest {pytest:.2f} s CPU, "
                f"server / pytest {server / pytest:.2%}, wall {time.perf_counter() - started:.1f} s"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="trivial-20000", help="a suite under bench/.cache/run-spectrum/")
    parser.add_argument("--calls", type=int, default=3)
    args = parser.parse_args()
    root, python = CACHE / args.suite, CACHE / "venv312" / "bin" / "python"
    if not root.is_dir() or not python.exists():
        parser.error(f"--suite: {root} or {python} is missing; run bench/run_spectrum.py once to build them")
    anyio.run(measure, root, python, args.calls)


if __name__ == "__main__":
    main()
