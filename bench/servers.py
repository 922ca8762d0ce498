"""The servers compared: pytest-mcp and a baseline of it, how to start them, and how to read an answer.

Each is a `ServerKind`: how to start it on a suite, which tool runs the tests, and how to read
the counts from its answer. The peers' kinds are in `peers.py`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import baseline
from harness import OURS, TARGET_BIN, TARGET_PYTHON
from mcp import StdioServerParameters
from mcp_types import CallToolResult
from suites import Suite

COUNT_KEYS = ("passed", "failed", "errors", "skipped", "xfailed", "xpassed")


@dataclass(frozen=True)
class ServerKind:
    """How to start one MCP server on a suite, which tool runs the tests, and how to read its counts."""

    key: str
    params: Callable[[Suite], StdioServerParameters]
    run_call: Callable[[Suite], tuple[str, dict[str, Any]]]
    counts: Callable[[CallToolResult], dict[str, int | None]]
    is_peer: bool = True


def structured_or_text_json(result: CallToolResult) -> dict[str, Any]:
    if isinstance(result.structured_content, dict):
        return result.structured_content
    for block in result.content:
        text = getattr(block, "text", None)
        if text:
            with contextlib.suppress(ValueError):
                loaded = json.loads(text)
                if isinstance(loaded, dict):
                    return loaded
    return {}


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") or "" for block in result.content)


def ours_counts(result: CallToolResult) -> dict[str, int | None]:
    """A count the answer leaves out is 0, the default its output schema states (ADR 0009)."""
    if result.structured_content is None or "summary" not in result.structured_content:
        return dict.fromkeys(COUNT_KEYS)
    summary = result.structured_content["summary"]
    return {key: summary.get(key, 0) for key in COUNT_KEYS}


def ours_kinds(env: dict[str, str], before: tuple[str, Path] | None) -> dict[str, ServerKind]:
    """pytest-mcp as this tree has it, and as it was at the `--baseline` commit (`before`: its name and copy)."""

    def ours(suite: Suite) -> StdioServerParameters:
        args = ["--root", str(suite.path), "--python", str(TARGET_PYTHON)]
        return StdioServerParameters(command=str(TARGET_BIN / "pytest-mcp"), args=args, env=env)

    kinds = {OURS: ServerKind(OURS, ours, lambda suite: ("execute_tests", {}), ours_counts, is_peer=False)}
    if before is not None:
        name, copy = f"{OURS} @{before[0]}", before[1]
        before_env = env | {"PYTHONPATH": str(copy)}

        def earlier(suite: Suite) -> StdioServerParameters:
            args = [*baseline.server_args(), "--root", str(suite.path), "--python", str(TARGET_PYTHON)]
            return StdioServerParameters(command=str(TARGET_PYTHON), args=args, env=before_env)

        kinds[name] = ServerKind(name, earlier, lambda suite: ("execute_tests", {}), ours_counts, is_peer=False)
    return kinds


def response_bytes(result: CallToolResult) -> int:
    """Structured content (as JSON) plus every content block: what the client hands to the model."""
    size = len(json.dumps(result.structured_content).encode()) if result.structured_content is not None else 0
    for block in result.content:
        text = getattr(block, "text", None)
        size += len(text.encode()) if text is not None else len(json.dumps(block.model_dump(mode="json")).encode())
    return size


def verdict(counts: dict[str, int | None], truth: dict[str, int]) -> str:
    wrong = [k for k in COUNT_KEYS if counts.get(k) is not None and counts[k] != truth[k]]
    if wrong:
        return "**wrong** (" + ", ".join(f"{k} {counts[k]} vs {truth[k]}" for k in wrong) + ")"
    missing = [k for k in COUNT_KEYS if counts.get(k) is None and truth[k]]
    if missing:
        return "incomplete (no " + ", ".join(missing) + ")"
    return "correct"
