"""235 failures of one wrong value, in five files at five assertion sites: one cause, its member ids in ≤ 3 pages.

The humanize case of issue 38 in miniature, through the real runner and a served server (ADR 0020):
the answer names the function and answers one cause; get_test_run pages its member ids, and full
reports come by node id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.response_sizes import write
from pytest_mcp.testing import connect

pytestmark = pytest.mark.anyio

PLURAL = """
def plural(word, count):
    return word if count != 1 else word + "s"  # the bug: singular and plural swapped


def title(text):
    return text[:1].upper() + text[1:]
"""

TEST = """
import pytest

from words import plural, title


@pytest.mark.parametrize("count", range(2, 49))
def test_plural_{i}(count):
    assert {check}


def test_title_{i}():
    assert title("apple") == "Apple"
"""

CHECKS = (
    'plural("apple", count) == "apples"',
    'plural("pear", count).endswith("s")',
    'len(plural("fig", count)) == 4',
    '" ".join([str(count), plural("plum", count)]) == f"{{count}} plums"',
    'plural("kiwi", count) != "kiwi"',
)


async def _answer(client: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content or {}


async def test_one_wrong_value_failing_235_tests_is_one_cause_whose_ids_page_in_three_pages_or_fewer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, json_report_python: Path
) -> None:
    tests = {f"test_words_{i}.py": TEST.format(i=i, check=check) for i, check in enumerate(CHECKS)}
    files = {"words.py": PLURAL} | tests
    root = write(tmp_path / "project", files)
    monkeypatch.setenv("PYTEST_MCP_LOCALIZE", "10")  # this machine's load must not decide it

    async with connect(root=root, python=json_report_python, detach_after=60) as client:
        answer = await _answer(client, "execute_tests", {})
        (cause,) = answer["groups"]
        members: list[str] = []
        pages = 0
        offset: int | None = 0
        while offset is not None:
            arguments = {"run_id": answer["run_id"], "group": cause["id"], "offset": offset}
            page = await _answer(client, "get_test_run", arguments)
            pages += 1
            members += page["members"]
            offset = page["page"].get("next_offset")
        reports = await _answer(client, "get_test_run", {"run_id": answer["run_id"], "node_ids": members[:2]})

    assert answer["summary"]["failed"] == 235
    assert (answer["culprits"][0]["file"], answer["culprits"][0]["function"]) == ("words.py", "plural")
    assert cause["culprit"]["function"] == "plural"
    assert sum(symptom["count"] for symptom in cause["symptoms"]) == 235
    # Two of the checks fail with the same masked message: one symptom at two sites.
    assert sum(symptom["sites"] for symptom in cause["symptoms"]) == len(CHECKS)
    assert len(cause["symptoms"]) == len(CHECKS) - 1
    assert len(members) == len(set(members)) == 235
    assert pages <= 3
    assert [test["node_id"] for test in reports["tests"]] == members[:2]
    assert all(test["traceback"] for test in reports["tests"])
