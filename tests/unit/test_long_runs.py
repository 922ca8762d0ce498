"""Runs longer than a call waits (ADR 0012), in process with the fake runner: detach, get_test_run, cancel."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult

from pytest_mcp.testing import FakeTestRunner, connect
from tests.answers import call_error, tool_error

pytestmark = pytest.mark.anyio

DETACH = 0.05


def project() -> FakeTestRunner:
    runner = FakeTestRunner()
    runner.script("tests/test_a.py::test_1", "passed")
    runner.script("tests/test_a.py::test_2", "failed", message="assert 1 == 2")
    runner.script("tests/test_a.py::test_3", "skipped", message="not today")
    runner.script("tests/test_b.py::test_4", "failed", message="boom")
    runner.script("tests/test_b.py::test_5", "passed")
    return runner


async def until_finished(client: Client, run_id: str) -> CallToolResult:
    """get_test_run until the run is no longer 'running' (each call waits at most --detach-after)."""
    with anyio.fail_after(10):
        while True:
            result = await client.call_tool("get_test_run", {"run_id": run_id})
            if (result.structured_content or {}).get("status") != "running":
                return result


async def structured(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_a_run_still_going_answers_running_with_the_failures_so_far(tmp_path: Path) -> None:
    runner = project().hold(after=3)
    async with connect(runner, root=tmp_path, detach_after=DETACH) as client:
        running = await client.call_tool("execute_tests", {})
        runner.release()

    answer = running.structured_content
    assert answer is not None
    assert answer["status"] == "running"
    assert len(base64.urlsafe_b64decode(answer["run_id"] + "==")) * 8 >= 128
    assert (answer["progress"]["done"], answer["progress"]["total"]) == (3, 5)
    assert answer["exit_code"] is None
    summary = {key: answer["summary"][key] for key in ("total", "passed", "failed", "skipped")}
    assert summary == {"total": 5, "passed": 1, "failed": 1, "skipped": 1}
    representatives = [(g["representative"]["node_id"], g["representative"]["outcome"]) for g in answer["groups"]]
    assert representatives == [("tests/test_a.py::test_2", "failed")]
    assert [(r["outcome"], r["count"]) for r in answer["reasons"]] == [("skipped", 1)]
    text = running.content[0].text  # type: ignore[union-attr]
    assert text.startswith("Still running: 3 of 5 tests done")
    assert f'get_test_run with {{"run_id": "{answer["run_id"]}"}}' in text
    assert "FAILED tests/test_a.py::test_2" in text


@pytest.mark.parametrize(
    ("hold", "progress", "headline"),
    [
        ({"collecting": True}, (0, 0), "Still running: 0 of ? tests done"),  # pytest has not collected yet
        ({"after": 0}, (0, 5), "Still running: 0 of 5 tests done"),  # collected, no test done
    ],
    ids=["still-collecting", "collected"],
)
async def test_a_held_run_is_still_collecting_or_knows_its_total_as_a_real_one(
    tmp_path: Path, hold: dict[str, Any], progress: tuple[int, int], headline: str
) -> None:
    runner = project().hold(**hold)
    async with connect(runner, root=tmp_path, detach_after=DETACH) as client:
        running = await structured(client, "execute_tests", {})
        runner.release()
        final = await until_finished(client, running["run_id"])

    assert (running["progress"]["done"], running["progress"]["total"]) == progress
    assert running["summary"]["total"] == progress[1]
    assert running["groups"] == []
    assert running_text(running).startswith(headline)
    assert final.structured_content["summary"]["failed"] == 2  # type: ignore[index]


def running_text(answer: dict[str, Any]) -> str:
    from pytest_mcp.adapters.mcp.presenter import render_run
    from pytest_mcp.domain.models import RunResult

    return render_run(RunResult.model_validate(answer))


@pytest.mark.parametrize("detail", ["summary", "failures", "all"])
async def test_the_final_answer_through_get_test_run_equals_an_undetached_call(tmp_path: Path, detail: str) -> None:
    async with connect(project(), root=tmp_path, detach_after=0) as client:
        undetached = await client.call_tool("execute_tests", {"detail": detail})

    runner = project().hold(after=2)
    async with connect(runner, root=tmp_path, detach_after=DETACH) as client:
        running = await structured(client, "execute_tests", {"detail": detail})
        listed = (len(running["tests"]), sum(group["count"] for group in running["groups"]))
        assert listed == {"summary": (0, 0), "failures": (0, 1), "all": (2, 1)}[detail]
        still = await structured(client, "get_test_run", {"run_id": running["run_id"], "wait": 0.01})
        assert still["status"] == "running"
        runner.release()
        final = await until_finished(client, running["run_id"])
        again = await client.call_tool("get_test_run", {"run_id": running["run_id"], "wait": 0})

    # Each run has an id of its own, kept with its failures; the rest of the answer is the same.
    final_answer, undetached_answer = dict(final.structured_content or {}), dict(undetached.structured_content or {})
    assert final_answer.pop("run_id") == running["run_id"]
    undetached_answer_id = undetached_answer.pop("run_id")
    assert len(undetached_answer_id) == len(running["run_id"])
    assert final_answer == undetached_answer
    undetached_text = undetached.content[0].text.replace(undetached_answer_id, running["run_id"])  # type: ignore[union-attr]
    assert final.content[0].text == undetached_text  # type: ignore[union-attr]
    assert "status" not in (final.structured_content or {})
    assert again.structured_content == final.structured_content  # kept for --run-ttl, not consumed


async def test_a_detached_run_that_fails_gives_the_same_tool_error_as_an_undetached_one(tmp_path: Path) -> None:
    async with connect(project().fail_with("timeout", node_id="tests/test_b.py::test_4"), root=tmp_path) as client:
        undetached = await call_error(client, "execute_tests", {"timeout": 5})

    runner = project().fail_with("timeout", node_id="tests/test_b.py::test_4").hold(after=1)
    async with connect(runner, root=tmp_path, detach_after=DETACH) as client:
        running = await structured(client, "execute_tests", {"timeout": 5})
        runner.release()
        detached = tool_error(await until_finished(client, running["run_id"]))

    assert detached == undetached
    assert detached.reason == "timeout"


async def test_cancel_stops_the_run_and_confirms_it(tmp_path: Path) -> None:
    runner = project().hold(after=1)
    async with connect(runner, root=tmp_path, detach_after=DETACH) as client:
        running = await structured(client, "execute_tests", {})
        cancelled = await client.call_tool("get_test_run", {"run_id": running["run_id"], "cancel": True})
        after = await structured(client, "get_test_run", {"run_id": running["run_id"]})
        again = await structured(client, "get_test_run", {"run_id": running["run_id"], "cancel": True})

    answer = cancelled.structured_content
    assert answer is not None
    assert (answer["status"], answer["run_id"], answer["exit_code"]) == ("cancelled", running["run_id"], None)
    assert answer["progress"]["done"] == 1
    assert cancelled.content[0].text.startswith("Cancelled: the run and every process it started are gone.")  # type: ignore[union-attr]
    # Every later call of the same owner (any of its connections) is told it was cancelled, for the TTL.
    assert (after["status"], after["run_id"], again["status"]) == ("cancelled", running["run_id"], "cancelled")
    assert after["progress"]["done"] == 1


async def test_cancelling_the_call_before_it_detaches_cancels_its_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_MCP_MAX_CONCURRENT_RUNS", "1")
    runner = project().hold(after=1)
    async with connect(runner, root=tmp_path, detach_after=30) as client:
        with anyio.move_on_after(0.2):
            await client.call_tool("execute_tests", {})
        # Never released: only a cancelled run gives back the one run slot the next call needs.
        with anyio.fail_after(5):
            after = await client.call_tool("discover_tests", {})
    assert after.structured_content is not None
    assert after.structured_content["total"] == 5


@pytest.mark.parametrize(
    ("arguments", "field", "reason"),
    [
        ({"run_id": "A" * 32}, "run_id", "unknown or expired run id"),
        ({"run_id": "short"}, "run_id", "should match pattern"),
        ({"run_id": "A" * 32, "offset": -1}, "offset", "greater than or equal to 0"),
        ({"run_id": "A" * 32, "node_ids": ["--pdb"]}, "node_ids", "option"),
        ({"run_id": "A" * 32, "wait": -1}, "wait", "greater than or equal to 0"),
        ({"run_id": "A" * 32, "cancel": "yes"}, "cancel", "valid boolean"),
        ({}, "run_id", "field required"),
        ({"run_id": "A" * 32, "extra": 1}, "extra", "unknown parameter"),
    ],
)
async def test_bad_get_test_run_arguments_name_the_field(
    tmp_path: Path, arguments: dict[str, Any], field: str, reason: str
) -> None:
    async with connect(project(), root=tmp_path, detach_after=DETACH) as client:
        error = await call_error(client, "get_test_run", arguments)

    assert error.code == -32602
    assert [e["field"] for e in error.data["errors"]] == [field]
    assert reason in error.data["errors"][0]["reason"]


async def test_a_get_test_run_with_a_progress_token_receives_the_runs_progress(tmp_path: Path) -> None:
    runner = project().hold(after=2)
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    # Long enough that the run, released while get_test_run waits, ends before the wait does.
    async with connect(runner, root=tmp_path, detach_after=1.0) as client:
        running = await structured(client, "execute_tests", {})
        async with anyio.create_task_group() as group:
            group.start_soon(
                lambda: client.call_tool("get_test_run", {"run_id": running["run_id"]}, progress_callback=on_progress)
            )
            await anyio.sleep(0.1)
            runner.release()

    assert seen[0] == (2, 5)  # the state so far, at once
    assert seen[-1] == (5, 5)  # and the last update, always
