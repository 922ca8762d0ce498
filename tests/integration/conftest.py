"""Fixtures for the integration suite: real interpreters, real fixture projects, the real runner."""

from __future__ import annotations

import subprocess
import sys
import venv
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.runner import SubprocessPytestRunner

REPO = Path(__file__).resolve().parents[2]


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
    """A fresh venv with nothing but pytest: no pytest-json-report, no pytest-mcp."""
    env_dir = tmp_path_factory.mktemp("bare-venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "pytest"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, f"pip install pytest failed:\n{install.stdout}\n{install.stderr}"
    assert _can_import(python, "pytest"), "the bare venv must have pytest"
    assert not _can_import(python, "pytest_jsonreport"), "the bare venv must not have pytest-json-report"
    assert not _can_import(python, "pytest_mcp"), "the bare venv must not have pytest-mcp"
    return python


@pytest.fixture(scope="session", params=["with-json-report", "without-json-report"])
def python(request: pytest.FixtureRequest) -> Path:
    """Each target interpreter the runner must handle."""
    if request.param == "with-json-report":
        return request.getfixturevalue("main_python")
    return request.getfixturevalue("bare_python")


@pytest.fixture
def make_runner() -> Callable[[Path, Path], object]:
    """Build the runner under test."""

    def make(python: Path, root: Path) -> SubprocessPytestRunner:
        return SubprocessPytestRunner(TargetInterpreter.given(python), root=root)

    return make
