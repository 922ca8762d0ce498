"""Other kinds of tests (issue 19), on pytest 8 and 9: each collected, counted and located exactly.

unittest TestCase suites with subTest, doctests in modules and text files, pytest-bdd scenario
outlines, subtests (the pytest-subtests plugin on pytest 8, built in on pytest 9), and anyio and
trio tests. Plain pytest and the installed server run the same project in the matrix's venvs;
the counts, the words of the summary line, the failures, the node ids and the locations we give
must be pytest's own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.integration.support import alongside
from tests.plugins.support import (
    Ahead,
    Answer,
    Environment,
    Project,
    PytestSays,
    coming,
    headline_words,
    pytest_says,
    same_project_twice,
    serve,
)

pytestmark = pytest.mark.slow

KINDS: dict[str, Project] = {
    "unittest": Project(
        {
            "test_cases.py": """
                import unittest


                class TestNumbers(unittest.TestCase):
                    def test_passes(self):
                        self.assertEqual(1 + 1, 2)

                    def test_fails(self):
                        self.assertEqual("a", "b")

                    def test_errors(self):
                        raise KeyError("missing")

                    @unittest.skip("not today")
                    def test_skipped(self):
                        pass

                    @unittest.expectedFailure
                    def test_expected_failure(self):
                        self.assertEqual(1, 2)

                    def test_subtests(self):
                        for i in range(4):
                            with self.subTest(i=i):
                                self.assertEqual(i % 2, 0)


                class TestBrokenSetUp(unittest.TestCase):
                    def setUp(self):
                        raise RuntimeError("setUp broke")

                    def test_never_runs(self):
                        pass
            """
        }
    ),
    "doctest": Project(
        {
            "mathutils.py": '''
                def double(n):
                    """
                    >>> double(2)
                    4
                    """
                    return n * 2


                def halve(n):
                    """
                    >>> halve(5)
                    2
                    """
                    return n / 2
            ''',
            "test_usage.txt": """
                Using mathutils:

                >>> from mathutils import double
                >>> double(21)
                42
            """,
            "test_plain.py": """
                def test_plain():
                    pass
            """,
        },
        ini="addopts = --doctest-modules",
    ),
    "bdd": Project(
        {
            "features/cucumbers.feature": """
                Feature: Cucumbers
                    Scenario Outline: Eating
                        Given there are <start> cucumbers
                        When I eat <eat> cucumbers
                        Then I should have <left> cucumbers

                        Examples:
                        | start | eat | left |
                        |  12   |  5  |  7   |
                        |  20   |  5  |  14  |

                    Scenario: Not eating
                        Given there are 3 cucumbers
                        Then I should have 3 cucumbers
            """,
            "test_cucumbers.py": """
                from pytest_bdd import given, parsers, scenarios, then, when

                scenarios("features/cucumbers.feature")


                @given(parsers.parse("there are {start:d} cucumbers"), target_fixture="basket")
                def basket(start):
                    return {"count": start}


                @when(parsers.parse("I eat {eat:d} cucumbers"))
                def eat(basket, eat):
                    basket["count"] -= eat


                @then(parsers.parse("I should have {left:d} cucumbers"))
                def left(basket, left):
                    assert basket["count"] == left
            """,
        }
    ),
    "subtests": Project(
        {
            "test_subtests.py": """
                import pytest


                def test_every_subtest_passes(subtests):
                    for i in range(3):
                        with subtests.test(msg="small", i=i):
                            assert i < 3


                def test_two_of_four_fail(subtests):
                    for i in range(4):
                        with subtests.test(msg="parity", i=i):
                            assert i % 2 == 0


                def test_a_subtest_skips(subtests):
                    with subtests.test(msg="skips"):
                        pytest.skip("not here")
                    with subtests.test(msg="passes"):
                        pass


                def test_without_subtests():
                    pass
            """
        }
    ),
    "anyio-trio": Project(
        {
            "test_async.py": """
                import anyio
                import pytest
                import trio


                @pytest.fixture(params=["asyncio", "trio"])
                def anyio_backend(request):
                    return request.param


                @pytest.mark.anyio
                async def test_anyio_sleeps():
                    await anyio.sleep(0)


                @pytest.mark.anyio
                async def test_anyio_fails():
                    await anyio.sleep(0)
                    assert anyio.get_current_task().name == "nobody"


                @pytest.mark.trio
                async def test_trio_nursery():
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(trio.sleep, 0)


                @pytest.mark.trio
                async def test_trio_fails():
                    await trio.sleep(0)
                    assert 1 == 2
            """
        }
    ),
}


@dataclass(frozen=True)
class Observed:
    said: PytestSays
    run: Answer
    discovery: Answer


_AHEAD: Ahead[tuple[str, str], Observed] = Ahead()


def observed(
    request: pytest.FixtureRequest,
    plugin_envs: dict[str, Environment],
    env: Environment,
    kind: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Observed:
    """Plain pytest and the server (execute_tests, then discover_tests) on one kind's project; the
    ones the module's selected tests read next are observed meanwhile."""

    def key(item: pytest.Item) -> tuple[str, str] | None:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if getattr(item, "module", None) is not request.module or not {"env", "kind"} <= set(params):
            return None
        return (params["env"], params["kind"])

    def make(key: tuple[str, str]) -> Callable[[], Awaitable[Observed]]:
        return observation(plugin_envs[key[0]], key[1], tmp_path_factory)

    return _AHEAD.get((env.name, kind), make, coming(request, key))


def observation(
    env: Environment, kind: str, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[], Awaitable[Observed]]:
    tmp = tmp_path_factory.mktemp(f"{kind}-{env.name}")
    pytest_root, mcp_root = same_project_twice(KINDS[kind], tmp)

    async def observe() -> Observed:
        said, (run, discovery) = await alongside(
            lambda: pytest_says(env, pytest_root, [], locations=True),
            serve(env, mcp_root, tmp, ("execute_tests", {"detail": "all"}), ("discover_tests", {})),
        )
        return Observed(said, run, discovery)

    return observe


@pytest.fixture(params=list(KINDS))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def seen(
    request: pytest.FixtureRequest,
    plugin_envs: dict[str, Environment],
    env: Environment,
    kind: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Observed:
    return observed(request, plugin_envs, env, kind, tmp_path_factory)


def test_counts_are_pytests_own(seen: Observed) -> None:
    assert seen.run.counts == seen.said.counts, seen.run.context()
    assert seen.run.result["exit_code"] == seen.said.exit_code, seen.run.context()


def test_text_opens_with_pytests_words(seen: Observed) -> None:
    assert seen.said.words is not None, seen.said.output[-3000:]
    assert headline_words(seen.run.headline) == seen.said.words, seen.run.context()


def test_failures_are_pytests_short_summary(seen: Observed) -> None:
    assert seen.run.failures == seen.said.failures, seen.run.context()


def test_discovered_node_ids_and_lines_are_pytests(seen: Observed) -> None:
    found: list[dict[str, Any]] = seen.discovery.result["tests"]
    assert seen.said.collected, f"pytest's item locations were not recorded:\n{seen.said.output[-3000:]}"

    assert [test["node_id"] for test in found] == list(seen.said.collected)
    assert {test["node_id"]: (test["file"], test["line"]) for test in found} == seen.said.collected


def test_reported_locations_are_pytests(seen: Observed) -> None:
    reported = {(test["node_id"], test["location"]) for test in seen.run.result["tests"]}

    assert reported == {(node_id, f"{file}:{line}") for node_id, (file, line) in seen.said.collected.items()}, (
        seen.run.context()
    )
