"""The start-up floor: a minimal MCP SDK server with one trivial tool, served over stdio.

Run by the same interpreter as pytest-mcp (`.venv/bin/python bench/bare_server.py`); `bench/run.py`
compares the time from spawning it to its `tools/list` answer with pytest-mcp's.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, TextContent, Tool

_TOOLS = ListToolsResult(
    tools=[Tool(name="ping", description="Answer pong.", input_schema={"type": "object", "properties": {}})]
)


async def _list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
    return _TOOLS


async def _call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text="pong")])


async def main() -> None:
    server: Server[Any] = Server("bare", version="0", on_list_tools=_list_tools, on_call_tool=_call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
