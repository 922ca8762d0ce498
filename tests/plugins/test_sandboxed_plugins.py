"""--sandbox (issue 37) with the plugins that start processes or write outside a test: pytest-xdist's
workers, pytest-cov's data, pytest-testmon's data kept outside the project. Each answer must be the
one the same call gives without the sandbox, through the real server, in the `sandbox` target venv.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from pytest_mcp.adapters.pytest_subprocess.testmon_data import DATA_FILE, data_directory
from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings
from tests.answers import complete
from tests.plugins.affected import PROJECT, TESTS, edit, ran, write
from tests.plugins.support import Environment, target

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def env() -> Environment:
    return target("sandbox")


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # testmon's data under tmp: hidden by the sandbox's own /tmp unless the runner binds it.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("PYTEST_ADDOPTS", "TESTMON_DATAFILE", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        monkeypatch.delenv(name, raising=False)
    project = tmp_path / "project"
    write(project, PROJECT)
    return project


async def execute(root: Path, python: Path, arguments: dict[str, Any], *, sandbox: bool) -> dict[str, Any]:
    container = create_container(Settings(root=root, python=python, sandbox=sandbox))
    async with Client(container.tool_server().server) as client:
        result = await client.call_tool("execute_tests", arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return complete(result.structured_content) | {"_text": result.content[0].text}  # type: ignore[union-attr]


def comparable(answer: dict[str, Any]) -> dict[str, Any]:
    summary = {key: value for key, value in answer["summary"].items() if key != "duration"}
    coverage = answer.get("coverage")
    files = {f["file"]: (f["percent"], f.get("missing", "")) for f in coverage["files"]} if coverage else None
    return {"exit_code": answer["exit_code"], "summary": summary, "tests": ran(answer), "coverage": files}


async def test_workers_and_coverage_answer_the_same_in_the_sandbox(env: Environment, root: Path) -> None:
    arguments = {"workers": 2, "coverage": True, "detail": "all"}
    plain = await execute(root, env.python, arguments, sandbox=False)
    sandboxed = await execute(root, env.python, arguments, sandbox=True)

    assert sandboxed["command"][0] == "bwrap"
    assert "--numprocesses=2" in sandboxed["command"]
    assert comparable(sandboxed) == comparable(plain)
    assert sandboxed["summary"]["total"] == TESTS
    assert sandboxed["coverage"]["files"], sandboxed["_text"]


async def test_affected_runs_keep_testmons_data_outside_the_project_in_the_sandbox(
    env: Environment, root: Path
) -> None:
    first = await execute(root, env.python, {"affected": True, "detail": "all"}, sandbox=True)
    edit(root, "calc.py", "return a * b", "return a * b + 1")
    answer = await execute(root, env.python, {"affected": True, "detail": "all"}, sandbox=True)

    assert first["summary"]["total"] == TESTS, first["_text"]
    assert (data_directory(root) / DATA_FILE).is_file()
    assert not (root / DATA_FILE).exists()
    assert ran(answer) == ["tests/test_mul.py::test_mul_small", "tests/test_mul.py::test_mul_zero"]
    assert (answer["affected"]["run"], answer["affected"]["not_run"]) == (2, TESTS - 2)
