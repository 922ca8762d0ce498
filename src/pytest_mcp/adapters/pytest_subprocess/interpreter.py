"""Choose the target project's Python interpreter."""

from __future__ import annotations

import sys
from pathlib import Path


def resolve_interpreter(root: Path, explicit: Path | None) -> Path:
    """`explicit` if given, else the project's `.venv`, else the server's own interpreter."""
    if explicit is not None:
        return explicit
    for candidate in (root / ".venv" / "bin" / "python", root / ".venv" / "Scripts" / "python.exe"):
        if candidate.exists():
            return candidate
    return Path(sys.executable)
