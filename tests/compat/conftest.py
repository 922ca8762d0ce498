"""The compatibility matrix: target venvs for several (Python, pytest) pairs, built once and cached.

Each venv holds nothing but a pinned pytest, on an interpreter pyenv already provides. The
venvs live under `.cache/compat/<combo>/` with a marker naming what they hold, so a rerun
reuses them; a fresh checkout (CI) builds each when its module first needs it, in a few seconds.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.runner import SubprocessPytestRunner

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "compat"
PYENV_VERSIONS = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"


@dataclass(frozen=True)
class Combo:
    """One target environment: a CPython from pyenv and a pinned pytest."""

    python_version: str
    pytest_version: str

    @property
    def name(self) -> str:
        return f"py{self.python_version}-pytest{self.pytest_version}"

    @property
    def pytest_major(self) -> int:
        return int(self.pytest_version.split(".")[0])

    @property
    def base_python(self) -> Path:
        return PYENV_VERSIONS / self.python_version / "bin" / "python"


# Oldest supported pytest on the oldest supported Python, the last 8.x, the first pytest with
# built-in subtests, and the newest pytest on the newest Python here. pytest 9 needs Python >= 3.10.
COMBOS = (
    Combo("3.9.18", "7.4.4"),
    Combo("3.12.1", "8.4.2"),
    Combo("3.10.13", "9.0.3"),
    Combo("3.13.0", "9.2.0"),
)


@dataclass(frozen=True)
class Target:
    combo: Combo
    python: Path


def _build(combo: Combo) -> Path:
    home = CACHE / combo.name
    python = home / "bin" / "python"
    marker = home / "ready.json"
    wanted = {"python": combo.python_version, "pytest": combo.pytest_version}
    if marker.exists() and python.exists() and json.loads(marker.read_text()) == wanted:
        return python
    if home.exists():
        shutil.rmtree(home)
    # Created by the target interpreter itself, not by the one running this suite.
    subprocess.run([str(combo.base_python), "-m", "venv", str(home)], check=True, capture_output=True, timeout=300)
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--quiet"]
    install = subprocess.run(
        [*pip, "install", f"pytest=={combo.pytest_version}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if install.returncode != 0:
        raise RuntimeError(f"{combo.name}: pip install failed:\n{install.stdout}\n{install.stderr}")
    marker.write_text(json.dumps(wanted))
    return python


_BUILT: dict[str, Target] = {}


def compat_target(combo: Combo) -> Target:
    """The combo's venv, built once (or found in the cache); the lock makes the xdist workers that run
    the matrix's modules build each venv once between them."""
    if combo.name not in _BUILT:
        if not combo.base_python.exists():
            message = f"pyenv interpreter missing for {combo.name}: {combo.base_python}"
            if os.environ.get("PYTEST_MCP_THIRD_PARTY") == "required":
                pytest.fail(message)
            pytest.skip(message)
        CACHE.mkdir(parents=True, exist_ok=True)
        with (CACHE / f"{combo.name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            _BUILT[combo.name] = Target(combo, _build(combo))
    return _BUILT[combo.name]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def runner_for(target: Target, root: Path) -> SubprocessPytestRunner:
    return SubprocessPytestRunner(TargetInterpreter.given(target.python), root=root)
