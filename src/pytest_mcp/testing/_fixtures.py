"""The fixtures of the `pytest_mcp.testing` plugin; registered by its `pytest_configure` hook."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from pytest_mcp.adapters.fake.runner import FakeTestRunner
from pytest_mcp.testing._connect import connect

# The functions are named apart from their fixtures: pytest before 8.4 takes any module
# function whose name starts with `pytest_` for a hook.


@pytest.fixture(name="pytest_mcp_runner")
def fake_runner() -> FakeTestRunner:
    """A fresh, empty FakeTestRunner. Script it in the test, or override this fixture to share a script."""
    return FakeTestRunner()


@pytest.fixture(name="pytest_mcp_client")
async def client(pytest_mcp_runner: FakeTestRunner, tmp_path: Path, anyio_backend: object) -> AsyncIterator[Client]:
    """An MCP client connected in-process to a pytest-mcp server that runs `pytest_mcp_runner`.

    The server's root is the runner's, or when it has none, the test's `tmp_path`: node ids are
    validated against it as in production (relative, inside the root), and nothing is run there.
    """
    root = None if pytest_mcp_runner.root is not None else tmp_path
    async with connect(pytest_mcp_runner, root=root) as connected:
        yield connected
