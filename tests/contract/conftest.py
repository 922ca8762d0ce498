"""Fixtures for the contract suite: one `side` per runner, each behind the full in-process MCP stack."""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import CallToolResult

from pytest_mcp.testing import FakeTestRunner, connect
from tests.answers import ToolErrorSeen, complete, tool_error
from tests.contract.script import CONTRACT_ROOT, CONTRACT_SCRIPT, CULPRITS_ROOT
from tests.linked_venvs import PYTEST_AND_ITS_DEPENDENCIES, PYTEST_AND_XDIST, venv_with

# The real side asks pytest once per distinct call; its answers are deterministic.
_REAL_ANSWERS: dict[str, CallToolResult] = {}


@dataclass
class Side:
    """One runner under contract, reached through `pytest_mcp.testing.connect`."""

    name: str
    client: Client
    runner: FakeTestRunner | None
    root: Path = CONTRACT_ROOT
    memo: bool = True  # the real side may answer a repeated call from memory (not with state, e.g. --lf)

    @property
    def fake(self) -> FakeTestRunner | None:
        """The fake runner, to script a failure; None on the real side, where the project does it."""
        return self.runner

    async def _answer(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        key = f"{tool} {json.dumps(arguments, sort_keys=True)}"
        memo = self.runner is None and self.memo
        if memo and key in _REAL_ANSWERS:
            return _REAL_ANSWERS[key]
        answer = await self.client.call_tool(tool, arguments)
        if memo:
            _REAL_ANSWERS[key] = answer
        return answer

    async def result(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The structured content of a successful call."""
        answer = await self._answer(tool, arguments)
        assert not answer.is_error, f"{self.name}: expected a result, got error {answer.content}"
        assert answer.structured_content is not None
        return complete(answer.structured_content) | {"_text": answer.content[0].text}  # type: ignore[union-attr]

    async def wire(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The structured content of a successful call as sent: the fields left out at their default stay out."""
        answer = await self._answer(tool, arguments)
        assert not answer.is_error, f"{self.name}: expected a result, got error {answer.content}"
        assert answer.structured_content is not None
        return answer.structured_content

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


def contract_runner(root: Path = CONTRACT_ROOT) -> FakeTestRunner:
    """The fake's half: the script of the contract project, in an environment like the real side's."""
    runner = FakeTestRunner.from_dict(CONTRACT_SCRIPT, root=root)
    return runner.script_environment(python_version=platform.python_version(), pytest_version=pytest.__version__)


@asynccontextmanager
async def open_side(
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    root: Path = CONTRACT_ROOT,
    python: Path = Path(sys.executable),
    fake: Callable[[FakeTestRunner], object] = lambda runner: None,
) -> AsyncIterator[Side]:
    """One side behind connect(): the fake (scripted, then adjusted by `fake`) or the real runner."""
    runner = None
    if name == "fake":
        runner = contract_runner(root)
        fake(runner)
    else:
        plain_pytest_environment(monkeypatch)
    async with connect(runner, root=root, python=python) as client:
        yield Side(name, client, runner, root, memo=root == CONTRACT_ROOT and python == Path(sys.executable))


@pytest.fixture(params=["fake", "subprocess"])
async def side(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> AsyncIterator[Side]:
    async with open_side(request.param, monkeypatch) as opened:
        yield opened


@pytest.fixture(params=["fake", "subprocess"])
async def fresh_side(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, anyio_backend: str
) -> AsyncIterator[Side]:
    """A side on a copy of the contract project, without pytest's cache: for calls that change state."""
    async with open_side(request.param, monkeypatch, root=copy_of_the_project(tmp_path)) as opened:
        yield opened


def copy_of_the_project(tmp_path: Path) -> Path:
    root = tmp_path / "contract"
    shutil.copytree(CONTRACT_ROOT, root, ignore=shutil.ignore_patterns(".pytest_cache", "__pycache__"))
    return root.resolve()


def _git(root: Path, *arguments: str) -> None:
    identity = ("-c", "user.name=pytest-mcp", "-c", "user.email=tests@pytest-mcp.invalid", "-c", "commit.gpgsign=false")
    subprocess.run(["git", *identity, *arguments], cwd=root, check=True, capture_output=True)


def project_with_a_regression(tmp_path: Path) -> Path:
    """A copy of the culprits project in a git repository whose HEAD has gross_price right; the wrong value
    is an edit since."""
    root = tmp_path / "culprits"
    shutil.copytree(CULPRITS_ROOT, root, ignore=shutil.ignore_patterns(".pytest_cache", "__pycache__", ".ran-once"))
    price = root / "shop" / "price.py"
    wrong = price.read_text()
    price.write_text(wrong.replace("(1 + VAT) + 1,", "(1 + VAT),"))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "prices right")
    price.write_text(wrong)
    return root.resolve()


@pytest.fixture(scope="session")
def plugin_free_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A target interpreter with pytest and no plugin: no pytest-xdist, no pytest-cov."""
    return venv_with(tmp_path_factory.mktemp("pytest-only"), PYTEST_AND_ITS_DEPENDENCIES)


@pytest.fixture(scope="session")
def xdist_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A target interpreter with pytest and pytest-xdist (its entry point included), nothing else."""
    return venv_with(tmp_path_factory.mktemp("xdist"), PYTEST_AND_XDIST)


@pytest.fixture(scope="session")
def python_without_pytest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A target interpreter without pytest."""
    return venv_with(tmp_path_factory.mktemp("no-pytest"), ())


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
