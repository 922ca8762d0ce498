"""Opt in to pytest-mcp's test double: the `pytest_mcp_runner` and `pytest_mcp_client` fixtures."""

import pytest

# In your own project this goes in the top-level conftest.py (or run `pytest -p pytest_mcp.testing`);
# pytest reads `pytest_plugins` only from conftests it loads at start-up.
pytest_plugins = ["pytest_mcp.testing"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
