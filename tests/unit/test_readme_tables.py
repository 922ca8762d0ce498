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


def test_the_docs_say_what_a_group_page_returns_and_how_many_ids_it_holds() -> None:
    """A group's page is its member ids, cut at MEMBER_PAGE_CHARS (issue 43: the table said "the full reports",
    and the paging note "about 190 a page", where pages of 33-character ids held 324)."""
    from pytest_mcp.domain.models import FailureGroup, ReportedTest, RunResult, Summary
    from pytest_mcp.domain.paging import page_of
    from pytest_mcp.domain.requests import GetTestRunRequest, RequestPolicy

    [row] = [row for row in table_after("| `get_test_run` parameter |") if row[0] == "`group`"]
    paging = README.split("- **Paging.**", 1)[1].split("\n\n", 1)[0]
    description = GetTestRunRequest.model_fields["group"].description or ""
    for text in (row[2], paging, description):
        assert "member ids" in text, text
        assert "full reports" not in text.split("member ids")[0], text

    def page_size(length: int) -> int:
        members = tuple(f"tests/test_{index:0{length - 17}d}.py::t" for index in range(1000))
        report = ReportedTest(node_id=members[0], outcome="failed", phase="call", location=members[0])
        group = FailureGroup(id="gf13040aaaf", count=len(members), members=members, representative=report)
        kept = RunResult(exit_code=1, summary=Summary(total=1000, failed=1000), groups=(group,), tests=(report,))
        request = GetTestRunRequest.parse({"run_id": "r" * 32, "group": "gf13040aaaf"}, RequestPolicy(root="."))
        return len(page_of(kept, request).members)

    figures = re.findall(r"(\d+) ids of (\d+) characters, (\d+) of (\d+)", f"{row[2]}\n{paging}")
    assert len(figures) == 2, "the table and the paging note give the page's size"
    for first, first_length, second, second_length in figures:
        assert (page_size(int(first_length)), page_size(int(second_length))) == (int(first), int(second))
