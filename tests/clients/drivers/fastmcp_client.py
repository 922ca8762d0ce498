"""fastmcp's Client, as a program uses it: call_tool with its defaults.

    .clients/fastmcp-4.1.6/bin/python fastmcp_client.py TARGET SCENARIO PLAN    (see _driver.py)

A URL is given to Client as is: fastmcp picks SSE when the path ends in /sse, streamable HTTP
otherwise. call_tool raises ToolError on an isError result (raise_on_error=True, the default), with
the first text block as its message: str(error) is what a program hands to its model. Cancelling is
cancelling the task awaiting call_tool.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from _driver import Outcome, main, outcome, texts
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from fastmcp.exceptions import ToolError


class Session:
    def __init__(self, client: Client[Any]) -> None:
        self.client = client

    async def tool_names(self) -> list[str]:
        return [tool.name for tool in await self.client.list_tools()]

    async def call(self, arguments: dict[str, Any]) -> Outcome:
        progress: list[tuple[float, float | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total))

        try:
            result = await self.client.call_tool("execute_tests", arguments, progress_handler=on_progress)
        except ToolError as error:
            return outcome(str(error), is_error=True, progress=progress, raised=error)
        except Exception as error:
            return outcome(None, progress=progress, raised=error)
        summary = (result.structured_content or {}).get("summary")
        return outcome(texts(result.content), is_error=result.is_error, summary=summary, progress=progress)


@asynccontextmanager
async def connect(target: dict[str, Any]) -> AsyncIterator[Session]:
    if target["transport"] == "stdio":
        command, *args = target["command"]
        server: Any = StdioTransport(command=command, args=args, env=target["env"])
    else:
        server = target["url"]
    async with Client(server) as client:
        yield Session(client)


if __name__ == "__main__":
    main(connect)
