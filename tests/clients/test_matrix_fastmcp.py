"""fastmcp's Client over stdio, streamable HTTP (stateful and stateless) and SSE."""

from __future__ import annotations

import pytest

from tests.clients.matrix import Client, ClientMatrix, combos

pytestmark = pytest.mark.e2e


class TestFastmcpClient(ClientMatrix):
    COMBOS = combos([Client("fastmcp-4.1.6", "fastmcp_client.py")], ["stdio", "http", "stateless", "sse"])
    RAISES_ON_TOOL_ERROR = True
