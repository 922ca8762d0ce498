"""Measurement: the other pytest MCP servers on PyPI, on the same suites through the same client.

They are measured in `overhead.py`'s rounds (every round up to 2,000 tests, the first
`--peer-rounds` above), each installed in its own venv under bench/.cache/; this module says how
to start each, read its counts, and how it compares (wall time, answer bytes, counts).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import OURS, TARGET_PYTHON, Results, ensure_venv, median, paired_ratio, size_text
from mcp import StdioServerParameters
from mcp_types import CallToolResult
from servers import COUNT_KEYS, ServerKind, structured_or_text_json, text_of, verdict
from suites import Suite

# On suites this small (at most about 1.5 s a run) the peers run in every round, not only in the
# first `--peer-rounds`: three samples cannot resolve a few per cent. It costs about 2 minutes;
# on the 10,000-test suites, where a peer's run takes 6 s, it would cost 6 more.
PEERS_EVERY_ROUND_UP_TO = 2000


def peer_rounds_for(suite: Suite, rounds: int, peer_rounds: int) -> int:
    return rounds if suite.tests <= PEERS_EVERY_ROUND_UP_TO else peer_rounds


@dataclass(frozen=True)
class Peer:
    key: str
    requirement: str
    needs_312: bool = False


PEERS = (
    Peer("mcp-pytest-runner", "mcp-pytest-runner==0.2.1", needs_312=True),
    Peer("mcp-tools-py", "mcp-tools-py==0.1.10"),
    Peer("lovranran-mcp-test-runner", "lovranran-mcp-test-runner==0.1.0"),
)


def pytest_summary_counts(text: str) -> dict[str, int | None]:
    """Counts from pytest's own final line (`=== 3 failed, 7 passed in 0.2s ===`); None if absent."""
    lines = [line for line in text.splitlines() if re.search(r"\b(passed|failed|error|errors)\b.* in [\d.]+s", line)]
    if not lines:
        return dict.fromkeys(COUNT_KEYS)
    counts: dict[str, int | None] = dict.fromkeys(COUNT_KEYS, 0)
    for number, word in re.findall(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)", lines[-1]):
        counts["errors" if word.startswith("error") else word] = int(number)
    return counts


def mpr_counts(result: CallToolResult) -> dict[str, int | None]:
    summary = structured_or_text_json(result).get("summary", {})
    return {key: summary.get(key) for key in COUNT_KEYS}


def mtp_counts(result: CallToolResult) -> dict[str, int | None]:
    text = text_of(result)
    words = {
        "passed": "Passed",
        "failed": "Failed",
        "errors": "Error",
        "skipped": "Skipped",
        "xfailed": "Expected failures",
        "xpassed": "Unexpected passes",
    }
    if "Collected " in text:  # the all-pass summary: categories left out are zero
        return {key: int(m.group(1)) if (m := re.search(rf"{word}: (\d+)", text)) else 0 for key, word in words.items()}
    # The failure prompt states no counts; the failures it lists are all one can count.
    listed = len(set(re.findall(r"Test ID: (\S+) - outcome failed", text)))
    return {**dict.fromkeys(COUNT_KEYS), "failed": listed or None}


def lovranran_counts(result: CallToolResult) -> dict[str, int | None]:
    return pytest_summary_counts(str(structured_or_text_json(result).get("stdout", "")))


def peer_kinds(peer_venvs: dict[str, Path], env: dict[str, str]) -> dict[str, ServerKind]:
    """How to start each installed peer on a suite, call its run tool, and read its counts."""
    kinds: dict[str, ServerKind] = {}
    if "mcp-pytest-runner" in peer_venvs:
        mpr = peer_venvs["mcp-pytest-runner"] / "bin" / "mcp-pytest-runner"
        kinds["mcp-pytest-runner"] = ServerKind(
            "mcp-pytest-runner",
            # Runs `pytest -v` from PATH in its working directory; it has no root option.
            lambda suite: StdioServerParameters(command=str(mpr), args=[], env=env, cwd=suite.path),
            lambda suite: ("execute_tests", {"timeout": 1800}),
            mpr_counts,
        )
    if "mcp-tools-py" in peer_venvs:
        mtp = peer_venvs["mcp-tools-py"] / "bin" / "mcp-tools-py"
        mtp_args = ["--python-executable", str(TARGET_PYTHON), "--console-only", "--log-level", "ERROR"]
        kinds["mcp-tools-py"] = ServerKind(
            "mcp-tools-py",
            # Runs `python -m pytest -vv -s --json-report ... ROOT/tests`.
            lambda suite: StdioServerParameters(
                command=str(mtp), args=["--project-dir", str(suite.path), *mtp_args], env=env
            ),
            lambda suite: ("run_pytest_check", {}),
            mtp_counts,
        )
    if "lovranran-mcp-test-runner" in peer_venvs:
        lov = peer_venvs["lovranran-mcp-test-runner"] / "bin" / "mcp-test-runner"
        kinds["lovranran-mcp-test-runner"] = ServerKind(
            "lovranran-mcp-test-runner",
            # Runs `pytest --json-report` from PATH in `path`.
            lambda suite: StdioServerParameters(command=str(lov), args=[], env=env),
            lambda suite: ("run_pytest", {"path": str(suite.path), "timeout_seconds": 1800}),
            lovranran_counts,
        )
    return kinds


