"""Test your agent against pytest-mcp without running a suite or spawning a server.

`FakeTestRunner` plays back scripted tests with pytest's selection rules and endings, and
`connect()` yields an `mcp.Client` connected in-process to a fully wired pytest-mcp server:
the production container, validation and presenter, with your runner::

    from pytest_mcp.testing import FakeTestRunner, connect

    runner = FakeTestRunner().script("tests/test_cart.py::test_total", "failed", message="assert 90 == 85")
    async with connect(runner) as client:
        result = await client.call_tool("execute_tests", {})

It is also a pytest plugin, never loaded unless asked for (`-p pytest_mcp.testing`, or
`pytest_plugins = ["pytest_mcp.testing"]` in a top-level conftest). The plugin provides the
fixtures `pytest_mcp_runner` (a fresh FakeTestRunner) and `pytest_mcp_client` (a client
connected to it; an async fixture, run by AnyIO's pytest plugin: mark tests `anyio`).
"""

from __future__ import annotations

import typing as _typing

from pytest_mcp.adapters.fake.recording import RECORDING_FORMAT, RECORDING_VERSION
from pytest_mcp.adapters.fake.runner import FailureKind, FakeTestRunner, ScriptedTest, ScriptError
from pytest_mcp.domain.runs import CollectSpec, RunSpec
from pytest_mcp.testing._connect import connect

__all__ = [
    "RECORDING_FORMAT",
    "RECORDING_VERSION",
    "CollectSpec",
    "FailureKind",
    "FakeTestRunner",
    "RunSpec",
    "ScriptError",
    "ScriptedTest",
    "connect",
]


if _typing.TYPE_CHECKING:
    import pytest as _pytest  # noqa: PT013 - the alias keeps pytest out of the public namespace


def pytest_configure(config: _pytest.Config) -> None:
    """pytest hook: this module was asked for as a plugin, so register its fixtures.

    The fixtures live in a module of their own so that importing `pytest_mcp.testing` never
    imports pytest, and so that their `pytest_`-prefixed names are never mistaken for hooks.
    """
    from pytest_mcp.testing import _fixtures

    if not config.pluginmanager.is_registered(_fixtures):
        config.pluginmanager.register(_fixtures, "pytest-mcp-testing-fixtures")
