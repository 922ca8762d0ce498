"""A project booby-trapped with canaries, and a real stdio server pointed at it.

- `evil_canary_plugin.py` in the root writes CANARY if pytest ever loads it as a plugin.
- `conftest.py` *outside* the root (its parent) writes CANARY if pytest ever loads it.
- `conftest.py` in the root writes STARTED whenever a pytest session starts there.
- `--python` is a wrapper that appends its argv to SPAWNED before exec'ing the real
  interpreter, so "no pytest process was started" is a fact we read, not an inference.
- Things pytest could be made to read instead of a test: `escape` (a link out of the root),
  `deep` (a link to a/b/c, so `deep/../..` means one thing to Path.resolve() and another to
  pytest), `list.txt` (a response file naming the outside test) and `fifo` (a named pipe).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from mcp import StdioServerParameters


@dataclass(frozen=True)
class TrappedProject:
    base: Path
    root: Path
    wrapper: Path

    @property
    def canaries(self) -> list[Path]:
        return [self.base / "CANARY", self.base / "STARTED"]

    @property
    def spawn_log(self) -> Path:
        return self.base / "SPAWNED"

    def tripped(self) -> list[str]:
        return [path.name for path in [*self.canaries, self.spawn_log] if path.exists()]

    def reset(self) -> None:
        for path in [*self.canaries, self.spawn_log]:
            path.unlink(missing_ok=True)


def build_trapped_project(base: Path, python: Path | None = None) -> TrappedProject:
    """The project under `base`; its wrapper execs `python` (by default the interpreter running this suite)."""
    root = base / "project"
    root.mkdir(parents=True)
    (base / "outside").mkdir()
    (base / "outside" / "test_outside.py").write_text("def test_outside():\n    pass\n")
    canary = f"open({str(base / 'CANARY')!r}, 'a').write(__file__ + '\\n')\n"
    (base / "conftest.py").write_text(canary)
    (root / "evil_canary_plugin.py").write_text(canary)
    (root / "conftest.py").write_text(f"open({str(base / 'STARTED')!r}, 'a').write('started\\n')\n")
    (root / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow\n")
    (root / "test_ok.py").write_text("def test_ok():\n    pass\n")
    os.symlink(base / "outside", root / "escape")
    (root / "a" / "b" / "c").mkdir(parents=True)
    os.symlink("a/b/c", root / "deep")
    (root / "list.txt").write_text(f"{base / 'outside' / 'test_outside.py'}\n-pevil_canary_plugin\n")
    os.mkfifo(root / "fifo")
    wrapper = base / "python-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {base / "SPAWNED"}\nexec {python or sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    return TrappedProject(base=base, root=root, wrapper=wrapper)


def console_script() -> str:
    return str(Path(sys.executable).with_name("pytest-mcp"))


def server_parameters(project: TrappedProject, *extra: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    environment.update(env or {})
    return StdioServerParameters(
        command=console_script(),
        args=["--root", str(project.root), "--python", str(project.wrapper), "--max-timeout", "60", *extra],
        env=environment,
    )