def install_peers(args: argparse.Namespace) -> dict[str, Path]:
    venvs: dict[str, Path] = {}
    for peer in () if args.no_peers else PEERS:
        python = args.python312 if peer.needs_312 else sys.executable
        if python is None:
            print(f"  leaving out {peer.key}: it needs Python >= 3.12 (pass --python312)", flush=True)
            continue
        venvs[peer.key] = ensure_venv(f"peer-{peer.key}", [peer.requirement, "mcp<2"], python)
    return venvs


def section(results: Results, suites: list[Suite], keys: list[str], summary: dict[str, Any]) -> list[str]:
    """The peer table: each server's median, its ratios to pytest-mcp and to raw pytest, its answer and counts."""
    peer_rounds = results.config["peer_rounds"]
    lines = [
        "",
        "## Peers: the same suites through the same client",
        "",
        f"Medians over all {results.config['rounds']} rounds on the suites of up to "
        f"{PEERS_EVERY_ROUND_UP_TO:,} tests, and over the {peer_rounds} peer round(s) on the larger ones; "
        "`x pytest-mcp` and `x raw` are the medians of the per-round "
        "ratios to pytest-mcp and to raw pytest in the same rounds. Counts are read from whatever the server "
        "returns (structured fields, or its text) and checked against the suite's truth; pytest-mcp's come from "
        "`structuredContent`.",
        "",
        "| suite | server | median s | x pytest-mcp | x raw | answer bytes (≈ tokens) | counts | server RSS MB |",
        "|---|---|---:|---:|---:|---:|---|---:|",
    ]
    for suite in suites:
        runs = results.runs[suite.name]
        rounds = peer_rounds_for(suite, results.config["rounds"], peer_rounds)
        for key in keys:
            samples = runs.get(key, [])[:rounds]
            counts = results.counts[suite.name].get(key)
            said = verdict(counts, suite.truth) if counts is not None else "no answer"
            if error := results.errors[suite.name].get(key):
                said += f"; error: {error[:80]!r}"
            rss = results.rss_after_run[suite.name].get(key, [])
            size = results.sizes[suite.name].get(key)
            summary["suites"].setdefault(suite.name, {"tests": suite.tests, "failures": suite.failures})
            summary["suites"][suite.name].setdefault("peers", {})[key] = {
                "median": median(samples),
                "bytes": size,
                "counts": said,
                "ratio_to_ours": paired_ratio(samples, runs[OURS][:rounds]),
                "ratio_to_raw": paired_ratio(samples, runs["raw"][:rounds]),
                "samples": samples,
            }
            figures = summary["suites"][suite.name]["peers"][key]
            lines.append(
                f"| {suite.label} | {key} | {median(samples):.2f} | {figures['ratio_to_ours']:.2f} | "
                f"{figures['ratio_to_raw']:.2f} | {size_text(size)} | {said} | "
                f"{max(rss) if rss else float('nan'):.0f} |"
            )
    return lines


def targets(summary: dict[str, Any], suites: list[Suite], peers: list[str], key: str) -> list[tuple[str, str, bool]]:
    """(target, measured, met) against each peer for one pytest-mcp variant: smaller answers, no slower."""
    found: list[tuple[str, str, bool]] = []
    for peer in peers:
        smaller, faster, slowest = True, True, 0.0
        for suite in suites:
            theirs = summary["suites"][suite.name].get("peers", {}).get(peer, {})
            mine = summary["suites"][suite.name].get("peers", {}).get(key, {})
            if theirs.get("bytes") is not None and mine.get("bytes") is not None:
                smaller &= mine["bytes"] < theirs["bytes"]
            if theirs.get("samples") and mine.get("samples"):
                ratio = paired_ratio(mine["samples"], theirs["samples"])
                slowest = max(slowest, ratio)
                faster &= ratio <= 1.03  # "match": within 3%, which a few rounds cannot resolve on this machine
        found.append((f"smaller answers than {peer} on every suite", "yes" if smaller else "no", smaller))
        found.append((f"wall time ≤ {peer}'s (worst suite, ours / theirs)", f"{slowest:.2f}x", faster))
    return found
