"""A project's addopts that a request meets (issue 19): what wins, and counts that stay exact.

The target is a venv of pytest and pytest-xdist (xdist_python, linked from ours): the dev venv's
other plugins cost each start of pytest a second of imports; tests/plugins covers the other plugins
on pytest 8 and 9.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings
from tests.answers import signature_row, tool_error
from tests.e2e.e2e_support import pytest_oracle

pytestmark = pytest.mark.anyio

TESTS = """
def test_a():
    assert 1 == 2

def test_b():
    pass

def test_c():
    assert 0, "boom"

def test_d():
    pass
"""


def project(root: Path, addopts: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text(f"[pytest]\naddopts = {addopts}\n")
    (root / "test_ao.py").write_text(TESTS)
    return root


async def call(root: Path, arguments: dict[str, Any], python: Path) -> Any:
    container = create_container(Settings(root=root, python=python))
    async with Client(container.tool_server().server) as client:
        return await client.call_tool("execute_tests", arguments)


@pytest.mark.parametrize("addopts", ["-n 2", "-p xdist -n 2"])
async def test_failfast_under_xdist_from_addopts_is_a_result_with_pytests_exit_code(
    tmp_path: Path, addopts: str, xdist_python: Path
) -> None:
    root = project(tmp_path / "proj", addopts)

    result = await call(root, {"failfast": True}, xdist_python)

    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer["exit_code"] == 2  # pytest-xdist ends a -x stop as an interruption
    assert answer["summary"]["failed"] >= 1
    assert answer["summary"]["passed"] + answer["summary"]["failed"] <= 4


async def test_last_failed_without_pytests_cache_names_the_field_instead_of_running_everything(
    tmp_path: Path, xdist_python: Path
) -> None:
    root = project(tmp_path / "proj", "-p no:cacheprovider")

    error = tool_error(await call(root, {"last_failed": True}, xdist_python))

    assert error.code == -32602
    assert error.data["errors"][0]["field"] == "last_failed"
    assert "-p no:cacheprovider" in error.data["errors"][0]["reason"]


@pytest.mark.parametrize("addopts", ["-p no:terminal", "--tb=line", "-ra", "-v", "-x", "-p no:cacheprovider"])
async def test_counts_stay_pytests_whatever_the_addopts(tmp_path: Path, addopts: str, xdist_python: Path) -> None:
    root = project(tmp_path / "proj", addopts)
    oracle_root = project(tmp_path / "oracle", "-x" if addopts == "-x" else "")
    _, expected = pytest_oracle(oracle_root)

    answer = (await call(root, {}, xdist_python)).structured_content

    assert {key: answer["summary"][key] for key in expected} == expected
    listed = [member for group in answer["groups"] for member in signature_row(group)[-1]]
    assert listed == (["test_ao.py::test_a"] if addopts == "-x" else ["test_ao.py::test_a", "test_ao.py::test_c"])
