"""The fix-it policy, tested with the fake: each rule meets the situation it is for.

The fake keeps the project as a working tree: `change()` is an edit from the moment it is made,
`outcomes` play over successive runs, and a held run is released by the agent's own polls.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_policy import follow
from mcp import Client

from pytest_mcp.testing import FakeTestRunner, connect

pytestmark = pytest.mark.anyio

GROSS = "shop/price.py::gross_price"
NET = "shop/price.py::net_price"


def shop(runner: FakeTestRunner, *, gross_wrong: bool = False) -> FakeTestRunner:
    """A shop whose gross_price is used by tests in three files; net_price by one more."""
    for name in ("a", "b", "c"):
        for case in (1, 2):
            wrong = {"outcome": "failed", "message": f"assert {case}3.0 == {case}2.0"} if gross_wrong else {}
            runner.script(f"tests/test_{name}.py::test_total_{case}", runs=[f"shop/{name}.py::total", GROSS], **wrong)
    runner.script("tests/test_price.py::test_net", runs=[NET])
    return runner.define(GROSS, "1-2")


async def test_after_an_edit_it_opens_the_one_culprit_of_failures_in_three_files(
    pytest_mcp_runner: FakeTestRunner, pytest_mcp_client: Client
) -> None:
    shop(pytest_mcp_runner)
    await follow(pytest_mcp_client)  # clean
    shop(pytest_mcp_runner, gross_wrong=True).change(GROSS)  # the agent's edit

    transcript = await follow(pytest_mcp_client)

    assert transcript.opened == [GROSS]
    assert transcript.rerun == []
    [cause] = transcript.answers[0]["groups"]
    assert cause["culprit"]["changed_since"] == "run"  # changed since its tests last passed


async def test_it_leaves_a_failure_that_was_already_failing_alone(
    pytest_mcp_runner: FakeTestRunner, pytest_mcp_client: Client
) -> None:
    shop(pytest_mcp_runner).script("tests/test_price.py::test_net", "failed", message="assert 9.23 == 10.0", runs=[NET])
    await follow(pytest_mcp_client)

    transcript = await follow(pytest_mcp_client)  # the same failure, again

    assert transcript.opened == []
    assert transcript.ignored == [transcript.answers[0]["groups"][0]["id"]]


async def test_it_runs_a_failure_nothing_explains_once_more_and_it_passes(
    pytest_mcp_runner: FakeTestRunner, pytest_mcp_client: Client
) -> None:
    shop(pytest_mcp_runner).script("tests/test_io.py::test_upload", outcomes=["failed", "passed"], message="timeout")

    transcript = await follow(pytest_mcp_client)

    assert transcript.rerun == ["tests/test_io.py::test_upload"]
    assert transcript.answers[-1]["exit_code"] == 0


async def test_it_polls_a_run_that_outlasts_its_call(tmp_path: Path) -> None:
    runner = shop(FakeTestRunner(), gross_wrong=True).change(GROSS).hold(after=3, polls=2)
    async with connect(runner, root=tmp_path, detach_after=0.05) as client:
        transcript = await follow(client)

    assert transcript.polls == 2  # the hold lasts until the second get_test_run
    assert transcript.answers[0]["status"] == "running"
    assert transcript.opened == [GROSS]


async def test_it_pages_every_member_of_a_big_cause(
    pytest_mcp_runner: FakeTestRunner, pytest_mcp_client: Client
) -> None:
    shop(pytest_mcp_runner)
    for n in range(1, 401):
        pytest_mcp_runner.script(f"tests/test_many.py::test_gross[{n}]", runs=[GROSS])
    await follow(pytest_mcp_client)
    for n in range(1, 401):
        pytest_mcp_runner.script(
            f"tests/test_many.py::test_gross[{n}]", "failed", message=f"assert {n}.3 == {n}.2", runs=[GROSS]
        )
    pytest_mcp_runner.change(GROSS)

    transcript = await follow(pytest_mcp_client)

    [members] = transcript.paged.values()
    assert len(members) == len(set(members)) == 400
    assert transcript.opened == [GROSS]
