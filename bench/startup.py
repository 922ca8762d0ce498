"""Measurement: start-up, from spawning a server to its `tools/list` answer, against a bare MCP SDK server.

The floor is `bare_server.py` run by the same interpreter, started a second time per repetition
as the noise floor. pytest-mcp is measured with `--python`, with its interpreter detected, and
as a clean (non-editable) install against the bare server in that clean venv.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

import baseline
from harness import (
    BARE_AGAIN,
    BENCH,
    OURS,
    REPO,
    TARGET_BIN,
    TARGET_PYTHON,
    Results,
    connect,
    ensure_venv,
    median,
    paired_ratio,
    source_digest,
)
from mcp import StdioServerParameters
from servers import ServerKind
from suites import Suite


def startup_contenders(
    kinds: dict[str, ServerKind], suite: Suite, env: dict[str, str], clean_venv: Path | None
) -> dict[str, tuple[StdioServerParameters, str]]:
    """Every server to start, and the bare SDK server that is its floor (same interpreter)."""
    bare = "bare SDK server"
    bare_params = StdioServerParameters(command=str(TARGET_PYTHON), args=[str(BENCH / "bare_server.py")], env=env)
    contenders = {
        bare: (bare_params, bare),
        # The floor against itself: how far apart two identical measurements land on this machine.
        BARE_AGAIN: (bare_params, bare),
        OURS: (kinds[OURS].params(suite), bare),
        f"{OURS} (interpreter detected)": (
            StdioServerParameters(command=str(TARGET_BIN / "pytest-mcp"), args=["--root", str(suite.path)], env=env),
            bare,
        ),
    }
    for key in (key for key, kind in kinds.items() if not kind.is_peer and key != OURS):  # the baseline
        earlier = kinds[key].params(suite)
        contenders[key] = (earlier, bare)
        detected = earlier.model_copy(update={"args": [*baseline.server_args(), "--root", str(suite.path)]})
        contenders[f"{key} (interpreter detected)"] = (detected, bare)
    if clean_venv is not None:
        clean_bare = "bare SDK server (clean venv)"
        python = clean_venv / "bin" / "python"
        contenders[clean_bare] = (
            StdioServerParameters(command=str(python), args=[str(BENCH / "bare_server.py")], env=env),
            clean_bare,
        )
        args = ["--root", str(suite.path), "--python", str(TARGET_PYTHON)]
        contenders[f"{OURS} (clean install)"] = (
            StdioServerParameters(command=str(clean_venv / "bin" / "pytest-mcp"), args=args, env=env),
            clean_bare,
        )
        # What a user who configured nothing gets: python3 on PATH (the project venv) is detected.
        contenders[f"{OURS} (clean install, interpreter detected)"] = (
            StdioServerParameters(command=str(clean_venv / "bin" / "pytest-mcp"), args=args[:2], env=env),
            clean_bare,
        )
    for key, kind in kinds.items():
        if kind.is_peer:
            contenders[key] = (kind.params(suite), bare)
    return contenders


async def measure_startup(
    contenders: dict[str, tuple[StdioServerParameters, str]], repetitions: int, results: Results
) -> None:
    """Spawn to `tools/list` answered, every contender once per repetition, in a shuffled order."""
    order = list(contenders)
    for repetition in range(repetitions):
        random.Random(repetition).shuffle(order)  # noqa: S311 - an order, not a secret
        for name in order:
            started = time.perf_counter()
            async with connect(contenders[name][0], f"startup-{name}") as session:
                await session.client.list_tools()
                results.startup[name].append(time.perf_counter() - started)
        print(f"  start-up round {repetition + 1}/{repetitions}", flush=True)


def clean_install(args: argparse.Namespace) -> Path | None:
    """pytest-mcp as a user gets it: a non-editable install of this repository, no dev extras."""
    if args.no_clean_install:
        return None
    try:
        return ensure_venv("clean-install", [str(REPO)], sys.executable, stamp_extra=source_digest())
    except RuntimeError as exc:
        print(f"  no clean-install start-up figure: {exc}", flush=True)
        return None


def section(results: Results, floors: dict[str, str], summary: dict[str, Any]) -> list[str]:
    """The start-up table, fastest first, each server against its floor."""
    lines = ["## Start-up: spawn to `tools/list` answered", ""]
    lines += [
        "| server | median ms | min ms | x its bare SDK floor (paired) | x floor (of minimums) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, samples in sorted(results.startup.items(), key=lambda item: median(item[1])):
        floor = results.startup.get(floors[name], [])
        ratio = paired_ratio(samples, floor)
        summary["startup"][name] = {"median": median(samples), "ratio": ratio, "floor": floors[name]}
        lines.append(
            f"| {name} | {median(samples) * 1000:.0f} | {min(samples) * 1000:.0f} | {ratio:.2f} | "
            f"{min(samples) / min(floor):.2f} |"
        )
    return lines


def targets(summary: dict[str, Any], key: str) -> list[tuple[str, str, bool]]:
    """(target, measured, met) for one pytest-mcp variant: start-up within 1.10x its floor, each way it starts."""
    found: list[tuple[str, str, bool]] = []
    for suffix in ("", " (interpreter detected)", " (clean install)", " (clean install, interpreter detected)"):
        entry = summary["startup"].get(key + suffix)
        label = f"start-up ≤ 1.10x bare SDK server{suffix or ' (--python given)'}"
        noise = summary["startup"].get(BARE_AGAIN, {}).get("ratio", float("nan"))
        measured = f"{entry['ratio']:.2f}x (floor against itself {noise:.2f}x)" if entry else ""
        found.append((label, measured, bool(entry) and entry["ratio"] <= 1.10))
    return found
