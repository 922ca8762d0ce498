"""The MCP adapter in-process: the container's real wiring, with the fake runner selected."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from mcp import Client, MCPError

from pytest_mcp.adapters.fake.runner import FakeTestRunner
from pytest_mcp.container import Container, create_container
from pytest_mcp.settings import Settings
from tests.answers import TOOLS, call_error

pytestmark = pytest.mark.anyio


@pytest.fixture
def container(tmp_path: Path, runner: FakeTestRunner) -> Container:
    container = create_container(Settings(root=tmp_path, runner="fake", timeout=30, max_timeout=60))
    container.fake_runner.override(runner)
    return container


@pytest.fixture(params=["legacy", "auto"])
async def client(request: Any, container: Container) -> AsyncIterator[Client]:
    async with Client(container.tool_server().server, mode=request.param) as client:
        yield client


async def error_of(client: Client, tool: str, arguments: dict[str, Any]) -> MCPError:
    """A JSON-RPC error: a protocol error or a bug in either mode, every error with --error-mode jsonrpc."""
    with pytest.raises(MCPError) as caught:
        await client.call_tool(tool, arguments)
    return caught.value


async def test_the_container_selects_the_runner_from_configuration(tmp_path: Path) -> None:
    from pytest_mcp.adapters.pytest_subprocess.runner import SubprocessPytestRunner

    real = create_container(Settings(root=tmp_path))
    fake = create_container(Settings(root=tmp_path, runner="fake"))

    assert isinstance(real.runner().inner, SubprocessPytestRunner)
    assert isinstance(fake.runner().inner, FakeTestRunner)


async def test_tools_are_listed_with_strict_input_and_declared_output_schemas(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.input_schema["additionalProperties"] is False
        assert tool.output_schema is not None
    assert tools["execute_tests"].input_schema["properties"]["timeout"]["anyOf"][0]["maximum"] == 60


async def test_a_run_with_failures_is_a_structured_success(client: Client) -> None:
    result = await client.call_tool("execute_tests", {"node_ids": ["tests/test_math.py"]})

    assert result.is_error is False
    assert result.structured_content is not None
    assert result.structured_content["exit_code"] == 1
    assert result.structured_content["summary"]["failed"] == 1
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("1 failed, 1 passed in ")
    assert "FAILED tests/test_math.py::test_div" in text


async def test_unknown_parameters_are_an_error_result_naming_them(client: Client) -> None:
    error = await call_error(client, "execute_tests", {"extra_args": ["-p", "evil"]})

    assert error.code == -32602
    assert "extra_args: unknown parameter" in error.message
    assert error.data == {"errors": [{"field": "extra_args", "reason": error.data["errors"][0]["reason"]}]}


async def test_an_unknown_tool_is_a_json_rpc_invalid_params_error(client: Client) -> None:
    error = await error_of(client, "run_shell", {})

    assert error.code == -32602
    assert "unknown tool 'run_shell'" in error.message


async def test_execution_failures_are_error_results_with_structured_data(
    client: Client, runner: FakeTestRunner
) -> None:
    runner.fail_with("collection_error")

    error = await call_error(client, "execute_tests", {})

    assert (error.code, error.reason) == (-32000, "interrupted")
    assert "tests/test_broken.py: ModuleNotFoundError" in error.message
    data = error.data
    assert data["reason"] == "interrupted"
    assert data["exit_code"] == 2
    assert data["collection_errors"][0]["node_id"] == "tests/test_broken.py"
    assert data["command"][:3] == ["fake", "-m", "pytest"]


async def test_our_own_bugs_are_internal_errors_with_a_correlation_id_and_no_traceback(
    client: Client, runner: FakeTestRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(spec: Any) -> Any:
        raise RuntimeError("secret detail /home/server/path")

    monkeypatch.setattr(runner, "run", broken)

    with structlog.testing.capture_logs() as logs:
        error = await error_of(client, "execute_tests", {})

    assert error.code == -32603
    correlation_id = error.error.data["correlation_id"]
    assert correlation_id in error.message
    assert "secret" not in error.message
    assert "Traceback" not in error.message
    logged = [entry for entry in logs if entry.get("correlation_id") == correlation_id]
    assert logged
    assert logged[0]["outcome"] == "internal_error"


async def test_each_call_emits_one_audit_event_with_the_outcome(client: Client) -> None:
    with structlog.testing.capture_logs() as logs:
        await client.call_tool("execute_tests", {"node_ids": ["tests/test_math.py"], "detail": "all"})

    events = [entry for entry in logs if entry["event"] == "tool_call"]
    assert len(events) == 1
    event = events[0]
    assert event["tool"] == "execute_tests"
    assert event["argument_keys"] == ["detail", "node_ids"]
    assert event["outcome"] == "ok"
    assert event["exit_code"] == 1
    assert isinstance(event["duration_ms"], float)
    assert len(event["args_digest"]) == 16


async def test_discovery_answers_with_node_ids_in_text_and_structure(client: Client) -> None:
    result = await client.call_tool("discover_tests", {"markers": "io or fast"})

    assert result.structured_content is not None
    assert result.structured_content["total"] == 2
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.splitlines()[0] == "2 tests collected, 3 deselected"
    assert "tests/test_math.py::test_add" in text
