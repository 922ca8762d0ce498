"""McpPresenter: domain results as MCP tool results (structured content plus compact text)."""

from __future__ import annotations

from mcp_types import CallToolResult, TextContent

from pytest_mcp.domain.models import DiscoveryResult, ReportedTest, RunResult, Summary
from pytest_mcp.ports.presenter import ResultPresenter

_TRACEBACK_LINES = 14
_CAPTURE_LINES = 6
_LISTED_NODE_IDS = 200


def summary_line(summary: Summary) -> str:
    """The counts in pytest's own order and words, e.g. `1 failed, 3 passed, 1 error in 0.21s`."""
    parts = [
        (summary.failed, "failed"),
        (summary.passed, "passed"),
        (summary.skipped, "skipped"),
        (summary.deselected, "deselected"),
        (summary.xfailed, "xfailed"),
        (summary.xpassed, "xpassed"),
        (summary.errors, "error" if summary.errors == 1 else "errors"),
    ]
    counts = ", ".join(f"{count} {word}" for count, word in parts if count)
    return f"{counts or 'no tests ran'} in {summary.duration:.2f}s"


def _last_lines(text: str, count: int) -> list[str]:
    lines = [line for line in text.rstrip().splitlines() if line.strip()]
    if len(lines) <= count:
        return lines
    return [f"[... {len(lines) - count} earlier lines ...]", *lines[-count:]]


def _render_failure(test: ReportedTest) -> list[str]:
    label = "ERROR" if test.outcome == "error" else "FAILED"
    phase = "" if test.phase == "call" else f" [{test.phase}]"
    where = f" ({test.location})" if test.location else ""
    lines = [f"{label} {test.node_id}{phase}{where}"]
    if test.traceback:
        lines += [f"  {line}" for line in _last_lines(test.traceback, _TRACEBACK_LINES)]
    elif test.message:
        lines += [f"  {line}" for line in test.message.splitlines()[:_TRACEBACK_LINES]]
    for stream in ("stdout", "stderr"):
        captured = getattr(test, stream)
        if captured:
            lines.append(f"  captured {stream}:")
            lines += [f"    {line}" for line in _last_lines(captured, _CAPTURE_LINES)]
    return lines


def render_run(result: RunResult) -> str:
    """A compact reading of the run for a model: the summary, then each failure with its evidence."""
    lines = [f"{summary_line(result.summary)} (exit code {result.exit_code})"]
    failures = [test for test in result.tests if test.is_failure]
    for test in failures:
        lines.append("")
        lines += _render_failure(test)
    others = [test for test in result.tests if test.outcome in ("xpassed", "skipped", "xfailed")]
    if others:
        lines.append("")
        lines += [f"{test.outcome.upper()} {test.node_id}: {test.message or ''}".rstrip(": ") for test in others]
    for error in result.collection_errors:
        lines.append(f"COLLECTION ERROR {error.node_id}: {error.message}")
    return "\n".join(lines)


def render_discovery(result: DiscoveryResult) -> str:
    noun = "test" if result.total == 1 else "tests"
    head = f"{result.total} {noun} collected"
    if result.deselected:
        head += f", {result.deselected} deselected"
    if result.collection_errors:
        head += f", {len(result.collection_errors)} collection errors"
    lines = [head]
    lines += [test.node_id for test in result.tests[:_LISTED_NODE_IDS]]
    if result.total > _LISTED_NODE_IDS:
        lines.append(f"[... {result.total - _LISTED_NODE_IDS} more in structuredContent.tests ...]")
    lines += [f"COLLECTION ERROR {error.node_id}: {error.message}" for error in result.collection_errors]
    return "\n".join(lines)


class McpPresenter(ResultPresenter[CallToolResult]):
    """Structured content carries every field; the text block is a reading aid, not a copy."""

    def present_run(self, result: RunResult) -> CallToolResult:
        return CallToolResult(
            content=[TextContent(type="text", text=render_run(result))],
            structured_content=result.model_dump(mode="json", exclude_none=True),
        )

    def present_discovery(self, result: DiscoveryResult) -> CallToolResult:
        return CallToolResult(
            content=[TextContent(type="text", text=render_discovery(result))],
            structured_content=result.model_dump(mode="json", exclude_none=True),
        )
