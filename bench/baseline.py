"""pytest-mcp as it was at an earlier commit, so a change has a before and an after from one run.

    .venv/bin/python bench/run.py --baseline b6b6ace   # every table gains a "pytest-mcp @b6b6ace" row

`build(rev)` extracts that commit's src/pytest_mcp with `git archive` under bench/.cache/baseline-<sha>;
the server then runs from there with the current venv's dependencies (PYTHONPATH puts the copy first),
plus any dependency that commit declared and the venv no longer has, installed beside the copy
(`--no-deps`: what it needs in turn must still be in the venv).
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "bench" / ".cache"


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    git = shutil.which("git")
    if git is None:
        raise SystemExit("--baseline needs git on PATH")
    return subprocess.run([git, *args], cwd=REPO, capture_output=True)


def build(rev: str) -> tuple[str, Path]:
    """(short sha, directory to put on PYTHONPATH) for `rev`; a name git does not know fails loudly."""
    found = _git("rev-parse", "--short", f"{rev}^{{commit}}")
    if found.returncode != 0:
        raise SystemExit(f"--baseline {rev!r}: not a commit in {REPO} ({found.stderr.decode().strip()})")
    short = found.stdout.decode().strip()
    target = CACHE / f"baseline-{short}"
    archive = _git("archive", short, "src/pytest_mcp")
    archive.check_returncode()
    shutil.rmtree(target, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        for member in tar.getmembers():
            member.name = member.name.removeprefix("src/")
        tar.extractall(target, filter="data")
    pyproject = _git("show", f"{short}:pyproject.toml")
    pyproject.check_returncode()
    declared = tomllib.loads(pyproject.stdout.decode())["project"]["dependencies"]
    missing = [requirement for requirement in declared if not _installed(requirement)]
    if missing:
        install = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), *missing]
        subprocess.run(install, check=True)
    return short, target


def _installed(requirement: str) -> bool:
    name = re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]
    try:
        version(name)
    except PackageNotFoundError:
        return False
    return True


def server_args() -> list[str]:
    """`python` arguments that start the copy's CLI (with the copy first on PYTHONPATH)."""
    return ["-c", "from pytest_mcp.cli import main; main()"]
