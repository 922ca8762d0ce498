"""Measurement (opt-in, `run.py --large`): pytest-mcp at 50,000 and 100,000 tests (issue 31).

Per round and suite, in a shuffled order: raw `python -m pytest -q` twice (the second is the
noise floor), `execute_tests` on a server with `--detach-after 0` (never detached, not followed
test by test), and on one with `--detach-after 5` (detached after 5 s and followed; the client
then polls get_test_run, with a progress token, until the final answer); on the all-pass suites
also `--collect-only -q` twice and `discover_tests`. For each: the wall time, the CPU time of the
pytest processes (the server's reaped children, from /proc/PID/stat, or getrusage for raw pytest,
both far less disturbed by other load than wall time), their peak RSS (VmHWM, sampled every
0.1 s), the server's own CPU time and RSS, and for the detached runs the progress notifications
received and the time from pytest's exit (seen through a pidfd) to the final answer.
"""

from __future__ import annotations

import contextlib
import os
import random
import resource
import subprocess
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from harness import TARGET_BIN, TARGET_PYTHON, Session, connect, median, paired_ratio, rss_mb, size_text
from mcp import StdioServerParameters
from servers import ours_counts, response_bytes, text_of
from suites import Suite

RAW, AGAIN = "raw pytest", "raw pytest again: the noise floor"
UNDETACHED, DETACHED = "pytest-mcp, --detach-after 0", "pytest-mcp, detached at 5 s, get_test_run polled"
DISCOVER = "pytest-mcp discover_tests"
FAILURES = (0, 3, 500)
_TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Sample:
    wall: float
    child_cpu: float
    child_peak_mb: float
    server_cpu: float = 0.0
    server_rss_mb: float = 0.0
    notifications: int = 0
    polls: int = 0
    exit_to_answer: float | None = None
    answer_bytes: int | None = None
    counts: dict[str, int | None] = field(default_factory=dict)


Table = defaultdict[str, defaultdict[str, list[Sample]]]  # suite -> contender -> samples


def _table() -> Table:
    return defaultdict(lambda: defaultdict(list))


@dataclass
class LargeResults:
    runs: Table = field(default_factory=_table)
    collects: Table = field(default_factory=_table)
    errors: list[str] = field(default_factory=list)


