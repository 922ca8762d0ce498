"""Measurement: run and discovery overhead, `execute_tests` and `discover_tests` against raw pytest.

Per round and suite, in a shuffled order: raw `python -m pytest -q` (output to /dev/null, the
physical floor) twice, the second as the noise floor, and `execute_tests` on every server, each
a long-lived session; on the all-pass suites also `--collect-only -q` and `discover_tests`. The
answers' sizes, counts and the servers' memory after each call are kept too.
"""

from __future__ import annotations

import contextlib
import random
import time
from typing import Any

from harness import (
    AGAIN,
    TARGET_PYTHON,
    Results,
    Session,
    connect,
    median,
    paired_ratio,
    rss_mb,
    size_text,
    timed_process,
)
from peers import peer_rounds_for
from servers import ServerKind, response_bytes, text_of
from suites import Suite


async def measure_runs(
    kinds: dict[str, ServerKind],
    suites: list[Suite],
    env: dict[str, str],
    rounds: int,
    peer_rounds: int,
    results: Results,
) -> None:
    """Per round and suite, shuffled: raw `pytest -q` and execute_tests on every server; on the
    all-pass suites also raw `pytest --collect-only -q` and discover_tests. One long-lived
    server per (server, suite), as an agent's session would have."""
    raw_argv = {
        "run": [str(TARGET_PYTHON), "-m", "pytest", "-q"],
        "collect": [str(TARGET_PYTHON), "-m", "pytest", "--collect-only", "-q"],
    }
    async with contextlib.AsyncExitStack() as stack:
        sessions: dict[tuple[str, str], Session] = {}
        for suite in suites:
            for key, kind in kinds.items():
                session = await stack.enter_async_context(connect(kind.params(suite), f"{key}-{suite.name}"))
                await session.client.list_tools()  # what an agent does first; the client learns the schemas
                sessions[key, suite.name] = session
        for round_number in range(rounds):
            rng = random.Random(1000 + round_number)  # noqa: S311 - an order, not a secret
            ordered = list(suites)
            rng.shuffle(ordered)
            for suite in ordered:
                # Raw pytest runs twice per round: the second run against the first is the noise floor.
                steps = [("run", "raw"), ("run", AGAIN)]
                with_peers = round_number < peer_rounds_for(suite, rounds, peer_rounds)
                steps += [("run", key) for key, kind in kinds.items() if not kind.is_peer or with_peers]
                if suite.failures == 0 and suite.name != "mixed":
                    steps += [("collect", "raw"), ("collect", AGAIN)] + [
                        ("collect", key) for key, kind in kinds.items() if not kind.is_peer
                    ]
                rng.shuffle(steps)
                for what, who in steps:
                    if who in ("raw", AGAIN):
                        table = results.runs if what == "run" else results.discovery
                        table[suite.name][who].append(await timed_process(raw_argv[what], suite.path, env))
                    else:
                        await call_server(what, kinds[who], suite, sessions[who, suite.name], results)
            print(f"  round {round_number + 1}/{rounds} done", flush=True)


async def call_server(what: str, kind: ServerKind, suite: Suite, session: Session, results: Results) -> None:
    tool, arguments = kind.run_call(suite) if what == "run" else ("discover_tests", {})
    started = time.perf_counter()
    try:
        result = await session.client.call_tool(tool, arguments)
    except Exception as exc:  # a peer's protocol error is a result to report, not a crash
        results.errors[suite.name][kind.key] = f"{type(exc).__name__}: {str(exc)[:200]}"
        return
    elapsed = time.perf_counter() - started
    if what == "collect":
        results.discovery[suite.name][kind.key].append(elapsed)
        results.discovery_sizes[suite.name][kind.key] = response_bytes(result)
    else:
        results.runs[suite.name][kind.key].append(elapsed)
        results.sizes[suite.name][kind.key] = response_bytes(result)
        results.counts[suite.name][kind.key] = kind.counts(result)
        if result.is_error:
            results.errors[suite.name][kind.key] = text_of(result)[:200]
    if session.pid is not None and (rss := rss_mb(session.pid)) is not None:
        results.rss_after_run[suite.name][kind.key].append(rss)


