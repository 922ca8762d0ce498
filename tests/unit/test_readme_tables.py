"""The README's tables say what the code accepts: the tools' parameters and the settings."""

from __future__ import annotations

import re
from pathlib import Path

from pytest_mcp.cli import build_parser
from pytest_mcp.domain.requests import DiscoverTestsRequest, ExecuteTestsRequest
from pytest_mcp.settings import ENV_PREFIX, Settings

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def table_after(heading: str) -> list[list[str]]:
    """The cells of the first table after `heading`, header and rule left out."""
    rest = README.split(heading, 1)[1]
    rows = []
    for line in rest.splitlines():
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
        elif rows:
            break
    return rows[2:]


def test_the_execute_tests_table_lists_exactly_the_requests_parameters() -> None:
    names = [re.fullmatch(r"`(\w+)`", row[0]).group(1) for row in table_after("`execute_tests` accepts")]  # type: ignore[union-attr]

    assert names == list(ExecuteTestsRequest.model_fields)


def test_the_discover_tests_sentence_names_exactly_its_parameters() -> None:
    sentence = README.split("`discover_tests` takes", 1)[1].split(" and returns", 1)[0]

    assert re.findall(r"`(\w+)`", sentence) == list(DiscoverTestsRequest.model_fields)


def test_the_settings_table_has_a_row_for_each_setting_with_its_flag_and_variable() -> None:
    rows = table_after("## Configuration")
    flags = {action.dest: action.option_strings[0] for action in build_parser()._actions if action.option_strings}
    internal = {"runner"}  # PYTEST_MCP_RUNNER=fake serves the test double: for our own tests

    documented = {}
    for flag_cell, variable_cell, _ in rows:
        variable = re.match(r"`(PYTEST_MCP_\w+)`", variable_cell).group(1)  # type: ignore[union-attr]
        flag = re.match(r"`(--[\w-]+)", flag_cell)
        documented[variable] = flag.group(1) if flag else None

    expected = {
        f"{ENV_PREFIX}{name.upper()}": flags.get(name) for name in Settings.model_fields if name not in internal
    }
    assert documented == expected
