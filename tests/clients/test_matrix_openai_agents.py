"""openai-agents (MCPServerStdio, MCPServerStreamableHttp, MCPServerSse) in a Runner.run with a scripted model."""

from __future__ import annotations

import pytest

from tests.clients.matrix import Client, ClientMatrix, combos

pytestmark = pytest.mark.e2e


class TestOpenAiAgents(ClientMatrix):
    COMBOS = combos([Client("openai-agents-0.24.0", "openai_agents.py")], ["stdio", "http", "stateless", "sse"])
