"""The event loop answers while a large report is turned into an answer (issue 46).

Reading, grouping and ranking 10,000 failures and presenting them takes seconds of CPU. That
work runs in the worker's threads, so a ping made meanwhile is answered at once. Shown by
ordering, not timing: the presenter of this server does not present until a ping sent after it
began has been answered. Where the presenting held the event loop, the ping could not be answered
before it ended: the presenter then gives up waiting after PATIENCE (a bound for the failing
case only, never reached by a server that answers) and the test fails.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from mcp import Client
from mcp_types import CallToolResult

from pytest_mcp.adapters.mcp.presenter import McpPresenter
from pytest_mcp.adapters.worker_threads import ThreadWorker
from pytest_mcp.container import create_container
from pytest_mcp.domain.models import DiscoveryResult, RunResult
from pytest_mcp.settings import Settings
from pytest_mcp.testing import FakeTestRunner

pytestmark = pytest.mark.anyio

FAILURES = 10_000
PATIENCE = 30.0
"""Seconds the presenter waits for the ping: reached only when the event loop is held."""


class PingFirst:
    """The server's presenter, which presents a run only once a ping sent after it began was answered."""

    def __init__(self, presenter: McpPresenter) -> None:
        self._presenter = presenter
        self.presenting = threading.Event()
        self.pinged = threading.Event()
        self.ping_answered_first: bool | None = None

    def present_run(self, result: RunResult) -> CallToolResult:
        if result.summary.failed == FAILURES and not self.presenting.is_set():
            self.presenting.set()
            self.ping_answered_first = self.pinged.wait(PATIENCE)
        return self._presenter.present_run(result)

    def present_discovery(self, result: DiscoveryResult) -> CallToolResult:
        return self._presenter.present_discovery(result)

    def discovery_capacity(self) -> int | None:
        return self._presenter.discovery_capacity()


def ten_thousand_failures(root: Path) -> FakeTestRunner:
    runner = FakeTestRunner(root=root)
    for index in range(FAILURES):
        runner.script(
            f"tests/test_m{index % 20}.py::test_value[{index}]",
            "failed",
            message=f"AssertionError: assert {index} == {index + 1}",
            traceback=f"    def test_value(): assert value({index}) == {index + 1}\nE   assert {index} == {index + 1}",
            runs=[f"src/values.py::value{index % 3}"],
        )
    return runner


@pytest.mark.filterwarnings("ignore:ping is removed")  # the 2025-11-25 protocol (legacy mode) still has it
async def test_a_ping_is_answered_while_a_10000_failure_report_is_turned_into_an_answer(tmp_path: Path) -> None:
    # The real runner's calls do their work in the worker's threads; the fake's stay on the loop
    # (an agent's tests count turns of it), so this one takes the real side's worker.
    real = create_container(Settings(runner="subprocess", root=tmp_path)).call_worker()
    assert isinstance(real, ThreadWorker)
    container = create_container(Settings(runner="fake", root=tmp_path))
    container.call_worker.override(real)
    container.fake_runner.override(ten_thousand_failures(tmp_path))
    presenter = PingFirst(container.presenter())
    container.presenter.override(presenter)
    tool_server = container.tool_server()
    answer: dict[str, Any] = {}

    async def execute_tests(client: Client) -> None:
        result = await client.call_tool("execute_tests", {})
        answer.update(result.structured_content or {})

    async with (
        tool_server.serving(),
        Client(tool_server.server, mode="legacy") as client,
        anyio.create_task_group() as group,
    ):
        group.start_soon(execute_tests, client)
        assert await anyio.to_thread.run_sync(presenter.presenting.wait, PATIENCE)
        await client.send_ping()
        presenter.pinged.set()

    assert presenter.ping_answered_first, "the ping waited until the report had been turned into an answer"
    assert answer["summary"]["failed"] == FAILURES
    assert sum(group["count"] for group in answer["groups"]) == FAILURES
