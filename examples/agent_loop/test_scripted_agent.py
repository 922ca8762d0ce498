"""The agent's tests: no test suite runs and no server process starts; pytest-mcp itself is real."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from scripted_agent import Failure, fix_failing_tests

from pytest_mcp.testing import FakeTestRunner, RunSpec

pytestmark = pytest.mark.anyio

TOTAL = "tests/test_cart.py::test_total"
DISCOUNT = "tests/test_cart.py::test_discount"
CHECKOUT = "tests/test_cart.py::TestCheckout::test_pays"


@pytest.fixture
def scripted(pytest_mcp_runner: FakeTestRunner) -> FakeTestRunner:
    return (
        pytest_mcp_runner.script(TOTAL, "passed", line=4)
        .script(DISCOUNT, "failed", message="assert 90.0 == 85.0", line=8)
        .script(CHECKOUT, "passed", line=14, markers=["slow"])
    )


async def test_the_agent_reads_the_failure_fixes_it_and_reruns_only_that_node_id(
    scripted: FakeTestRunner, pytest_mcp_client: Client
) -> None:
    async def fix(failure: Failure) -> None:
        scripted.script(failure.node_id, "passed", line=8)  # the "fix": the test passes from now on

    transcript = await fix_failing_tests(pytest_mcp_client, fix)

    assert transcript.discovered == [TOTAL, DISCOUNT, CHECKOUT]
    assert transcript.failures == [Failure(DISCOUNT, "assert 90.0 == 85.0", "tests/test_cart.py:8")]
    assert transcript.rerun == [DISCOUNT]
    assert transcript.exit_code == 0
    runs = [call for call in scripted.calls if isinstance(call, RunSpec)]
    assert [run.node_ids for run in runs] == [(), (DISCOUNT,)]


async def test_the_agent_retries_a_timed_out_run_once_with_twice_the_timeout(
    scripted: FakeTestRunner, pytest_mcp_client: Client
) -> None:
    scripted.fail_with("timeout", on="run")

    async def fix(failure: Failure) -> None:
        scripted.script(failure.node_id, "passed")

    transcript = await fix_failing_tests(pytest_mcp_client, fix, timeout=30)

    runs = [call for call in scripted.calls if isinstance(call, RunSpec)]
    # The server may hand the runner a hair less than asked, after queueing for a run slot.
    assert [run.timeout for run in runs] == [30, 60, 30]
    assert transcript.exit_code == 0


async def test_a_test_that_hangs_every_time_makes_the_agent_give_up_after_one_retry(
    scripted: FakeTestRunner, pytest_mcp_client: Client
) -> None:
    # Scoped to a test, the hang is the project's: every run that selects the test hangs again,
    # as a real deadlock would; the retry with twice the timeout does not get past it.
    scripted.fail_with("timeout", node_id=CHECKOUT)

    async def fix(failure: Failure) -> None:
        raise AssertionError("nothing should be fixed when no run finishes")

    transcript = await fix_failing_tests(pytest_mcp_client, fix, timeout=30)

    runs = [call for call in scripted.calls if isinstance(call, RunSpec)]
    assert [run.timeout for run in runs] == [30, 60]
    assert transcript.gave_up is not None
    assert transcript.gave_up.startswith("pytest did not finish within 60s")
    assert "while running test_pays (test_cart.py:15)" in transcript.gave_up


async def test_the_agent_gives_up_on_a_crash_with_pytest_mcps_message(
    scripted: FakeTestRunner, pytest_mcp_client: Client
) -> None:
    scripted.fail_with("crash", node_id=CHECKOUT, on="run")

    async def fix(failure: Failure) -> None:
        raise AssertionError("nothing should be fixed after a crash")

    transcript = await fix_failing_tests(pytest_mcp_client, fix)

    assert transcript.gave_up == (
        "pytest was killed by SIGSEGV while running test_pays (test_cart.py:15); no results are available"
    )
    assert transcript.failures == []


async def test_the_agent_works_around_a_module_that_cannot_be_collected(
    scripted: FakeTestRunner, pytest_mcp_client: Client
) -> None:
    # Scoped to its module, the import error breaks every call that collects that file, and no
    # other: the agent's narrowed runs pass it by, a run that selects it is interrupted.
    broken = "tests/test_orders.py"
    scripted.fail_with("collection_error", "ImportError: cannot import name 'Cart'", node_id=broken)

    async def fix(failure: Failure) -> None:
        scripted.script(failure.node_id, "passed", line=8)

    transcript = await fix_failing_tests(pytest_mcp_client, fix)
    whole_project = await pytest_mcp_client.call_tool("execute_tests", {})

    assert transcript.broken == [f"{broken}: ImportError: cannot import name 'Cart'"]
    assert transcript.discovered == [TOTAL, DISCOUNT, CHECKOUT]
    runs = [call for call in scripted.calls if isinstance(call, RunSpec)]
    assert [run.node_ids for run in runs[:2]] == [("tests/test_cart.py",), (DISCOUNT,)]
    assert (transcript.rerun, transcript.exit_code) == ([DISCOUNT], 0)
    assert whole_project.is_error
    assert (whole_project.meta or {})["pytest-mcp/error"]["reason"] == "interrupted"


class TestAgainstARecordedRealRun:
    """A recording of examples/demo_project (made with `pytest-mcp record`): its real bug, replayed."""

    @pytest.fixture
    def pytest_mcp_runner(self) -> FakeTestRunner:
        return FakeTestRunner.from_recording(Path(__file__).with_name("demo_project_run.json"))

    async def test_the_agent_finds_the_real_discount_bug(
        self, pytest_mcp_runner: FakeTestRunner, pytest_mcp_client: Client
    ) -> None:
        seen: list[Failure] = []

        async def fix(failure: Failure) -> None:
            seen.append(failure)
            pytest_mcp_runner.script(failure.node_id, "passed")

        transcript = await fix_failing_tests(pytest_mcp_client, fix)

        assert [failure.node_id for failure in seen] == ["tests/test_cart.py::test_discount_is_applied"]
        assert seen[0].message.startswith("assert 18.0 == 19.0")
        assert transcript.rerun == ["tests/test_cart.py::test_discount_is_applied"]
        assert transcript.exit_code == 0
