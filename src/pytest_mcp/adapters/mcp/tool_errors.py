"""How a call that gave no result reaches the client: an `isError` result, or a JSON-RPC error.

Invalid arguments and runs without a trustworthy result are *tool* outcomes. MCP 2025-11-25
(SEP-1303) answers them with a `CallToolResult` whose `isError` is true, because that is what
reaches the model: openai-agents replaces a JSON-RPC error's message with "An error occurred
while running the tool", and a LangGraph `ToolNode` lets it abort the agent's whole run
(ADR 0011). `--error-mode jsonrpc` keeps the seed's JSON-RPC errors for clients built on them.

Protocol errors (an unknown tool, a malformed request) and our own bugs stay JSON-RPC errors in
both modes; they do not come through here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NoReturn, Protocol

from mcp import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, TextContent

from pytest_mcp.domain.errors import ExecutionFailed, InvalidArguments

EXECUTION_ERROR = -32000
"""JSON-RPC server-defined error: pytest ran (or tried to) but gave no trustworthy result."""
ERROR_META_KEY = "pytest-mcp/error"
"""The `_meta` key of an isError result that holds the code, reason, message and data."""

ErrorMode = Literal["result", "jsonrpc"]


@dataclass(frozen=True)
class ToolError:
    """One tool outcome without a result, in the seed's classification.

    `code` is -32602 (invalid arguments) or -32000 (no trustworthy result); `reason` says which
    (`invalid_arguments`, or the ExecutionFailed reason such as `usage_error` or `timeout`);
    `message` carries the essentials on its own; `data` is exactly the JSON-RPC error's data.
    """

    code: int
    reason: str
    message: str
    data: dict[str, Any]

    @classmethod
    def invalid(cls, exc: InvalidArguments, tool: str) -> ToolError:
        errors = [{"field": error.field, "reason": error.reason} for error in exc.errors]
        data: dict[str, Any] = {"errors": errors, **({"omitted": exc.omitted} if exc.omitted else {})}
        return cls(INVALID_PARAMS, "invalid_arguments", exc.message_for(tool), data)

    @classmethod
    def failed(cls, exc: ExecutionFailed) -> ToolError:
        return cls(EXECUTION_ERROR, exc.reason, exc.message, {"reason": exc.reason, **exc.details.as_dict()})

    @classmethod
    def stopped(cls, why: str) -> ToolError:
        message = f"the call was stopped because {why}; its pytest processes were stopped with it"
        return cls(EXECUTION_ERROR, "cancelled", message, {"reason": "cancelled"})


class ToolErrors(Protocol):
    """The wire form of a ToolError: returned as a result, or raised as a JSON-RPC error."""

    def answer(self, error: ToolError) -> CallToolResult: ...


class ErrorResults:
    """`--error-mode result` (the default): an `isError` result the model reads and programs parse.

    The only content is the message, because several clients keep only the first text block
    (fastmcp) or only text (openai-agents, langchain-mcp-adapters). There is no
    `structuredContent`: the TypeScript SDK validates it against the tool's `outputSchema` even
    on errors. The classification travels in `_meta["pytest-mcp/error"]` as
    `{code, reason, message, data}`, where every client tried passes `_meta` through untouched.
    """

    def answer(self, error: ToolError) -> CallToolResult:
        details = {"code": error.code, "reason": error.reason, "message": error.message, "data": error.data}
        return CallToolResult(
            content=[TextContent(type="text", text=error.message)],
            is_error=True,
            _meta={ERROR_META_KEY: details},
        )


class JsonRpcErrors:
    """`--error-mode jsonrpc`: the seed's contract, a JSON-RPC error with the code, message and data."""

    def answer(self, error: ToolError) -> NoReturn:
        raise MCPError(code=error.code, message=error.message, data=error.data)
