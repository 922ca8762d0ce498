"""The tool server's dispatch: arguments parsed once, and detaching decided by the handler, not the name."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from pytest_mcp.adapters.mcp import tool_server
from pytest_mcp.adapters.mcp.tools import TOOLS, Detachable, ExecuteTestsTool
from pytest_mcp.domain.requests import ExecuteTestsRequest, GetTestRunRequest, RunRequest
from pytest_mcp.testing import FakeTestRunner, connect

pytestmark = pytest.mark.anyio


def counting_parses(monkeypatch: pytest.MonkeyPatch, model: type[Any]) -> list[object]:
    calls: list[object] = []
    parse = model.parse.__func__

    def counted(cls: type[Any], arguments: Any, policy: Any) -> Any:
        calls.append(arguments)
        return parse(cls, arguments, policy)

    monkeypatch.setattr(model, "parse", classmethod(counted))
    return calls


def project() -> FakeTestRunner:
    runner = FakeTestRunner()
    runner.script("tests/test_a.py::test_1", "passed")
    runner.script("tests/test_a.py::test_2", "failed", message="assert 1 == 2")
    return runner


@pytest.mark.parametrize("detach_after", [0, 30], ids=["never detaches", "may detach"])
async def test_an_execute_tests_call_parses_its_arguments_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, detach_after: float
) -> None:
    parses = counting_parses(monkeypatch, ExecuteTestsRequest)
    async with connect(project(), root=tmp_path, detach_after=detach_after) as client:
        result = await client.call_tool("execute_tests", {"node_ids": ["tests/test_a.py"]})
    assert not result.is_error
    assert parses == [{"node_ids": ["tests/test_a.py"]}]


@pytest.mark.parametrize("detach_after", [0, 30], ids=["never detaches", "may detach"])
async def test_invalid_arguments_are_parsed_once_and_answered_with_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, detach_after: float
) -> None:
    parses = counting_parses(monkeypatch, ExecuteTestsRequest)
    async with connect(project(), root=tmp_path, detach_after=detach_after) as client:
        result = await client.call_tool("execute_tests", {"maxfail": -1})
    assert result.is_error
    assert "maxfail" in result.content[0].text  # type: ignore[union-attr]
    assert len(parses) == 1


async def test_a_get_test_run_call_parses_its_arguments_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parses = counting_parses(monkeypatch, GetTestRunRequest)
    async with connect(project(), root=tmp_path) as client:
        result = await client.call_tool("get_test_run", {"run_id": "x" * 32})
    assert result.is_error
    assert len(parses) == 1


def test_the_tools_that_run_tests_detach_and_no_other() -> None:
    detachable = [tool.name for tool in TOOLS if Detachable in tool.__mro__]
    runs_tests = [tool.name for tool in TOOLS if issubclass(tool.request_type, RunRequest)]
    assert ExecuteTestsTool.name in detachable
    assert len(runs_tests) >= 2
    assert detachable == runs_tests


def test_the_tool_server_names_no_tool() -> None:
    """Adding a tool touches its handler, request model and presenter: the dispatcher knows none by name."""
    source = inspect.getsource(tool_server)
    assert [tool.name for tool in TOOLS if f'"{tool.name}"' in source] == []
