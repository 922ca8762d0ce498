"""Benchmark: connect to pytest-mcp in process and make ten tool calls, in both SDK client modes.

    .venv/bin/python bench/in_process.py [--repetitions 200] [--warmup 10]

Each repetition is what an agent developer's test does with `pytest_mcp.testing`: open
`connect(runner)` (the production container, server and client, wired in memory) and make ten
calls (six `execute_tests`, four `discover_tests`) against a 60-test FakeTestRunner script.
The server's audit log is rendered as in production, to a null stream. Prints the median and
p95 per mode and writes the Markdown result to bench/results/in_process.md.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import statistics
import time
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import structlog

from pytest_mcp.testing import FakeTestRunner, connect

RESULTS = Path(__file__).resolve().parent / "results" / "in_process.md"
MODES = ("legacy", "auto")
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("discover_tests", {}),
    ("execute_tests", {}),
    ("execute_tests", {"node_ids": ["tests/test_cart.py::test_discount_3"]}),
    ("discover_tests", {"keywords": "discount and not 7"}),
    ("execute_tests", {"keywords": "total or shipping", "detail": "all"}),
    ("discover_tests", {"markers": "slow"}),
    ("execute_tests", {"markers": "not slow", "failfast": True}),
    ("execute_tests", {"node_ids": ["tests/test_orders.py"], "detail": "summary"}),
    ("discover_tests", {"path": "tests/test_orders.py"}),
    ("execute_tests", {"node_ids": ["tests/test_cart.py::TestShipping"], "show_capture": False}),
]


def scripted_runner() -> FakeTestRunner:
    runner = FakeTestRunner()
    for index in range(20):
        runner.script(f"tests/test_cart.py::test_total_{index}", line=10 + index)
        outcome = "failed" if index % 7 == 3 else "passed"
        runner.script(
            f"tests/test_cart.py::test_discount_{index}", outcome, message="assert 90.0 == 85.0", line=40 + index
        )
        runner.script(f"tests/test_cart.py::TestShipping::test_zone[{index}]", markers=["parametrize"], line=80)
    runner.script("tests/test_orders.py::test_slow_export", "skipped", markers=["slow"], line=5)
    return runner


async def one_repetition(runner: FakeTestRunner, mode: str) -> tuple[float, float]:
    started = time.perf_counter()
    async with connect(runner, mode=mode) as client:  # type: ignore[arg-type]
        connected = time.perf_counter()
        for tool, arguments in CALLS:
            await client.call_tool(tool, arguments)
    finished = time.perf_counter()
    return finished - started, connected - started


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def measure(repetitions: int, warmup: int) -> dict[str, dict[str, float]]:
    figures = {}
    for mode in MODES:
        runner = scripted_runner()
        for _ in range(warmup):
            await one_repetition(runner, mode)
        totals, connects = [], []
        for _ in range(repetitions):
            total, connect_only = await one_repetition(runner, mode)
            totals.append(total * 1000)
            connects.append(connect_only * 1000)
        figures[mode] = {
            "median": statistics.median(totals),
            "p95": percentile(totals, 0.95),
            "max": max(totals),
            "connect_median": statistics.median(connects),
        }
    return figures


def markdown(figures: dict[str, dict[str, float]], repetitions: int, warmup: int) -> str:
    rows = "\n".join(
        f"| `{mode}` | {f['median']:.1f} | {f['p95']:.1f} | {f['max']:.1f} | {f['connect_median']:.1f} |"
        for mode, f in figures.items()
    )
    return f"""# In-process connect + 10 calls

`bench/in_process.py`: `pytest_mcp.testing.connect(runner)` then ten tool calls (six
`execute_tests`, four `discover_tests`) on a 61-test FakeTestRunner script, per SDK client mode.
{repetitions} measured repetitions after {warmup} warm-up ones; milliseconds of wall time.

| mode | median | p95 | max | connect alone (median) |
| --- | ---: | ---: | ---: | ---: |
{rows}

Measured {datetime.now(UTC):%Y-%m-%d} on {platform.system()} {platform.machine()}, Python {platform.python_version()},
mcp {version("mcp")}, pytest-mcp {version("pytest-mcp")} ({os.cpu_count()} CPUs).
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    # The audit log is rendered as the server renders it, then discarded.
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.PrintLoggerFactory(file=open(os.devnull, "w")),  # noqa: SIM115
    )
    figures = anyio.run(measure, args.repetitions, args.warmup)
    for mode, f in figures.items():
        connect_only = f["connect_median"]
        print(f"{mode:>6}: median {f['median']:.1f} ms, p95 {f['p95']:.1f} ms (connect alone {connect_only:.1f} ms)")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(markdown(figures, args.repetitions, args.warmup))
    print(f"written to {RESULTS.relative_to(Path.cwd()) if RESULTS.is_relative_to(Path.cwd()) else RESULTS}")


if __name__ == "__main__":
    main()
