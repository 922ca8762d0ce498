"""Fixtures for the contract suite: one `side` per runner, each behind the full in-process MCP stack."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from mcp import Client
from mcp_types import CallToolResult

from pytest_mcp.testing import FakeTestRunner, connect
from tests.answers import ToolErrorSeen, complete, tool_error
from tests.contract.script import CONTRACT_ROOT, CONTRACT_SCRIPT

# The real side asks pytest once per distinct call; its answers are deterministic.
_REAL_ANSWERS: dict[str, CallToolResult] = {}


@dataclass
class Side:
    """One runner under contract, reached through `pytest_mcp.testing.connect`."""

    name: str
    client: Client
    runner: FakeTestRunner | None

    @property
    def fake(self) -> FakeTestRunner | None:
        """The fake runner, to script a failure; None on the real side, where the project does it."""
        return self.runner

    async def _answer(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        key = f"{tool} {json.dumps(arguments, sort_keys=True)}"
        if self.runner is None and key in _REAL_ANSWERS:
            return _REAL_ANSWERS[key]
        answer = await self.client.call_tool(tool, arguments)
        if self.runner is None:
            _REAL_ANSWERS[key] = answer
        return answer

    async def result(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The structured content of a successful call."""
        answer = await self._answer(tool, arguments)
        assert not answer.is_error, f"{self.name}: expected a result, got error {answer.content}"
        assert answer.structured_content is not None
        return complete(answer.structured_content) | {"_text": answer.content[0].text}  # type: ignore[union-attr]

    async def error(self, tool: str, arguments: dict[str, Any]) -> ToolErrorSeen:
        """The tool error of a call that gave no result, as the model and a program read it."""
        return tool_error(await self._answer(tool, arguments))


def plain_pytest_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment the real side runs pytest in.

    pytest prints untrimmed summaries on CI and sizes lines to COLUMNS; the fake renders an
    80-column local terminal. Third-party plugins are irrelevant here and cost 0.8 s a run.
    """
    for name in ("CI", "BUILD_NUMBER", "COLUMNS", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["fake", "subprocess"])
async def side(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> AsyncIterator[Side]:
    runner = None
    if request.param == "fake":
        runner = FakeTestRunner.from_dict(CONTRACT_SCRIPT, root=CONTRACT_ROOT)
    else:
        plain_pytest_environment(monkeypatch)
    async with connect(runner, root=CONTRACT_ROOT, python=sys.executable) as client:
        yield Side(request.param, client, runner)


_DURATION = re.compile(r" in \d+\.\d+s( \(\d+:\d\d:\d\d\))?")


def normalized(line: str) -> str:
    """A terminal line with its timing removed and separator lines reduced to `<char> <title>`."""
    line = _DURATION.sub(" in Ns", line.rstrip())
    match = re.fullmatch(r"([=_!-])\1+ (.*?) \1+", line)
    return f"{match[1]} {match[2]}" if match else line


def terminal_lines(text: str, start: str = "collected ") -> list[str]:
    """The lines of pytest's output from the first line starting with `start`, normalized."""
    lines = [normalized(line) for line in text.splitlines()]
    first = next((i for i, line in enumerate(lines) if line.startswith(start)), None)
    assert first is not None, f"no line starts with {start!r} in:\n{text}"
    return lines[first:]