def sections(results: Results, suites: list[Suite], ours_keys: list[str], summary: dict[str, Any]) -> list[str]:
    """The run and discovery tables: pytest-mcp and the raw floor (and the floor against itself) per suite."""
    lines: list[str] = []
    for what, title, raw_words, tool in (
        ("run", "Run overhead", "`pytest -q`", "`execute_tests`"),
        ("collect", "Discovery overhead", "`pytest --collect-only -q`", "`discover_tests`"),
    ):
        table = results.runs if what == "run" else results.discovery
        sizes = results.sizes if what == "run" else results.discovery_sizes
        lines += ["", f"## {title}: pytest-mcp against {raw_words} on the same suite", ""]
        lines += [
            f"| suite | server | {raw_words} median s | {tool} median s | x raw (paired) | x raw (of medians) "
            "| x raw (of minimums) | answer bytes (≈ tokens) | server RSS MB, max after a call |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for suite in suites:
            if suite.name not in table:
                continue
            raw = table[suite.name]["raw"]
            again = table[suite.name].get(AGAIN, [])
            entry = summary["suites"].setdefault(suite.name, {"tests": suite.tests, "failures": suite.failures})
            entry.setdefault("noise", {})[what] = paired_ratio(again, raw)
            lines.append(
                f"| {suite.label} | {raw_words} again: the noise floor | {median(raw):.2f} | {median(again):.2f} | "
                f"{paired_ratio(again, raw):.3f} | {median(again) / median(raw):.3f} | {min(again) / min(raw):.3f} "
                "| | |"
            )
            for key in ours_keys:
                mine = table[suite.name].get(key, [])
                figures = entry.setdefault(what, {}).setdefault(key, {})
                rss = results.rss_after_run[suite.name].get(key, [])
                figures |= {
                    "raw": median(raw),
                    "median": median(mine),
                    "ratio": paired_ratio(mine, raw),
                    "ratio_of_minimums": min(mine) / min(raw) if mine and raw else float("nan"),
                    "bytes": sizes[suite.name].get(key),
                    "rss": max(rss) if rss else None,
                }
                lines.append(
                    f"| {suite.label} | {key} | {median(raw):.2f} | {median(mine):.2f} | {figures['ratio']:.3f} | "
                    f"{median(mine) / median(raw):.3f} | {figures['ratio_of_minimums']:.3f} | "
                    f"{size_text(figures['bytes'])} | "
                    f"{max(rss) if rss else float('nan'):.1f} |"
                )
    return lines


def targets(summary: dict[str, Any], suites: list[Suite], key: str) -> list[tuple[str, str, bool]]:
    """(target, measured, met) for one pytest-mcp variant: run overhead on the large suites, answer sizes."""
    found: list[tuple[str, str, bool]] = []
    for tests, limit in ((2000, 1.05), (10000, 1.03)):
        for suite in (s for s in suites if s.tests == tests):
            figures = summary["suites"][suite.name]["run"].get(key, {})
            ratio, lowest = figures.get("ratio", float("nan")), figures.get("ratio_of_minimums", float("nan"))
            noise = summary["suites"][suite.name].get("noise", {}).get("run", float("nan"))
            measured = f"{ratio:.3f}x (of minimums {lowest:.3f}x; raw against itself {noise:.3f}x)"
            found.append((f"run overhead ≤ {limit:.2f}x raw pytest, {suite.label}", measured, ratio <= limit))
    for failures, limit, label in ((0, 1024, "all-pass answer ≤ 1 KB"), (3, 4096, "3-failure answer ≤ 4 KB")):
        sizes = [
            summary["suites"][s.name]["run"].get(key, {}).get("bytes") or 0
            for s in suites
            if s.failures == failures and s.name != "mixed"
        ]
        found.append((f"{label}, every suite size", f"largest {max(sizes):,} B", max(sizes) <= limit))
    return found
