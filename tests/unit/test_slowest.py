"""`slowest` inside pytest: the reporter's bounded heap, and the request's bounds."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib import resources
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from pytest_mcp.domain.errors import InvalidArguments
from pytest_mcp.domain.requests import MAX_SLOWEST, ExecuteTestsRequest, RequestPolicy

PLUGIN = resources.files("pytest_mcp.adapters.pytest_subprocess").joinpath("_plugin")


@pytest.fixture
def reporter(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(PLUGIN))  # as in a run: the protocol lies beside the reporter
    import _pytest_mcp_reporter  # type: ignore[import-not-found]

    yield _pytest_mcp_reporter
    sys.modules.pop("_pytest_mcp_reporter", None)


def report(node_id: str, when: str, duration: float, outcome: str = "passed", **more: Any) -> SimpleNamespace:
    return SimpleNamespace(nodeid=node_id, when=when, duration=duration, outcome=outcome, **more)


def phases(node_id: str, setup: float, call: float, teardown: float, **call_more: Any) -> list[SimpleNamespace]:
    return [
        report(node_id, "setup", setup),
        report(node_id, "call", call, **call_more),
        report(node_id, "teardown", teardown),
    ]


def slowest(reporter: ModuleType, count: int, reports: list[SimpleNamespace]) -> list[tuple[str, float]]:
    heap = reporter.Slowest(count)
    for each in reports:
        heap.pytest_runtest_logreport(each)
    return [(test["node_id"], test["duration"]) for test in heap.ranked.fact()]


def test_each_tests_phases_are_summed_and_only_the_slowest_are_kept(reporter: ModuleType) -> None:
    reports = [
        *phases("t.py::test_a", 0.1, 0.1, 0.1),
        *phases("t.py::test_setup", 2.0, 0.0, 0.0),
        *phases("t.py::test_b", 0.0, 0.2, 0.0),
        *phases("t.py::test_teardown", 0.0, 0.0, 1.0),
        *phases("t.py::test_c", 0.0, 0.0, 0.0),
    ]

    assert slowest(reporter, 3, reports) == [
        ("t.py::test_setup", 2.0),
        ("t.py::test_teardown", 1.0),
        ("t.py::test_a", 0.3),
    ]


def test_equal_durations_keep_the_earlier_tests(reporter: ModuleType) -> None:
    reports = [each for n in range(10) for each in phases(f"t.py::test_{n}", 0.0, 1.0, 0.0)]

    assert [node_id for node_id, _ in slowest(reporter, 3, reports)] == ["t.py::test_0", "t.py::test_1", "t.py::test_2"]


def test_a_test_run_again_counts_every_attempt_once_and_a_subtest_is_inside_its_test(reporter: ModuleType) -> None:
    reports = [
        *phases("t.py::test_flaky", 0.0, 1.0, 0.0, outcome="rerun"),
        *phases("t.py::test_flaky", 0.0, 1.0, 0.0),
        report("t.py::test_sub", "setup", 0.0),
        report("t.py::test_sub", "call", 0.5, context={}),  # a subtest's report, within its test's call
        report("t.py::test_sub", "call", 0.6),
        report("t.py::test_sub", "teardown", 0.0),
    ]

    assert slowest(reporter, 5, reports) == [("t.py::test_flaky", 2.0), ("t.py::test_sub", 0.6)]


def test_slowest_is_a_count_from_zero_to_its_limit(policy: RequestPolicy) -> None:
    assert ExecuteTestsRequest.parse({}, policy).slowest == 0
    assert ExecuteTestsRequest.parse({"slowest": MAX_SLOWEST}, policy).spec(policy).facts == {"slowest": MAX_SLOWEST}
    assert ExecuteTestsRequest.parse({"slowest": 0}, policy).spec(policy).facts == {}
    for wrong, reason in (
        (MAX_SLOWEST + 1, "less than or equal to 50"),
        (-1, "greater than or equal to 0"),
        (True, "integer"),
    ):
        with pytest.raises(InvalidArguments) as raised:
            ExecuteTestsRequest.parse({"slowest": wrong}, policy)
        assert [(error.field, reason in error.reason) for error in raised.value.errors] == [("slowest", True)]


def test_the_facts_names_are_the_run_facts_fields_named_once() -> None:
    """The keys that cross from pytest's process are named in the protocol, not spelled out at each use
    (issue 43: `"slowest"` stood as a bare string in the reporter and the fake, where a typo drops it)."""
    from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
    from pytest_mcp.domain.models import RunFacts

    assert set(protocol.FACT_NAMES) == set(RunFacts.model_fields)
    sources = [PLUGIN.joinpath("_pytest_mcp_reporter.py"), resources.files("pytest_mcp.adapters.fake") / "runner.py"]
    for source in sources:
        text = source.read_text(encoding="utf-8")
        assert not [name for name in protocol.FACT_NAMES if f'"{name}"' in text], source


@pytest.mark.anyio
async def test_the_fake_ranks_the_slowest_by_the_reporters_own_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """One rule, one place: the fake feeds its scripted durations to protocol.SlowestTests, as the reporter
    feeds pytest's (issue 43), instead of a ranking of its own."""
    from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
    from pytest_mcp.testing import FakeTestRunner, connect

    fed: list[tuple[str, float]] = []

    class Spy(protocol.SlowestTests):  # type: ignore[misc,name-defined]
        def add(self, node_id: str, seconds: float) -> None:
            fed.append((node_id, seconds))
            super().add(node_id, seconds)

    monkeypatch.setattr(protocol, "SlowestTests", Spy)
    runner = FakeTestRunner().script("t.py::test_a", duration=0.5).script("t.py::test_b", duration=0.5)
    runner.script("t.py::test_c", "error", phase="teardown", duration=1.0)
    async with connect(runner) as client:
        result = await client.call_tool("execute_tests", {"slowest": 2})

    assert fed == [("t.py::test_a", 0.5), ("t.py::test_b", 0.5), ("t.py::test_c", 1.0)]
    assert result.structured_content is not None
    assert result.structured_content["slowest"] == [
        {"node_id": "t.py::test_c", "duration": 1.0},
        {"node_id": "t.py::test_a", "duration": 0.5},  # equal durations: the earlier is the slower
    ]
