"""One cause, one answer (issue 41, point 5): a group lists its first members and pages the rest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from pytest_mcp.domain.execute_tests import ExecuteTests
from pytest_mcp.domain.requests import ExecuteTestsRequest, RequestPolicy
from pytest_mcp.testing import FakeTestRunner, connect
from tests.unit.support import KeepResult

pytestmark = pytest.mark.anyio

LONG = "tests/test_release.py::UppercaseHexReferenceTests::test_a_numeric_reference_decodes_to_its_own_character"
SEVEN_MEMBERS_AT_MOST = 3_600
"""Bytes of the whole answer (structured content as compact JSON, plus the text) for seven failures of one
cause whose node ids run to 110 characters and whose messages to 7 lines: the representative's evidence in
the text and the structured content (3 KB here), the counts, and a pointer to the other members. Listed in
full, the members cost 1.6 KB more (4,680 bytes in all before issue 41)."""


async def answered(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str, int]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    wire = json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)
    return result.structured_content, text, len(wire.encode()) + len(text.encode())


def seven_long_failures() -> FakeTestRunner:
    runner = FakeTestRunner()
    for index in range(7):
        explanation = [f"E     - expected line {line} of the slug " + "x" * 40 for line in range(6)]
        runner.script(
            f"{LONG}_{index}",
            "failed",
            line=10 + index,
            message="\n".join([f"AssertionError: 'b-{index}' != 'a-{index}'", *(line[2:] for line in explanation)]),
            traceback="\n".join(
                [
                    ">       self.assertEqual(slugify(text), expected)",
                    f"E   AssertionError: 'b-{index}' != 'a-{index}'",
                    *explanation,
                    "tests/test_release.py:352: AssertionError",
                ]
            ),
        )
    for index in range(20):
        runner.script(f"tests/test_ok.py::test_ok[{index}]", "passed")
    return runner


async def test_seven_long_members_of_one_group_are_listed_as_the_first_and_paged_through(tmp_path: Path) -> None:
    async with connect(seven_long_failures(), root=tmp_path) as client:
        answer, text, size = await answered(client, "execute_tests", {})
        (group,) = answer["groups"]
        page, _, _ = await answered(client, "get_test_run", {"run_id": answer["run_id"], "group": group["id"]})

    every = [f"{LONG}_{index}" for index in range(7)]
    assert answer["summary"]["failed"] == group["count"] == 7
    # The first member (the representative's) always, more only within 120 characters (two of these ids are
    # 220): the rest counted.
    assert group["members"] == every[:1]
    assert group["omitted_members"] == 6
    assert group["representative"]["node_id"] == every[0]
    page_call = f'get_test_run with {{"run_id": "{answer["run_id"]}", "group": "{group["id"]}"}}'
    pointer = f"members: {every[0]}; 6 more: {page_call}"
    assert pointer in text
    assert not any(member in text for member in every[1:])
    # Every member is reachable, in run order, by paging the group.
    assert page["members"] == every
    assert page["page"]["next_offset"] is None
    # The representative's evidence is whole: its failing line, its E lines, its crash line.
    assert group["representative"]["traceback"].splitlines()[0] == ">       self.assertEqual(slugify(text), expected)"
    assert "E   AssertionError: 'b-0' != 'a-0'" in text
    assert "tests/test_release.py:352: AssertionError" in text
    assert size <= SEVEN_MEMBERS_AT_MOST


async def test_short_members_are_listed_while_they_fit_and_a_group_whose_ids_fit_twice_over_lists_them_all(
    tmp_path: Path,
) -> None:
    runner = FakeTestRunner()
    for index in range(12):
        runner.script(f"tests/t.py::test_short_{index}", "failed", line=index + 1, crash="src/m.py:3", message="no")
    for index in range(3):
        runner.script(f"tests/u.py::test_{index}", "failed", line=index + 1, crash="src/m.py:9", message="KeyError")
    async with connect(runner, root=tmp_path) as client:
        answer, _, _ = await answered(client, "execute_tests", {})

    # 12 ids of 24 characters (288 in all): the first five fit in 120.
    twelve, three = answer["groups"]
    assert twelve["members"] == [f"tests/t.py::test_short_{index}" for index in range(5)]
    assert twelve["omitted_members"] == 7
    assert three["members"] == [f"tests/u.py::test_{index}" for index in range(3)]
    assert "omitted_members" not in three  # left out at 0 (ADR 0009)


async def test_without_a_kept_run_a_group_lists_its_members_as_before(tmp_path: Path) -> None:
    """Where the run is not kept (no run id to page with), nothing would reach the others: all are listed."""
    policy = RequestPolicy(root=tmp_path)
    use_case = ExecuteTests(seven_long_failures(), KeepResult(), policy)

    result = await use_case.execute(ExecuteTestsRequest.parse({}, policy))

    (group,) = result.groups
    assert group.members == tuple(f"{LONG}_{index}" for index in range(7))
    assert group.omitted_members == 0
