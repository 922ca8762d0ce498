"""The target environment, scripted for the fake and real for pytest: check_environment, a missing
pytest, and a plugin a field needs (issue 20, findings 3 and 7).

The real side runs with a target interpreter that has only pytest (no pytest-xdist, no pytest-cov),
or nothing at all; the fake side scripts the same environment.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from pytest_mcp.testing import FakeTestRunner
from tests.answers import signature_row
from tests.contract.conftest import Side, open_side
from tests.contract.test_outcomes import GROUPS, SUMMARY

pytestmark = pytest.mark.anyio

PASSES = "tests/test_outcomes.py::test_passes"
SIDES = ["fake", "subprocess"]


@pytest.fixture(params=SIDES)
def side_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def opened(side_name: str, monkeypatch: pytest.MonkeyPatch, anyio_backend: str) -> Callable[..., Any]:
    @asynccontextmanager
    async def opened(
        python: Path, fake: Callable[[FakeTestRunner], object] = lambda runner: None
    ) -> AsyncIterator[Side]:
        async with open_side(side_name, monkeypatch, python=python, fake=fake) as side:
            yield side

    return opened


def interpreter(answer: dict[str, Any]) -> tuple[str, str, str]:
    return answer["interpreter"]["path"], answer["interpreter"]["rule"], answer["interpreter"]["reason"]


async def test_check_environment_reports_the_interpreter_python_and_pytest(side: Side) -> None:
    answer = await side.result("check_environment", {})

    assert (answer["ready"], answer["problems"]) == (True, [])
    assert interpreter(answer) == (
        sys.executable,
        "explicit",
        "--python, PYTEST_MCP_PYTHON or [tool.pytest-mcp] python",
    )
    assert answer["python"]["version"] == platform.python_version()
    assert answer["pytest"]["version"] == pytest.__version__
    # Linux, where the real side's warden is a child subreaper; the fake says so by default.
    assert answer["process_containment"] == "subreaper"


@pytest.mark.parametrize(
    ("arguments", "field", "plugin"),
    [
        ({"workers": 2}, "workers", "pytest-xdist"),
        ({"coverage": True}, "coverage", "pytest-cov"),
        ({"affected": True}, "affected", "pytest-testmon"),
    ],
    ids=["workers", "coverage", "affected"],
)
async def test_a_field_whose_plugin_is_missing_is_refused_naming_it(
    opened: Callable[..., Any], plugin_free_python: Path, arguments: dict[str, Any], field: str, plugin: str
) -> None:
    async with opened(plugin_free_python) as side:
        refused = await side.error("execute_tests", {"node_ids": [PASSES], **arguments})
        environment = await side.result("check_environment", {})

    assert (refused.code, refused.reason) == (-32602, "invalid_arguments")
    assert refused.message == (
        f"invalid arguments for execute_tests: {field}: needs {plugin}, which is not installed in the "
        f"target environment; install it there (`{plugin_free_python} -m pip install {plugin}`, or "
        f"`uv pip install --python {plugin_free_python} {plugin}`) or omit this field"
    )
    assert plugin not in [found["name"] for found in environment["plugins"]]


async def test_without_pytest_the_environment_says_what_to_do_and_every_call_fails_as_unavailable(
    opened: Callable[..., Any], python_without_pytest: Path
) -> None:
    def without_pytest(runner: FakeTestRunner) -> None:
        runner.script_environment(python_version=platform.python_version(), pytest_version=None)

    async with opened(python_without_pytest, without_pytest) as side:
        environment = await side.result("check_environment", {})
        run = await side.error("execute_tests", {})
        discovery = await side.error("discover_tests", {})

    prefix = python_without_pytest.parents[1]
    assert (environment["ready"], environment["pytest"]) == (False, None)
    assert environment["problems"] == [
        f"pytest is not installed for {python_without_pytest} (chosen by --python) (ModuleNotFoundError: No module "
        f"named 'pytest'): install pytest into {prefix}, e.g. with `{python_without_pytest} -m pip install pytest` "
        f"(or `uv pip install --python {python_without_pytest} pytest`), or point --python at an interpreter that "
        "has it. pytest-mcp never installs anything itself"
    ]
    assert (environment["python"]["executable"], environment["python"]["prefix"]) == (
        str(python_without_pytest),
        str(prefix),
    )
    unavailable = (
        f"pytest cannot be run with the target interpreter {python_without_pytest} (No module named 'pytest'); "
        "install pytest into that environment or point --python at one that has it"
    )
    assert [(error.reason, error.message) for error in (run, discovery)] == [("pytest_unavailable", unavailable)] * 2


async def test_with_pytest_xdist_installed_workers_give_the_serial_runs_counts(
    opened: Callable[..., Any], xdist_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def with_xdist(runner: FakeTestRunner) -> None:
        runner.install("pytest-xdist")

    async with opened(xdist_python, with_xdist) as side:
        monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)  # pytest-xdist loads by its entry point
        parallel = await side.result("execute_tests", {"node_ids": ["tests"], "workers": 2})
        environment = await side.result("check_environment", {})

    assert parallel["exit_code"] == 1
    # The same counts as the serial run of the same project (test_outcomes.SUMMARY), zeros aside.
    assert {key: value for key, value in parallel["summary"].items() if value and key != "duration"} == {
        key: value for key, value in SUMMARY.items() if value
    }
    # Workers finish in their own order; which tests are listed is the same.
    # The reporter reads each failure's exception and crash site from the reports the workers send.
    signatures = sorted(
        (outcome, phase, str(exc), message)
        for _, outcome, phase, exc, message, *_ in map(signature_row, parallel["groups"])
    )
    assert signatures == sorted((outcome, phase, str(exc), message) for _, outcome, phase, exc, message, *_ in GROUPS)
    listed = [member for group in parallel["groups"] for member in signature_row(group)[-1]]
    skipped = [
        f"tests/test_outcomes.py::{name}" for name in ("test_skipped_by_marker", "test_skips_itself", "test_xfails")
    ]
    assert sum(reason["count"] for reason in parallel["reasons"]) == len(skipped)
    assert sorted(listed + skipped) == sorted(
        f"tests/test_outcomes.py::{name}"
        for name in (
            "test_fails",
            "test_skipped_by_marker",
            "test_skips_itself",
            "test_xfails",
            "test_xpasses",
            "test_setup_errors",
            "test_teardown_errors",
            "test_prints_then_fails",
        )
    )
    assert "--numprocesses=2" in parallel["command"]
    assert [plugin["name"] for plugin in environment["plugins"]] == ["pytest-xdist"]
