"""Benchmark: runs in Redis (ADR 0016) against the in-memory default.

    .venv/bin/python bench/run_store.py [--rounds 5] [--polls 200] [--stored 1000]

Needs Debian's redis-server (scripts/setup-services); starts its own on a loopback port.
Each contender is the production container's tool server, serving in this process (no
transport), with the real subprocess runner:

- a 2,000-test run with 3 failures (bench/suites.py), whose result is kept for paging and so,
  with Redis, written there: in memory, with Redis, and in memory again (the noise floor),
  interleaved round by round in a shuffled order; the ratio is the median of per-round ratios;
- `get_test_run` polling (`wait: 0`) of a detached run: in memory (twice: the noise floor), with
  Redis on the instance running it, and with Redis on another instance (which reads the store;
  in memory another instance cannot answer at all);
- Redis memory per stored run: the finished 2,000-test run's key copied `--stored` times
  (DUMP/RESTORE), `used_memory` before and after, and a running run's key likewise.

Writes bench/results/run_store.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from suites import generate

from pytest_mcp.adapters.mcp.tool_server import McpToolServer
from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results" / "run_store.md"
GATED = """
import os
import time


def test_waits():
    gate = os.path.join(os.path.dirname(__file__), "gate")
    while not os.path.exists(gate):
        time.sleep(0.02)
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_redis(workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    binary = shutil.which("redis-server", path=os.pathsep.join([os.environ["PATH"], "/usr/sbin"]))
    if binary is None:
        sys.exit("redis-server is not installed: run scripts/setup-services")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL,
    )
    import redis

    deadline = time.monotonic() + 10
    while True:
        try:
            redis.Redis(port=port).ping()
            return process, port
        except redis.RedisError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def tool_server(root: Path, run_store: str, detach_after: float = 50.0) -> McpToolServer:
    settings = Settings(root=root, run_store=run_store, detach_after=detach_after, log_level="warning")
    container = create_container(settings)
    container.init_resources()
    server: McpToolServer = container.tool_server()
    return server


async def timed_run(server: McpToolServer) -> float:
    started = time.perf_counter()
    result = await server.call("execute_tests", {})
    elapsed = time.perf_counter() - started
    assert (result.structured_content or {})["summary"]["failed"] == 3, result.content
    return elapsed


async def bench_runs(suite_root: Path, redis_url: str, rounds: int) -> dict[str, list[float]]:
    names = {"in memory": "memory", "Redis": redis_url, "in memory again": "memory"}
    times: dict[str, list[float]] = {name: [] for name in names}
    async with AsyncExitStack() as stack:
        servers = {name: tool_server(suite_root, store) for name, store in names.items()}
        for server in servers.values():
            await stack.enter_async_context(server.serving())
        for server in servers.values():
            await timed_run(server)  # warm-up: interpreter detection, .pyc files
        for round_number in range(rounds):
            order = list(servers)
            random.shuffle(order)
            for name in order:
                times[name].append(await timed_run(servers[name]))
            print(f"round {round_number + 1}: " + ", ".join(f"{n} {times[n][-1]:.2f}s" for n in names), flush=True)
    return times


