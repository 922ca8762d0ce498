"""git is started off the event loop when a run's culprits are compared with HEAD (issue 46).

Starting a process waits until the child has exec'd; on a loaded machine that wait held the
event loop for tens of milliseconds at every run with failures. Shown by where each git process
is started from: on the code before, `anyio.run_process` started both on the loop's thread.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_mcp.adapters.pytest_subprocess.spectrum import ProjectCode, with_digests
from pytest_mcp.adapters.worker_threads import ThreadWorker
from pytest_mcp.domain.localization import CodeFunction, Spectrum, Trace

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git on PATH"),
]

SOURCE = "def add(a, b):\n    return a + b\n"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def committed(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    (tmp_path / "calc.py").write_text(SOURCE)
    _git(tmp_path, "add", "calc.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "calc")
    (tmp_path / "calc.py").write_text(SOURCE.replace("a + b", "a + b + 1"))  # changed since HEAD
    return tmp_path


async def test_git_is_started_off_the_event_loop(committed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started_on: list[tuple[str, bool]] = []
    real_popen = subprocess.Popen

    class Watched(real_popen):  # type: ignore[misc, valid-type]
        def __init__(self, args: Any, *rest: Any, **options: Any) -> None:
            started_on.append((" ".join(args[:2]), threading.current_thread() is threading.main_thread()))
            super().__init__(args, *rest, **options)

    monkeypatch.setattr(subprocess, "Popen", Watched)
    spectrum = Spectrum(
        functions=(CodeFunction(file="calc.py", name="add", first=1, last=2),),
        tests=(Trace(node_id="test_calc.py::test_add", outcome="failed", functions=(0,)),),
        test_modules=("test_calc.py",),
    )

    found = await with_digests(spectrum, ProjectCode(committed), committed, ThreadWorker())

    assert [command for command, _ in started_on] == ["git rev-parse", "git cat-file"]
    assert not any(on_the_loop for _, on_the_loop in started_on), started_on
    (add,) = found.functions
    assert add.at_head  # HEAD was read
    assert add.head is not None
    assert add.head != add.digest  # and differs: the edit is seen
