"""Fixtures for the integration suite: real interpreters, real fixture projects, the real runner."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.runner import SubprocessPytestRunner
from tests.linked_venvs import PYTEST_AND_ITS_DEPENDENCIES, PYTEST_AND_XDIST, venv_with

REPO = Path(__file__).resolve().parents[2]
JSON_REPORT_AND_ITS_DEPENDENCIES = (
    *PYTEST_AND_ITS_DEPENDENCIES,
    "pytest_jsonreport",
    "pytest_json_report",
    "pytest_metadata",
)


def _can_import(python: Path, module: str) -> bool:
    probe = subprocess.run([str(python), "-c", f"import {module}"], capture_output=True, timeout=60)
    return probe.returncode == 0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def main_python() -> Path:
    """The interpreter running this suite: the dev venv, which has pytest-json-report."""
    python = Path(sys.executable)
    assert _can_import(python, "pytest_jsonreport"), f"{python} was expected to have pytest-json-report"
    return python


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with nothing but pytest: no pytest-json-report, no pytest-mcp.

    Its pytest is ours, linked (tests/linked_venvs.py): a pip install into a fresh venv took about
    30 s of each xdist worker on a loaded machine, and the index is no part of what these tests check.
    """
    python = venv_with(tmp_path_factory.mktemp("bare-venv"), PYTEST_AND_ITS_DEPENDENCIES)
    assert _can_import(python, "pytest"), "the bare venv must have pytest"
    assert not _can_import(python, "pytest_jsonreport"), "the bare venv must not have pytest-json-report"
    assert not _can_import(python, "pytest_mcp"), "the bare venv must not have pytest-mcp"
    return python


@pytest.fixture(scope="session")
def json_report_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with pytest and pytest-json-report (and its pytest-metadata), nothing else.

    Linked like bare_python. The dev venv (main_python) also has hypothesis, anyio, trio and xdist,
    whose pytest11 entry points every start of pytest there imports: 1.6 s of CPU a start on the
    outcomes project, 0.65 s here. The parametrized tests below start pytest twice per case and
    check the runner with and without pytest-json-report, not with those plugins (tests/plugins do).
    """
    python = venv_with(tmp_path_factory.mktemp("json-report-venv"), JSON_REPORT_AND_ITS_DEPENDENCIES)
    assert _can_import(python, "pytest_jsonreport"), "the json-report venv must have pytest-json-report"
    assert not _can_import(python, "hypothesis"), "the json-report venv must not have the dev venv's plugins"
    assert not _can_import(python, "pytest_mcp"), "the json-report venv must not have pytest-mcp"
    return python


@pytest.fixture(scope="session")
def xdist_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with pytest and pytest-xdist (its entry point included), nothing else; linked like bare_python."""
    python = venv_with(tmp_path_factory.mktemp("xdist-venv"), PYTEST_AND_XDIST)
    assert _can_import(python, "xdist"), "the xdist venv must have pytest-xdist"
    assert not _can_import(python, "hypothesis"), "the xdist venv must not have the dev venv's plugins"
    return python


@pytest.fixture(scope="session", params=["with-json-report", "without-json-report"])
def python(request: pytest.FixtureRequest) -> Path:
    """Each target interpreter the runner must handle."""
    if request.param == "with-json-report":
        return request.getfixturevalue("json_report_python")
    return request.getfixturevalue("bare_python")


@pytest.fixture
def make_runner() -> Callable[[Path, Path], object]:
    """Build the runner under test."""

    def make(python: Path, root: Path) -> SubprocessPytestRunner:
        return SubprocessPytestRunner(TargetInterpreter.given(python), root=root)

    return make
