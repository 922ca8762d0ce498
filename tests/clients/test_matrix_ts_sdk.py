"""The TypeScript SDK, the latest 1.x and 1.22.0, over stdio, streamable HTTP (stateful and stateless) and SSE."""

from __future__ import annotations

import pytest

from tests.clients.matrix import Client, ClientMatrix, combos

pytestmark = pytest.mark.e2e

CLIENTS = [Client("ts-1.32.2", "ts_client.cjs"), Client("ts-1.22.0", "ts_client.cjs")]


class TestTypeScriptSdk(ClientMatrix):
    COMBOS = combos(CLIENTS, ["stdio", "http", "stateless", "sse"], fast=("ts-1.32.2", "stdio"))
