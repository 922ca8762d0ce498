"""Where one execute_tests call spends CPU: the server process and the pytest child, against raw pytest.

    .venv/bin/python bench/overhead.py --tests 10000 --reps 7

CPU seconds are much steadier than wall time on a shared machine, so this is where a few per cent
can be seen. The server runs in-process (the production container, no MCP transport), so its CPU
is this process's; pytest's is the children's. Raw pytest and the call alternate in a shuffled
order. Writes bench/results/overhead_<tests>_<failures>.md.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import anyio

from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import CACHE, RESULTS, bench_env
from suites import generate

RAW = "raw pytest -q"
OURS = "pytest-mcp execute_tests"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def measure(suite: Path, reps: int) -> dict[str, dict[str, list[float]]]:
    container = create_container(Settings(root=suite, python=Path(sys.executable), log_level="error"))
    container.init_resources()
    server = container.tool_server()
    env = bench_env()
    figures: dict[str, dict[str, list[float]]] = {
        name: {"wall": [], "server": [], "pytest": []} for name in [RAW, OURS]
    }
    await server.call("execute_tests", {})  # warm: first-call imports, .pyc
    for rep in range(reps):
        order = list(figures)
        random.Random(rep).shuffle(order)  # noqa: S311 - an order, not a secret
        for name in order:
            wall, own, child = time.perf_counter(), time.process_time(), children_cpu()
            if name == RAW:
                command = [sys.executable, "-m", "pytest", "-q"]
                await anyio.run_process(command, cwd=suite, env=env, check=False, stdout=subprocess.DEVNULL)
            else:
                await server.call("execute_tests", {})
            figures[name]["wall"].append(time.perf_counter() - wall)
            figures[name]["server"].append(time.process_time() - own)
            figures[name]["pytest"].append(children_cpu() - child)
        print(f"  rep {rep + 1}/{reps}", flush=True)
    return figures


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", type=int, default=10000)
    parser.add_argument("--failures", type=int, default=0)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--out", type=Path, help="default: bench/results/overhead_<tests>_<failures>.md")
    args = parser.parse_args(argv)
    out = args.out or RESULTS / f"overhead_{args.tests}_{args.failures}.md"
    suite = generate(CACHE / "suites", args.tests, args.failures)
    subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=suite.path, env=bench_env(), capture_output=True)
    figures = anyio.run(measure, suite.path, args.reps)
    raw = figures[RAW]
    raw_cpu = [a + b for a, b in zip(raw["server"], raw["pytest"], strict=True)]
    lines = [
        f"# CPU of one execute_tests call: {suite.label}",
        "",
        f"`bench/overhead.py --tests {args.tests} --failures {args.failures} --reps {args.reps}`: medians of "
        f"{args.reps} interleaved repetitions; the server runs in-process (production container, no MCP transport).",
        "",
        "| what | server CPU s | pytest CPU s | total CPU x raw | total CPU x raw, minimums | wall s "
        "| wall x raw (paired) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, figure in figures.items():
        total = [a + b for a, b in zip(figure["server"], figure["pytest"], strict=True)]
        paired = statistics.median(a / b for a, b in zip(figure["wall"], raw["wall"], strict=True))
        lines.append(
            f"| {name} | {statistics.median(figure['server']):.3f} | {statistics.median(figure['pytest']):.3f} | "
            f"{statistics.median(total) / statistics.median(raw_cpu):.3f} | {min(total) / min(raw_cpu):.3f} | "
            f"{statistics.median(figure['wall']):.2f} | {paired:.3f} |"
        )
    text = "\n".join(lines) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
