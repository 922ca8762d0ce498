"""last_failed / failed_first (pytest's cache), workers (pytest-xdist), coverage (pytest-cov)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings
from tests.answers import call_error, complete, signature_row
from tests.integration.oracle import pytest_says
from tests.plugins.support import target

pytestmark = pytest.mark.anyio

COUNT_KEYS = ("passed", "failed", "skipped", "xfailed", "xpassed", "errors", "deselected")
PROJECT = {
    "pytest.ini": "[pytest]\n",
    "mathlib.py": (
        "def add(a, b):\n    return a + b\n\n"
        "def div(a, b):\n    if b == 0:\n        raise ZeroDivisionError('no')\n    return a / b\n\n"
        "def unused(x):\n    y = x * 2\n    return y\n"
    ),
    "test_math.py": (
        "import pytest\nfrom mathlib import add, div\n\n"
        "@pytest.mark.parametrize('i', range(40))\ndef test_add(i):\n    assert add(i, 1) == i + 1\n\n"
        "def test_div():\n    assert div(4, 2) == 2\n\n"
        "def test_broken():\n    assert add(1, 1) == 3\n"
    ),
}


def write_project(root: Path) -> Path:
    root.mkdir(parents=True)
    for name, text in PROJECT.items():
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="session")
def plugin_python() -> Path:
    """A target venv with pytest, pytest-xdist and pytest-cov: built once under .cache/plugins/, then reused."""
    return target("workers-coverage").python


async def call(root: Path, python: Path, arguments: dict[str, Any]) -> dict[str, Any]:
    container = create_container(Settings(root=root, python=python))
    async with Client(container.tool_server().server) as client:
        result = await client.call_tool("execute_tests", arguments)
    assert result.structured_content is not None
    return complete(result.structured_content)


def counts(summary: dict[str, Any]) -> dict[str, int]:
    return {key: summary[key] for key in COUNT_KEYS}


async def test_last_failed_reruns_only_last_times_failure_from_pytests_cache(
    tmp_path: Path, json_report_python: Path
) -> None:
    root = write_project(tmp_path / "proj")
    first = await call(root, json_report_python, {})

    rerun = await call(root, json_report_python, {"last_failed": True, "detail": "all"})

    assert first["summary"]["failed"] == 1
    assert [t["node_id"] for t in rerun["tests"]] == ["test_math.py::test_broken"]
    # pytest's own line for this run is "1 failed": --lf filters during collection, it does not deselect.
    assert counts(rerun["summary"]) == {**dict.fromkeys(COUNT_KEYS, 0), "failed": 1}
    assert "--last-failed" in rerun["command"]


async def test_failed_first_runs_last_times_failure_before_the_rest(tmp_path: Path, json_report_python: Path) -> None:
    root = write_project(tmp_path / "proj")
    await call(root, json_report_python, {})

    again = await call(root, json_report_python, {"failed_first": True, "detail": "all"})

    assert again["tests"][0]["node_id"] == "test_math.py::test_broken"
    assert again["summary"]["total"] == 42


async def test_workers_give_the_same_counts_as_a_serial_run(tmp_path: Path, plugin_python: Path) -> None:
    root = write_project(tmp_path / "proj")

    serial = await call(root, plugin_python, {})
    parallel = await call(root, plugin_python, {"workers": 2})

    assert counts(parallel["summary"]) == counts(serial["summary"])
    assert parallel["summary"]["total"] == serial["summary"]["total"] == 42
    assert [member for group in parallel["groups"] for member in signature_row(group)[-1]] == [
        "test_math.py::test_broken"
    ]
    assert "--numprocesses=2" in parallel["command"]
    oracle = pytest_says(plugin_python, root, ["-n", "2"]).counts
    assert counts(parallel["summary"]) == {key: oracle.get(key, 0) for key in COUNT_KEYS}


async def test_coverage_reports_the_total_and_the_worst_files_with_missing_lines(
    tmp_path: Path, plugin_python: Path
) -> None:
    root = write_project(tmp_path / "proj")

    result = await call(root, plugin_python, {"coverage": True})

    coverage = result["coverage"]
    assert 0 < coverage["percent"] < 100
    worst = coverage["files"][0]
    assert worst["file"] == "mathlib.py"
    assert worst["missing"] == "6, 10-11"
    assert [f["percent"] for f in coverage["files"]] == sorted(f["percent"] for f in coverage["files"])


@pytest.mark.parametrize(
    ("arguments", "field", "plugin"),
    [
        ({"workers": 2}, "workers", "pytest-xdist"),
        ({"coverage": True}, "coverage", "pytest-cov"),
        ({"affected": True}, "affected", "pytest-testmon"),
    ],
)
async def test_a_missing_plugin_is_invalid_params_naming_it(
    tmp_path: Path, bare_python: Path, arguments: dict[str, Any], field: str, plugin: str
) -> None:
    root = write_project(tmp_path / "proj")
    # The bare venv has pytest but neither plugin.
    module = {"pytest-xdist": "xdist", "pytest-cov": "pytest_cov", "pytest-testmon": "testmon"}[plugin]
    assert subprocess.run([str(bare_python), "-c", f"import {module}"], capture_output=True).returncode != 0
    container = create_container(Settings(root=root, python=bare_python))

    async with Client(container.tool_server().server) as client:
        refused = await call_error(client, "execute_tests", arguments)

    assert refused.code == -32602
    assert refused.message.endswith(
        f"{field}: needs {plugin}, which is not installed in the target environment; install it there "
        f"(`{bare_python} -m pip install {plugin}`, or `uv pip install --python {bare_python} {plugin}`) "
        "or omit this field"
    )