async def bench_polls(gated_root: Path, redis_url: str, polls: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    async with AsyncExitStack() as stack:
        memory = tool_server(gated_root, "memory", detach_after=0.5)
        owner, other = tool_server(gated_root, redis_url, 0.5), tool_server(gated_root, redis_url, 0.5)
        for server in (memory, owner, other):
            await stack.enter_async_context(server.serving())
        runs = {}
        for name, server in (("in memory", memory), ("Redis", owner)):
            started = await server.call("execute_tests", {})
            runs[name] = (started.structured_content or {})["run_id"]
        contenders = {
            "in memory": (memory, runs["in memory"]),
            "in memory again": (memory, runs["in memory"]),
            "Redis, the instance running it": (owner, runs["Redis"]),
            "Redis, another instance": (other, runs["Redis"]),
        }
        times = {name: [] for name in contenders}
        for _ in range(polls):
            for name, (server, run_id) in random.sample(list(contenders.items()), len(contenders)):
                began = time.perf_counter()
                answer = await server.call("get_test_run", {"run_id": run_id, "wait": 0})
                times[name].append(time.perf_counter() - began)
                assert (answer.structured_content or {}).get("status") == "running", answer.content
        (gated_root / "gate").touch()
    return times


def memory_per_run(port: int, stored: int) -> dict[str, float]:
    import redis

    client = redis.Redis(port=port)
    per_run = {}
    # The polled run was stopped with its server: its record is 'cancelled', shaped as a 'running' one.
    kinds = {
        "finished, 2,000 tests, 3 failures, kept for paging": b"finished",
        "running (polled, then cancelled)": b"cancelled",
    }
    for label, status in kinds.items():
        keys = [
            key for key in client.scan_iter("pytest-mcp:run:*") if b'"status":"' + status in client.hget(key, "run")
        ]
        assert keys, f"no {label} run in Redis"
        dumped = client.dump(keys[0])
        before = int(client.info("memory")["used_memory"])
        for number in range(stored):
            client.restore(f"pytest-mcp:run:copy-{status.decode()}-{number}", 0, dumped)
        after = int(client.info("memory")["used_memory"])
        per_run[label] = (after - before) / stored
        per_run[f"{label}: MEMORY USAGE of the one key"] = float(client.memory_usage(keys[0]) or 0)
    return per_run


async def publish_cost(port: int, repetitions: int = 20) -> float:
    """Median seconds to write the finished 2,000-test run (its answer and kept result) to Redis:
    the work a kept run adds to its call, measured apart from pytest's own noise."""
    import redis

    from pytest_mcp.adapters.run_store.redis import RedisRunStore
    from pytest_mcp.domain.models import RunResult
    from pytest_mcp.domain.stored_runs import StoredRun

    client = redis.Redis(port=port)
    key = next(k for k in client.scan_iter("pytest-mcp:run:*") if b'"status":"finished"' in client.hget(k, "run"))
    record = StoredRun.model_validate_json(client.hget(key, "run"))
    kept = RunResult.model_validate_json(client.hget(key, "kept"))
    store = RedisRunStore(f"redis://127.0.0.1:{port}/0", "publish-cost:")
    samples = []
    async with store.attached("bench", lambda run_id: None):
        for _ in range(repetitions):
            began = time.perf_counter()
            await store.put(record, 60, kept)
            samples.append(time.perf_counter() - began)
    return statistics.median(samples)


def ratio(times: dict[str, list[float]], name: str, floor: str) -> float:
    return statistics.median(a / b for a, b in zip(times[name], times[floor], strict=True))


def report(
    runs: dict[str, list[float]], polls: dict[str, list[float]], memory: dict[str, float], stored: int, put: float
) -> str:
    lines = [
        "# Runs in Redis against in memory",
        "",
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.python_version()}, {os.cpu_count()} cores (shared, busy).",
        "",
        "## A 2,000-test run with 3 failures (its result kept, and with Redis written there)",
        "",
        "| contender | median | ratio to in memory (median of per-round ratios) |",
        "| --- | --- | --- |",
    ]
    for name in runs:
        lines.append(f"| {name} | {statistics.median(runs[name]):.3f} s | {ratio(runs, name, 'in memory'):.3f}x |")
    lines += [
        "",
        f"Target: Redis ≤ 1.05x. Noise floor (in memory again): {ratio(runs, 'in memory again', 'in memory'):.3f}x.",
        "",
        f"What Redis adds to such a call, measured apart: writing its answer and kept result, {put * 1000:.1f} ms "
        f"(median of 20), {put / statistics.median(runs['in memory']) * 100:.3f}% of the median in-memory call.",
        "",
        "## get_test_run polling a detached run (wait 0)",
        "",
        "| contender | median | p95 | ratio of medians to in memory |",
        "| --- | --- | --- | --- |",
    ]
    base = statistics.median(polls["in memory"])
    for name, samples in polls.items():
        p95 = statistics.quantiles(samples, n=20)[-1]
        median = statistics.median(samples)
        lines.append(f"| {name} | {median * 1000:.2f} ms | {p95 * 1000:.2f} ms | {median / base:.3f}x |")
    lines += [
        "",
        "## Redis memory per stored run",
        "",
        f"A real run's key copied {stored:,} times; `used_memory` after minus before, divided by {stored:,}.",
        "",
        "| run | bytes per run |",
        "| --- | --- |",
    ]
    lines += [f"| {name} | {value:,.0f} |" for name, value in memory.items()]
    return "\n".join(lines) + "\n"


async def main(rounds: int, polls: int, stored: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        redis_process, port = start_redis(workdir)
        try:
            url = f"redis://127.0.0.1:{port}/0"
            suite = generate(BENCH / ".cache" / "suites", 2000, 3)
            gated = workdir / "gated"
            gated.mkdir()
            (gated / "pytest.ini").write_text("[pytest]\n")
            (gated / "test_gated.py").write_text(GATED)
            runs = await bench_runs(suite.path, url, rounds)
            poll_times = await bench_polls(gated, url, polls)
            memory = memory_per_run(port, stored)
            put = await publish_cost(port)
        finally:
            redis_process.terminate()
            redis_process.wait()
    text = report(runs, poll_times, memory, stored, put)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--polls", type=int, default=200)
    parser.add_argument("--stored", type=int, default=1000)
    arguments = parser.parse_args()
    anyio.run(main, arguments.rounds, arguments.polls, arguments.stored)
