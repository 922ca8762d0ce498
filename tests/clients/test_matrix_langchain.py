"""langchain-mcp-adapters' tools in a LangGraph ToolNode, over stdio, streamable HTTP (stateful, stateless) and SSE."""

from __future__ import annotations

import pytest

from tests.clients.matrix import Client, ClientMatrix, combos

pytestmark = pytest.mark.e2e


class TestLangChainAdapters(ClientMatrix):
    COMBOS = combos(
        [Client("langchain-0.3.2", "langchain_graph.py", stdio_teardown_race=True)],
        ["stdio", "http", "stateless", "sse"],
    )
