"""A tiny scripted "agent" that drives pytest-mcp the way a coding agent does.

It discovers the tests, runs them, reads each failure, asks `fix` to repair it, and then
re-runs only the node ids that failed. A run that times out is retried once with twice the
timeout, and given up on if it times out again. A module that cannot be collected is reported,
not "fixed", and the agent narrows its runs to the files that did collect: a run that selected
the broken module would be interrupted before running anything. A real agent puts a model where
`fix` is; everything else here is what it would send and read.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp import Client
from mcp_types import CallToolResult


@dataclass(frozen=True)
class Failure:
    """What the agent reads from a failing test's report."""

    node_id: str
    message: str
    location: str | None


@dataclass
class Transcript:
    """What the agent did, for its tests to check."""

    discovered: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    rerun: list[str] = field(default_factory=list)
    exit_code: int | None = None
    gave_up: str | None = None


Fix = Callable[[Failure], Awaitable[None]]


async def fix_failing_tests(client: Client, fix: Fix, *, timeout: int = 60) -> Transcript:
    """Discover, run, fix each failure, and re-run only what failed."""
    transcript = Transcript()

    # 1. Discover the tests; collection errors are part of the answer, not an error.
    #    tests, collection_errors and every count are always there, zeros and empty lists included.
    discovery = await _structured(client, "discover_tests", {})
    transcript.discovered = [test["node_id"] for test in discovery["tests"]]
    transcript.broken = [f"{error['node_id']}: {error['message']}" for error in discovery["collection_errors"]]
    if transcript.broken and not transcript.discovered:
        transcript.gave_up = "nothing collects: " + "; ".join(transcript.broken)
        return transcript

    # 2. Run everything (or, with a broken module, every file that collects), retrying once with a
    #    larger timeout if the run is too slow.
    selection = {"node_ids": list(dict.fromkeys(n.split("::", 1)[0] for n in transcript.discovered))}
    run = await _run(client, selection if transcript.broken else {}, timeout, transcript)
    if run is None:
        return transcript

    # 3. Read the failures, one group per cause: its first test's node id, message and location
    # are all the agent needs here (get_test_run pages through the other members' reports).
    transcript.failures = [
        Failure(test["node_id"], test.get("message") or "", test.get("location"))
        for test in (group["representative"] for group in run["groups"])
        if test["outcome"] in ("failed", "error")
    ]
    transcript.exit_code = run["exit_code"]
    if not transcript.failures:
        return transcript

    # 4. "Fix" each one (a real agent edits code here).
    for failure in transcript.failures:
        await fix(failure)

    # 5. Re-run only the node ids that failed.
    transcript.rerun = list(dict.fromkeys(failure.node_id for failure in transcript.failures))
    rerun = await _run(client, {"node_ids": transcript.rerun}, timeout, transcript)
    transcript.exit_code = None if rerun is None else rerun["exit_code"]
    return transcript


async def _run(
    client: Client, arguments: dict[str, Any], timeout: int, transcript: Transcript
) -> dict[str, Any] | None:
    for attempt in (timeout, timeout * 2):
        result = await client.call_tool("execute_tests", {**arguments, "timeout": attempt})
        if not result.is_error:
            transcript.gave_up = None  # a retry that worked
            return _structured_of(result, "execute_tests")
        # An error result: its text is what a model reads; _meta["pytest-mcp/error"] classifies it
        # for programs. Anything but a timeout is not worth retrying.
        error = (result.meta or {})["pytest-mcp/error"]
        transcript.gave_up = error["message"]
        if error["reason"] != "timeout":
            return None
    return None


async def _structured(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return _structured_of(await client.call_tool(tool, arguments), tool)


def _structured_of(result: CallToolResult, tool: str) -> dict[str, Any]:
    assert not result.is_error, f"{tool} answered an error: {result.content}"
    assert result.structured_content is not None, f"{tool} answered without structured content"
    return result.structured_content
