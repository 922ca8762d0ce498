"""The README's two commands are the ones CI and people actually run."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    blocks = re.findall(r"```(?:sh|bash)\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    return [block.strip() for block in blocks[:2]]


def test_the_readme_opens_with_a_run_command_and_a_test_command() -> None:
    assert readme_commands() == ["bash scripts/demo", "bash scripts/test"]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci_lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if not line.startswith("#")]

    assert readme_commands()[1] in ci_lines
