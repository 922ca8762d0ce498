"""The Python `mcp` SDK as a program uses it: 1.x through ClientSession, 2.x through mcp.Client (default mode).

    .clients/mcp-1.30.0/bin/python py_mcp.py TARGET SCENARIO PLAN    (see _driver.py)
    .clients/mcp-2.3.0/bin/python py_mcp.py TARGET SCENARIO PLAN

The string a program hands to its model is the result's text content. Cancelling is Task.cancel() on
the task awaiting call_tool. mcp.Client's default mode ("auto") negotiates 2026-07-28 with this
server; the handshake-era wire of 2.x is what openai-agents' sessions use (openai_agents.py).

1.x sends nothing when that task is cancelled: BaseSession.send_request (mcp/shared/session.py in
1.30.0) has no cancellation path, and notifications/cancelled is only ever received, never sent.
So no server can stop a 1.x call on the task's cancellation alone; a 1.x program stops one by
leaving the session it runs in, and the driver cancels a task that owns the call's own session.
(With asyncio's Task.cancel(), stdio_client then closes the server's stdin and waits for it to exit.
Under an anyio cancel scope it does not: the scope cancels that wait too, and anyio's Process.aclose
then SIGKILLs the server, which can no longer stop its run.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

from _driver import Outcome, main, outcome, texts
from mcp import StdioServerParameters
from mcp.client.sse import sse_client

V1 = version("mcp").startswith("1.")


class Session:
    def __init__(self, session: Any) -> None:
        self.session = session

    async def tool_names(self) -> list[str]:
        return [tool.name for tool in (await self.session.list_tools()).tools]

    async def call(self, arguments: dict[str, Any]) -> Outcome:
        progress: list[tuple[float, float | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total))

        try:
            result = await self.session.call_tool("execute_tests", arguments, progress_callback=on_progress)
        except Exception as error:
            return outcome(None, raised=error, progress=progress)
        # 1.x names the fields as on the wire, 2.x in snake case.
        is_error = result.isError if V1 else result.is_error
        structured = (result.structuredContent if V1 else result.structured_content) or {}
        return outcome(texts(result.content), is_error=is_error, summary=structured.get("summary"), progress=progress)


def stdio(target: dict[str, Any]) -> StdioServerParameters:
    command, *args = target["command"]
    return StdioServerParameters(command=command, args=args, env=target["env"])


@asynccontextmanager
async def connect_v1(target: dict[str, Any]) -> AsyncIterator[Session]:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if target["transport"] == "stdio":
        transport: Any = stdio_client(stdio(target))
    elif target["transport"] == "sse":
        transport = sse_client(target["url"])
    else:
        transport = streamable_http_client(target["url"])
    async with transport as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        yield Session(session)


@asynccontextmanager
async def connect_v2(target: dict[str, Any]) -> AsyncIterator[Session]:
    from mcp import Client

    if target["transport"] == "stdio":
        server: Any = stdio(target)
    elif target["transport"] == "sse":
        server = sse_client(target["url"])
    else:
        server = target["url"]  # a URL is streamable HTTP
    async with Client(server) as client:
        yield Session(client)


if __name__ == "__main__":
    main(connect_v1 if V1 else connect_v2, cancel_leaves_session=V1)
