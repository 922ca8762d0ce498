"""langchain-mcp-adapters with LangGraph: MultiServerMCPClient.get_tools() in a graph with a ToolNode.

    .clients/langchain-0.3.2/bin/python langchain_graph.py TARGET SCENARIO PLAN    (see _driver.py)

No LLM: a scripted model node asks for one execute_tests call, then records the ToolMessage the
ToolNode hands back. Its content is what the model is handed; status "error" is how an isError
result reaches it, and the artifact carries the structured content. The tools are those given to
the ToolNode (and so to the model). Progress arrives through the adapters' Callbacks(on_progress).

get_tools() is the adapters' basic usage: every tool call opens its own MCP session, so cancelling
the task running the graph also closes that call's session; the connection staying open between
"cancel" and "after" (see _driver.py) does not apply here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from _driver import Outcome, main, outcome, texts
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_mcp_adapters.callbacks import CallbackContext, Callbacks
from langchain_mcp_adapters.client import MultiServerMCPClient
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


def model_text(content: Any) -> str:
    return content if isinstance(content, str) else texts(content)


class Session:
    def __init__(self, tools: list[Any], progress: list[tuple[float, float | None]]) -> None:
        self.tools = tools
        self.progress = progress

    async def tool_names(self) -> list[str]:
        return [tool.name for tool in self.tools]

    async def call(self, arguments: dict[str, Any]) -> Outcome:
        seen: list[ToolMessage] = []

        def model(state: MessagesState) -> dict[str, Any]:
            last = state["messages"][-1]
            if isinstance(last, ToolMessage):
                seen.append(last)
                return {"messages": [AIMessage(content="done")]}
            call = {"id": "c1", "name": "execute_tests", "args": arguments}
            return {"messages": [AIMessage(content="", tool_calls=[call])]}

        graph = StateGraph(MessagesState)
        graph.add_node("model", model)
        graph.add_node("tools", ToolNode(self.tools))
        graph.add_edge(START, "model")
        graph.add_conditional_edges("model", tools_condition)
        graph.add_edge("tools", "model")
        self.progress.clear()
        try:
            await graph.compile().ainvoke({"messages": [HumanMessage(content="run the tests")]})
        except Exception as error:
            return outcome(None, progress=list(self.progress), raised=error)
        (message,) = seen
        summary = ((message.artifact or {}).get("structured_content") or {}).get("summary")
        is_error = message.status == "error"
        return outcome(model_text(message.content), is_error=is_error, summary=summary, progress=list(self.progress))


@asynccontextmanager
async def connect(target: dict[str, Any]) -> AsyncIterator[Session]:
    progress: list[tuple[float, float | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None, context: CallbackContext) -> None:
        progress.append((done, total))

    if target["transport"] == "stdio":
        command, *args = target["command"]
        connection: dict[str, Any] = {"transport": "stdio", "command": command, "args": args, "env": target["env"]}
    elif target["transport"] == "sse":
        connection = {"transport": "sse", "url": target["url"]}
    else:
        connection = {"transport": "streamable_http", "url": target["url"]}
    client = MultiServerMCPClient({"pytest": connection}, callbacks=Callbacks(on_progress=on_progress))  # type: ignore[dict-item]
    yield Session(await client.get_tools(), progress)


if __name__ == "__main__":
    main(connect)
