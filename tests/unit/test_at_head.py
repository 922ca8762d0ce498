"""What git's HEAD holds of a run's files (ADR 0020): nothing is compared with a HEAD that holds none of them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pytest_mcp.adapters.pytest_subprocess.spectrum import _at_head


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@e.x", "-c", "user.name=t", *args], cwd=root, check=True, capture_output=True
    )


def test_a_project_the_enclosing_repository_ignores_is_compared_with_nothing(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("cache/\n")
    (tmp_path / "tracked.py").write_text("def f():\n    return 1\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "one")
    project = tmp_path / "cache" / "suite"
    project.mkdir(parents=True)
    (project / "lib.py").write_text("def g():\n    return 2\n")

    assert _at_head(project, ["lib.py"]) is None, "git knows nothing of it: not 'changed since HEAD'"
    assert _at_head(tmp_path, ["tracked.py", "new.py"]) == {"tracked.py": b"def f():\n    return 1\n", "new.py": None}


def test_a_repository_with_nothing_committed_is_compared_with_nothing(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "lib.py").write_text("def g():\n    return 2\n")

    assert _at_head(tmp_path, ["lib.py"]) is None
