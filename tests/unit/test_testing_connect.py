"""`connect()`: the production-wired server in process, in both client modes, with any runner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError

from pytest_mcp.testing import FakeTestRunner, RunSpec, connect
from tests.answers import TOOLS, call_error

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["legacy", "auto"])
def mode(request: pytest.FixtureRequest) -> Any:
    return request.param


async def test_ten_calls_reach_the_scripted_runner_in_either_client_mode(tmp_path: Path, mode: Any) -> None:
    runner = FakeTestRunner().script("tests/test_a.py::test_ok").script("tests/test_a.py::test_bad", "failed")

    async with connect(runner, root=tmp_path, mode=mode) as client:
        tools = await client.list_tools()
        results = [await client.call_tool("execute_tests", {"node_ids": ["tests/test_a.py"]}) for _ in range(5)]
        discoveries = [await client.call_tool("discover_tests", {}) for _ in range(4)]

    assert {tool.name for tool in tools.tools} == TOOLS
    assert [r.structured_content["summary"]["failed"] for r in results] == [1] * 5  # type: ignore[index]
    assert [d.structured_content["total"] for d in discoveries] == [2] * 4  # type: ignore[index]
    assert len(runner.calls) == 9


async def test_validation_is_the_servers_own_and_nothing_invalid_reaches_the_runner(tmp_path: Path) -> None:
    runner = FakeTestRunner().script("tests/test_a.py::test_ok")

    async with connect(runner, root=tmp_path) as client:
        error = await call_error(client, "execute_tests", {"node_ids": ["../outside.py"], "extra": 1})

    assert error.code == -32602
    assert "node_ids: [0] leads outside the project root" in error.message
    assert "extra: unknown parameter" in error.message
    assert runner.calls == []


async def test_error_mode_jsonrpc_gives_json_rpc_errors_as_the_server_would(tmp_path: Path) -> None:
    runner = FakeTestRunner().script("tests/test_a.py::test_ok").fail_with("usage_error")

    async with connect(runner, root=tmp_path, error_mode="jsonrpc") as client:
        with pytest.raises(MCPError) as invalid:
            await client.call_tool("execute_tests", {"maxfail": 0})
        with pytest.raises(MCPError) as failed:
            await client.call_tool("execute_tests", {})

    assert invalid.value.code == -32602
    assert invalid.value.error.data == {
        "errors": [{"field": "maxfail", "reason": "input should be greater than or equal to 1"}]
    }
    assert failed.value.code == -32000
    assert failed.value.error.data["reason"] == "usage_error"


async def test_server_settings_apply_to_the_calls(tmp_path: Path) -> None:
    runner = FakeTestRunner().script("tests/test_a.py::test_ok")

    async with connect(runner, root=tmp_path, timeout=7, max_timeout=20) as client:
        await client.call_tool("execute_tests", {})
        refused = await call_error(client, "execute_tests", {"timeout": 30})
    assert "timeout: is 30s; the configured maximum is 20s" in refused.message

    assert isinstance(runner.calls[0], RunSpec)
    assert runner.calls[0].timeout == pytest.approx(7, abs=0.01)
