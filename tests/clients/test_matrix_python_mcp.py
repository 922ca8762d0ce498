"""The Python SDK, 1.x (ClientSession) and 2.x (mcp.Client), over stdio, streamable HTTP (stateful, stateless), SSE."""

from __future__ import annotations

import pytest

from tests.clients.matrix import Client, ClientMatrix, combos

pytestmark = pytest.mark.e2e

CLIENTS = [Client("mcp-1.30.0", "py_mcp.py", stdio_teardown_race=True), Client("mcp-2.3.0", "py_mcp.py")]


class TestPythonSdk(ClientMatrix):
    COMBOS = combos(CLIENTS, ["stdio", "http", "stateless", "sse"])