def _stat(pid: int) -> tuple[float, float]:
    """(own CPU, reaped children's CPU) of a process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return (utime + stime) / _TICK, (cutime + cstime) / _TICK


def _descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        parent = queue.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            with contextlib.suppress(OSError):
                children = [int(child) for child in (task / "children").read_text().split()]
                found += children
                queue += children
    return found


def _peak_mb(pids: Sequence[int]) -> float:
    peak = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
    return peak / 1024


class PeakSampler:
    """The largest VmHWM of the processes under `root` (and `root` itself, if asked), every 0.1 s."""

    def __init__(self, root: int, include_root: bool) -> None:
        self.root, self.include_root, self.peak = root, include_root, 0.0

    async def run(self) -> None:
        while True:
            pids = _descendants(self.root) + ([self.root] if self.include_root else [])
            self.peak = max(self.peak, _peak_mb(pids))
            await anyio.sleep(0.1)


async def _raw(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> Sample:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = await anyio.open_process(
        list(argv), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    sampler = PeakSampler(process.pid, include_root=True)
    async with anyio.create_task_group() as group:
        group.start_soon(sampler.run)
        await process.wait()
        group.cancel_scope.cancel()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return Sample(wall, cpu, sampler.peak)


class ExitWatch:
    """The instant pytest (the warden's child, the deepest process under the server) exits, via a pidfd."""

    def __init__(self, server: int) -> None:
        self.server, self.exited = server, None  # type: float | None

    async def run(self) -> None:
        pid = None
        while pid is None:  # the run's processes appear a few ms after the call
            chain = _descendants(self.server)
            pid = chain[-1] if len(chain) >= 2 else None
            if pid is None:
                await anyio.sleep(0.01)
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            return
        try:
            await anyio.wait_readable(fd)
            self.exited = time.perf_counter()
        finally:
            os.close(fd)


async def _ours(session: Session, tool: str, *, detached: bool) -> Sample:
    assert session.pid is not None
    own_before, children_before = _stat(session.pid)
    notifications = 0

    async def progress(done: float, total: float | None, message: str | None) -> None:
        nonlocal notifications
        notifications += 1

    sampler = PeakSampler(session.pid, include_root=False)
    exits = ExitWatch(session.pid)
    polls = 0
    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        group.start_soon(sampler.run)
        if detached:
            group.start_soon(exits.run)
        result = await session.client.call_tool(tool, {}, progress_callback=progress if detached else None)
        answer = result.structured_content or {}
        while answer.get("status") == "running":
            polls += 1
            arguments = {"run_id": answer["run_id"]}
            result = await session.client.call_tool("get_test_run", arguments, progress_callback=progress)
            answer = result.structured_content or {}
        answered = time.perf_counter()
        group.cancel_scope.cancel()
    own_after, children_after = _stat(session.pid)
    if result.is_error:
        raise RuntimeError(text_of(result)[:300])
    return Sample(
        wall=answered - started,
        child_cpu=children_after - children_before,
        child_peak_mb=sampler.peak,
        server_cpu=own_after - own_before,
        server_rss_mb=rss_mb(session.pid) or 0.0,
        notifications=notifications,
        polls=polls,
        exit_to_answer=answered - exits.exited if exits.exited is not None else None,
        answer_bytes=response_bytes(result),
        counts=ours_counts(result) if tool == "execute_tests" else {},
    )


async def measure(suites: list[Suite], env: dict[str, str], rounds: int) -> LargeResults:
    """Interleaved rounds over every suite; one long-lived server per (suite, detach setting)."""
    results = LargeResults()
    raw = [str(TARGET_PYTHON), "-m", "pytest", "-q"]
    collect = [*raw, "--collect-only"]

    def params(suite: Suite, detach_after: int) -> StdioServerParameters:
        args = ["--root", str(suite.path), "--python", str(TARGET_PYTHON), "--detach-after", str(detach_after)]
        return StdioServerParameters(command=str(TARGET_BIN / "pytest-mcp"), args=args, env=env)

    async with contextlib.AsyncExitStack() as stack:
        sessions: dict[tuple[str, str], Session] = {}
        for suite in suites:
            for key, detach_after in ((UNDETACHED, 0), (DETACHED, 5)):
                session = await stack.enter_async_context(connect(params(suite, detach_after), f"large-{suite.name}"))
                await session.client.list_tools()
                sessions[suite.name, key] = session
        for round_number in range(rounds):
            rng = random.Random(3100 + round_number)  # noqa: S311 - an order, not a secret
            ordered = list(suites)
            rng.shuffle(ordered)
            for suite in ordered:
                steps = [("run", RAW), ("run", AGAIN), ("run", UNDETACHED), ("run", DETACHED)]
                if suite.failures == 0:
                    steps += [("collect", RAW), ("collect", AGAIN), ("collect", DISCOVER)]
                rng.shuffle(steps)
                for what, who in steps:
                    table = results.runs if what == "run" else results.collects
                    try:
                        if who in (RAW, AGAIN):
                            sample = await _raw(raw if what == "run" else collect, suite.path, env)
                        elif what == "collect":
                            sample = await _ours(sessions[suite.name, UNDETACHED], "discover_tests", detached=False)
                        else:
                            sample = await _ours(sessions[suite.name, who], "execute_tests", detached=who == DETACHED)
                    except Exception as exc:  # reported in the table, not a crash of a 40-minute run
                        results.errors.append(f"{suite.label}, {who}, {what}: {type(exc).__name__}: {exc}")
                        continue
                    table[suite.name][who].append(sample)
                    print(f"  {suite.label}: {what} {who}: {sample.wall:.1f} s", flush=True)
            print(f"  round {round_number + 1}/{rounds} done", flush=True)
    return results


def _ratio(mine: list[Sample], raw: list[Sample], attribute: str) -> float:
    return paired_ratio([getattr(s, attribute) for s in mine], [getattr(s, attribute) for s in raw])


def _rounds(mine: list[Sample], raw: list[Sample]) -> str:
    return ", ".join(f"{a.wall / b.wall:.3f}" for a, b in zip(mine, raw, strict=False))


def render(results: LargeResults, suites: list[Suite], config: dict[str, Any]) -> str:
    lines = [
        "# pytest-mcp at 50,000 and 100,000 tests",
        "",
        f"Measured by `{config['command']}` on {config['date']} ({config['machine']}; Python "
        f"{config['python_version']}, pytest {config['pytest']}), {config['rounds']} interleaved round(s), "
        f"{config['minutes']} minutes. **The machine was shared and loaded** (other sessions ran tests on its "
        "2 cores): wall-time ratios move by several per cent, as the noise floor rows show; the CPU-time "
        "ratios are the steadier figures. See ADR 0018 for what these mean.",
        "",
        "Each ratio is the median over rounds of mine / raw `pytest -q` of the same round; the noise floor is "
        "raw pytest against itself in the same rounds. Child CPU is the pytest processes' CPU time (raw: "
        "getrusage of children; pytest-mcp: the server's reaped children, the warden and pytest). Child peak "
        "RSS is VmHWM sampled every 0.1 s.",
        "",
        "## Runs",
        "",
        "| suite | contender | wall s (median) | x raw, wall, per round | x raw, wall (median) | x raw, child CPU "
        "| child peak RSS MB | x raw, child RSS | server CPU s | server RSS MB | polls | progress notifications "
        "| pytest exit to answer s | answer bytes (≈ tokens) | counts |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for suite in suites:
        raw = results.runs[suite.name][RAW]
        for who in (AGAIN, UNDETACHED, DETACHED):
            mine = results.runs[suite.name][who]
            if not mine or not raw:
                continue
            ours = who not in (AGAIN,)
            exits = [s.exit_to_answer for s in mine if s.exit_to_answer is not None]
            lines.append(
                f"| {suite.label} | {who} | {median([s.wall for s in mine]):.1f} | {_rounds(mine, raw)} "
                f"| {_ratio(mine, raw, 'wall'):.3f} | {_ratio(mine, raw, 'child_cpu'):.3f} "
                f"| {max(s.child_peak_mb for s in mine):.0f} | {_ratio(mine, raw, 'child_peak_mb'):.3f} "
                + (
                    f"| {median([s.server_cpu for s in mine]):.2f} | {max(s.server_rss_mb for s in mine):.1f} "
                    f"| {max(s.polls for s in mine)} | {max(s.notifications for s in mine)} "
                    f"| {', '.join(f'{e:.3f}' for e in exits) or 'n/a'} | {size_text(mine[-1].answer_bytes)} "
                    f"| {_counts_text(mine[-1].counts, suite)} |"
                    if ours
                    else "| | | | | | | |"
                )
            )
    lines += [
        "",
        "## Discovery: `discover_tests` against `pytest --collect-only -q`",
        "",
        "| suite | contender | wall s (median) | x raw, wall, per round | x raw, wall (median) | x raw, child CPU "
        "| child peak RSS MB | server RSS MB | answer bytes (≈ tokens) |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for suite in suites:
        raw = results.collects[suite.name][RAW]
        for who in (AGAIN, DISCOVER):
            mine = results.collects[suite.name][who]
            if not mine or not raw:
                continue
            lines.append(
                f"| {suite.label} | {who} | {median([s.wall for s in mine]):.1f} | {_rounds(mine, raw)} "
                f"| {_ratio(mine, raw, 'wall'):.3f} | {_ratio(mine, raw, 'child_cpu'):.3f} "
                f"| {max(s.child_peak_mb for s in mine):.0f} "
                + (
                    f"| {max(s.server_rss_mb for s in mine):.1f} | {size_text(mine[-1].answer_bytes)} |"
                    if who == DISCOVER
                    else "| | |"
                )
            )
    if results.errors:
        lines += ["", "## Errors", "", *(f"- {error}" for error in results.errors)]
    return "\n".join(lines) + "\n"


def _counts_text(counts: dict[str, int | None], suite: Suite) -> str:
    truth = suite.truth
    right = all(counts.get(key) == truth[key] for key in ("passed", "failed"))
    return f"{counts.get('passed')} passed, {counts.get('failed')} failed ({'right' if right else '**wrong**'})"
