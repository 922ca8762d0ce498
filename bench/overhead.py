"""Where one execute_tests call spends CPU, and what the proposed fixes save (applied by monkeypatching).

    .venv/bin/python bench/overhead.py [--tests 10000] [--reps 7]

Wall time on a shared 2-core machine drifts by more than the few per cent the targets are about,
so this measures CPU seconds instead, which other load disturbs far less: the server's own CPU
(this process: event loop, report parsing, presenting) and pytest's (the reaped child), against
raw `python -m pytest -q` on the same generated suite, interleaved. Each variant runs the
production container in-process with one change applied to a local copy of the code:

- `current`: the code as it is in src/.
- `reporter fast path`: proposed fix 1 (bench/proposed.py): the reporter returns at once for a
  passing report that nothing lists, without asking pytest's `pytest_report_teststatus` hook.
- `output to files`: proposed fix 2: pytest's stdout and stderr go to unlinked temporary files
  whose head and tail are read after the run, instead of pipes the event loop wakes up for on
  every progress character pytest flushes (about one wake-up per test).
- `both`: the two together.

Writes bench/results/overhead.md.
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
from typing import Any

import anyio

from pytest_mcp.adapters.pytest_subprocess import process as process_module
from pytest_mcp.adapters.pytest_subprocess import runner as runner_module
from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proposed import FIXES, PROCESS_FIX
from run import CACHE, RESULTS, bench_env
from suites import generate


def _proposed_process_function() -> Any:
    """proposed.PROCESS_FIX compiled in process.py's namespace: the same code `run.py --proposed` runs."""
    namespace = dict(vars(process_module))
    exec(compile(PROCESS_FIX, "proposed.PROCESS_FIX", "exec"), namespace)  # noqa: S102 - our own fix's source
    return namespace["_run_with_output_files"]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def measure(suite: Path, reps: int) -> dict[str, dict[str, list[float]]]:
    container = create_container(Settings(root=suite, python=Path(sys.executable), log_level="error"))
    container.init_resources()
    server = container.tool_server()
    runner = container.subprocess_runner()
    current_plugin = runner._plugin_source
    fast_path = FIXES[0]
    assert fast_path.old.encode() in current_plugin, "the reporter changed; update proposed.FIXES[0]"
    fast_plugin = current_plugin.replace(fast_path.old.encode(), fast_path.new.encode())
    pipes = runner_module.run_in_process_group
    run_to_files = _proposed_process_function()
    variants: dict[str, tuple[bytes, Any]] = {
        "current": (current_plugin, pipes),
        "reporter fast path": (fast_plugin, pipes),
        "output to files": (current_plugin, run_to_files),
        "both": (fast_plugin, run_to_files),
    }
    env = bench_env()
    figures: dict[str, dict[str, list[float]]] = {
        name: {"wall": [], "server": [], "pytest": []} for name in ["raw pytest -q", *variants]
    }
    await server.call("execute_tests", {})  # warm: first-call imports, .pyc
    for rep in range(reps):
        order = list(figures)
        random.Random(rep).shuffle(order)  # noqa: S311 - an order, not a secret
        for name in order:
            wall, own, child = time.perf_counter(), time.process_time(), children_cpu()
            if name == "raw pytest -q":
                await anyio.run_process(
                    [sys.executable, "-m", "pytest", "-q"],
                    cwd=suite,
                    env=env,
                    check=False,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            else:
                runner._plugin_source, runner_module.run_in_process_group = variants[name]
                await server.call("execute_tests", {})
            figures[name]["wall"].append(time.perf_counter() - wall)
            figures[name]["server"].append(time.process_time() - own)
            figures[name]["pytest"].append(children_cpu() - child)
        print(f"  rep {rep + 1}/{reps}", flush=True)
    runner._plugin_source, runner_module.run_in_process_group = current_plugin, pipes
    return figures


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", type=int, default=10000)
    parser.add_argument("--failures", type=int, default=0)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS / "overhead.md")
    args = parser.parse_args(argv)
    suite = generate(CACHE / "suites", args.tests, args.failures)
    subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=suite.path, env=bench_env(), capture_output=True)
    figures = anyio.run(measure, suite.path, args.reps)
    raw = figures["raw pytest -q"]
    raw_cpu = statistics.median(raw["pytest"])
    lines = [
        f"# CPU of one execute_tests call: {suite.label}",
        "",
        f"`bench/overhead.py --tests {args.tests} --failures {args.failures} --reps {args.reps}`: medians of "
        f"{args.reps} interleaved repetitions; the server runs in-process (production container, no MCP transport).",
        "",
        "| variant | server CPU s | pytest CPU s | total CPU x raw | total CPU x raw, minimums | wall s "
        "| wall x raw (paired) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, figure in figures.items():
        total = [a + b for a, b in zip(figure["server"], figure["pytest"], strict=True)]
        paired = statistics.median(a / b for a, b in zip(figure["wall"], raw["wall"], strict=True))
        lines.append(
            f"| {name} | {statistics.median(figure['server']):.3f} | {statistics.median(figure['pytest']):.3f} | "
            f"{statistics.median(total) / raw_cpu:.3f} | {min(total) / min(raw['pytest']):.3f} | "
            f"{statistics.median(figure['wall']):.2f} | {paired:.3f} |"
        )
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
