"""No module under src/ grows past 450 lines: a file that does several jobs is split by job first (ADR 0010)."""

from __future__ import annotations

from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
LIMIT = 450


def _modules() -> list[pytest.param]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        found.append(pytest.param(path, id=name))
    return found


def test_the_modules_are_found() -> None:
    assert len(_modules()) > 50


@pytest.mark.parametrize("path", _modules())
def test_no_module_is_over_450_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= LIMIT, f"{path.relative_to(SRC)} has {lines} lines; split it by job"
