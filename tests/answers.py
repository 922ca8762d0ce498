"""Answers as a client reads them: results with every field, and tool errors with their shape checked.

The server leaves optional extras at their default out of `structuredContent` (`command`,
`text_output`, `omitted_tests`, ...). Tests that read a result through `complete` see every
field, and since the result models forbid unknown fields, they also prove the wire form is a
valid answer. `tool_error` reads an `isError` result the way ADR 0011 documents it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

import anyio
from mcp import Client
from mcp_types import INVALID_PARAMS, CallToolResult
from pydantic import TypeAdapter

from pytest_mcp.adapters.mcp.tool_errors import ERROR_META_KEY, EXECUTION_ERROR
from pytest_mcp.adapters.mcp.tools import TOOLS as TOOL_CLASSES
from pytest_mcp.domain.environment import EnvironmentResult
from pytest_mcp.domain.models import DiscoveryResult, RunResult

TOOLS = frozenset(tool.name for tool in TOOL_CLASSES)
"""Every tool the server lists: derived from the one place each tool is named (adapters/mcp/tools.py)."""

_ANSWER: TypeAdapter[RunResult | DiscoveryResult | EnvironmentResult] = TypeAdapter(
    Union[RunResult, DiscoveryResult, EnvironmentResult]  # noqa: UP007 - a runtime value, not an annotation
)


def complete(structured: dict[str, Any]) -> dict[str, Any]:
    """Every field of the answer, defaults included; fails when the content is not a valid answer."""
    answer: dict[str, Any] = _ANSWER.dump_python(_ANSWER.validate_python(structured, strict=False), mode="json")
    return answer


@dataclass(frozen=True)
class ToolErrorSeen:
    """A tool error as a client reads it: the `isError` result's text, and its `_meta` classification."""

    code: int
    reason: str
    message: str
    data: dict[str, Any]


def tool_error(result: CallToolResult) -> ToolErrorSeen:
    """The error an `isError` result carries; fails unless it has exactly the documented shape:
    one text block that is the message, no structuredContent, and `_meta["pytest-mcp/error"]`
    with the code, the reason, the same message and the data a JSON-RPC error would carry."""
    assert result.is_error, f"expected an isError result, got {result}"
    assert result.structured_content is None, result.structured_content
    details = (result.meta or {})[ERROR_META_KEY]
    assert set(details) == {"code", "reason", "message", "data"}, details
    assert [(block.type, getattr(block, "text", None)) for block in result.content] == [("text", details["message"])]
    if details["code"] == EXECUTION_ERROR:
        assert details["data"]["reason"] == details["reason"], details
    else:
        assert (details["code"], details["reason"]) == (INVALID_PARAMS, "invalid_arguments"), details
    return ToolErrorSeen(details["code"], details["reason"], details["message"], details["data"])


async def call_error(client: Client, tool: str, arguments: dict[str, Any], *, within: float = 30) -> ToolErrorSeen:
    """Call a tool that must answer with an error (an `isError` result, the default error mode)."""
    with anyio.fail_after(within):
        result = await client.call_tool(tool, arguments)
    return tool_error(result)


def signature_row(group: dict[str, Any]) -> tuple[Any, ...]:
    """(count, outcome, phase, exception, masked message, crash site, members) of any group.

    A group of one is its report under an id (ADR 0020): its signature is read from its
    representative as the server reads a report's, and its one member is the representative."""
    if group["count"] != 1 or group.get("outcome"):
        return (
            group["count"],
            group["outcome"],
            group["phase"],
            group.get("exception"),
            group["message"],
            group.get("crash"),
            list(group["members"]),
        )
    from pytest_mcp.domain.groups import signature_of
    from pytest_mcp.domain.models import ReportedTest

    report = ReportedTest.model_validate(group["representative"])
    found = signature_of(report)
    return (1, found.outcome, found.phase, found.exception, found.message, found.crash, [report.node_id])
