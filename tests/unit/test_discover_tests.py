from __future__ import annotations

from typing import Any

import pytest

from pytest_mcp.adapters.fake.runner import FakeTestRunner
from pytest_mcp.domain.discover_tests import DiscoverTests
from pytest_mcp.domain.errors import ExecutionFailed
from pytest_mcp.domain.models import DiscoveryResult
from pytest_mcp.domain.requests import DiscoverTestsRequest, RequestPolicy
from tests.unit.support import KeepResult

pytestmark = pytest.mark.anyio


async def discover(runner: FakeTestRunner, policy: RequestPolicy, **arguments: Any) -> DiscoveryResult:
    return await DiscoverTests(runner, KeepResult(), policy).execute(DiscoverTestsRequest.parse(arguments, policy))


async def test_every_selected_test_is_listed_with_file_and_markers(
    runner: FakeTestRunner, policy: RequestPolicy
) -> None:
    result = await discover(runner, policy, path="tests/test_io.py")

    assert result.total == 2
    assert [t.node_id for t in result.tests] == [
        "tests/test_io.py::TestFiles::test_read",
        "tests/test_io.py::TestFiles::test_write",
    ]
    assert result.tests[0].file == "tests/test_io.py"
    assert result.tests[0].markers == ("io",)


class ListsAtMost(KeepResult):
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity

    def discovery_capacity(self) -> int | None:
        return self.capacity


async def test_the_runner_describes_only_what_the_presenter_could_list_and_counts_the_rest(
    runner: FakeTestRunner, policy: RequestPolicy
) -> None:
    everything = await discover(runner, policy)
    assert runner.calls[-1].max_listed is None

    request = DiscoverTestsRequest.parse({}, policy)
    result = await DiscoverTests(runner, ListsAtMost(2), policy).execute(request)

    assert runner.calls[-1].max_listed == 2
    assert result.tests == everything.tests[:2]
    assert result.total == everything.total > 2
    assert result.omitted_tests == everything.total - 2


async def test_markers_deselect_and_the_count_is_reported(runner: FakeTestRunner, policy: RequestPolicy) -> None:
    result = await discover(runner, policy, markers="fast")

    assert [t.node_id for t in result.tests] == ["tests/test_math.py::test_add"]
    assert result.deselected == 4


async def test_collection_errors_are_part_of_the_answer_not_an_error(
    runner: FakeTestRunner, policy: RequestPolicy
) -> None:
    runner.fail_with("collection_error", "ImportError: cannot import name 'x'")

    result = await discover(runner, policy)

    assert [e.message for e in result.collection_errors] == ["ImportError: cannot import name 'x'"]


async def test_a_usage_error_during_discovery_is_an_error(runner: FakeTestRunner, policy: RequestPolicy) -> None:
    runner.fail_with("usage_error")

    with pytest.raises(ExecutionFailed) as caught:
        await discover(runner, policy)

    assert caught.value.reason == "usage_error"


async def test_a_timeout_during_discovery_is_an_error(runner: FakeTestRunner, policy: RequestPolicy) -> None:
    runner.fail_with("timeout")

    with pytest.raises(ExecutionFailed) as caught:
        await discover(runner, policy)

    assert caught.value.reason == "timeout"
