"""A finished run's reports stay reachable without running the tests again (issue 28, point 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from pytest_mcp.testing import FakeTestRunner, connect
from tests.answers import call_error

pytestmark = pytest.mark.anyio


async def structured(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def failing_suite(failures: int, passes: int = 0, skips: int = 0) -> FakeTestRunner:
    runner = FakeTestRunner()
    for index in range(failures):
        runner.script(
            f"tests/test_m{index % 7}.py::test_value[{index}]",
            "failed",
            message=f"AssertionError: assert {index} == {index + 1}",
            traceback="\n".join(
                [f"    def test_value(): assert value({index}) == {index + 1}", f"E   assert {index} == {index + 1}"]
                + [f"E     detail line {line} " + "x" * 60 for line in range(12)]
            ),
        )
    for index in range(passes):
        runner.script(f"tests/test_ok.py::test_ok[{index}]", "passed")
    for index in range(skips):
        runner.script(f"tests/test_skip.py::test_skip[{index}]", "skipped", message="Skipped: not on this platform")
    return runner


async def test_paging_a_500_failure_run_yields_every_failing_id_exactly_once_with_its_full_report(
    tmp_path: Path,
) -> None:
    runner = failing_suite(500, passes=300, skips=40)
    async with connect(runner, root=tmp_path, detach_after=30) as client:
        answer = await structured(client, "execute_tests", {})
        # One full report per group: the others are for get_test_run to page through.
        assert sum(group["count"] for group in answer["groups"]) > len(answer["groups"])
        run_id = answer["run_id"]
        seen: list[str] = []
        offset: int | None = 0
        pages = 0
        while offset is not None:
            page = await structured(client, "get_test_run", {"run_id": run_id, "offset": offset})
            assert page["page"]["offset"] == offset
            assert page["summary"] == answer["summary"]
            assert page["tests"], "a page always moves on"
            seen += [test["node_id"] for test in page["tests"]]
            for test in page["tests"]:
                if test["outcome"] == "failed":
                    assert test["traceback"].count("detail line") == 12, "a page gives the full report"
            offset = page["page"]["next_offset"]
            pages += 1

    failing = [f"tests/test_m{i % 7}.py::test_value[{i}]" for i in range(500)]
    skipped = [f"tests/test_skip.py::test_skip[{i}]" for i in range(40)]
    assert sorted(seen) == sorted(failing + skipped)
    assert len(seen) == len(set(seen)) == 540
    assert seen[:500] == [node_id for node_id in seen if node_id in set(failing)], "failures come first"
    assert pages > 1


async def test_node_ids_give_those_tests_full_reports(tmp_path: Path) -> None:
    async with connect(failing_suite(300), root=tmp_path, detach_after=30) as client:
        answer = await structured(client, "execute_tests", {})
        wanted = ["tests/test_m3.py::test_value[290]", "tests/test_m0.py::test_value[7]"]
        page = await structured(client, "get_test_run", {"run_id": answer["run_id"], "node_ids": wanted})
        unknown = await call_error(
            client, "get_test_run", {"run_id": answer["run_id"], "node_ids": ["tests/test_ok.py::test_nothing"]}
        )
        beyond = await call_error(client, "get_test_run", {"run_id": answer["run_id"], "offset": 301})

    assert sorted(test["node_id"] for test in page["tests"]) == sorted(wanted)
    assert page["page"] == {"offset": 0, "total": 2, "next_offset": None}
    assert unknown.data["errors"][0]["field"] == "node_ids"
    assert "not among the run's non-passing tests" in unknown.data["errors"][0]["reason"]
    assert beyond.data["errors"][0] == {"field": "offset", "reason": "is 301; the run kept 300 reports"}


async def test_a_clean_run_keeps_nothing_and_its_answer_has_no_run_id(tmp_path: Path) -> None:
    async with connect(failing_suite(0, passes=50), root=tmp_path, detach_after=30) as client:
        answer = await structured(client, "execute_tests", {})
    assert "run_id" not in answer


async def test_a_failing_answer_carries_its_run_id_and_the_text_says_how_to_page(tmp_path: Path) -> None:
    async with connect(failing_suite(400), root=tmp_path, detach_after=30) as client:
        result = await client.call_tool("execute_tests", {})
    assert result.structured_content is not None
    run_id = result.structured_content["run_id"]
    assert f'get_test_run with {{"run_id": "{run_id}", "offset": 0}}' in result.content[0].text  # type: ignore[union-attr]


async def test_a_run_is_kept_only_for_its_owner(tmp_path: Path) -> None:
    runner = failing_suite(3)
    async with connect(runner, root=tmp_path, detach_after=30) as client:
        answer = await structured(client, "execute_tests", {})
    async with connect(runner, root=tmp_path, detach_after=30) as other:
        error = await call_error(other, "get_test_run", {"run_id": answer["run_id"], "offset": 0})
    assert error.data["errors"][0]["field"] == "run_id"


async def test_a_wait_above_the_cap_is_cut_to_it_and_the_answer_says_so(tmp_path: Path) -> None:
    runner = failing_suite(2, passes=3).hold(after=1)
    async with connect(runner, root=tmp_path, detach_after=0.05) as client:
        running = await structured(client, "execute_tests", {})
        result = await client.call_tool("get_test_run", {"run_id": running["run_id"], "wait": 3600})
        runner.release()
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["status"] == "running"
    assert result.structured_content["notes"] == ["wait was cut to 0.05s, the most a call waits"]
    assert result.content[0].text.endswith("NOTE: wait was cut to 0.05s, the most a call waits")  # type: ignore[union-attr]


async def test_paging_a_group_yields_exactly_its_member_ids_and_node_ids_give_their_full_reports(
    tmp_path: Path,
) -> None:
    async with connect(failing_suite(500, skips=10), root=tmp_path, detach_after=30) as client:
        answer = await structured(client, "execute_tests", {})
        assert answer["groups"], "the run must have failure groups"
        seen: dict[str, list[str]] = {}
        pages = 0
        for group in answer["groups"]:
            offset: int | None = 0
            while offset is not None:
                arguments = {"run_id": answer["run_id"], "group": group["id"], "offset": offset}
                page = await structured(client, "get_test_run", arguments)
                pages += 1
                assert page["members"], "a page always moves on"
                assert page["tests"] == [], "a group's page lists ids; full reports are asked for by node id"
                assert page["page"]["group"] == group["id"]
                seen.setdefault(group["id"], []).extend(page["members"])
                offset = page["page"]["next_offset"]
        first = seen[answer["groups"][0]["id"]][:3]
        reports = await structured(client, "get_test_run", {"run_id": answer["run_id"], "node_ids": first})
        unknown = await call_error(client, "get_test_run", {"run_id": answer["run_id"], "group": "g0123456789"})

    assert {group["id"]: group["count"] for group in answer["groups"]} == {k: len(v) for k, v in seen.items()}
    everything = [node_id for ids in seen.values() for node_id in ids]
    assert sorted(everything) == sorted(f"tests/test_m{i % 7}.py::test_value[{i}]" for i in range(500))
    assert pages <= len(answer["groups"]) * 2 + 2, "500 ids page in a few pages, not one report at a time"
    assert [test["node_id"] for test in reports["tests"]] == first
    assert all(test["traceback"].count("detail line") == 12 for test in reports["tests"])
    assert unknown.data["errors"][0] == {"field": "group", "reason": "not a failure group of this run"}
