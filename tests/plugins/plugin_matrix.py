"""The plugin matrix (issue 19): with every widely used plugin installed, our counts are pytest's own.

Each case is a minimal project that exercises one plugin the way its users do. Plain
`python -m pytest` runs it in the matrix's venv, and the installed pytest-mcp server runs a copy
of it with the same venv's interpreter, through a real MCP client. Every count in pytest's final
line must be in our `summary` (`rerun` for pytest-rerunfailures, `other_statuses` for any other
word a plugin adds), our text block must open with pytest's words in pytest's order, and the
failures we list must be the `FAILED`/`ERROR` lines of pytest's `-rfE`.

`PluginMatrix` holds the checks; test_plugins_on_pytest8.py and test_plugins_on_pytest9.py run
them on one environment each (two files, so that `--dist loadfile` spreads them over two workers).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.integration.support import alongside
from tests.plugins.support import (
    Ahead,
    Answer,
    Environment,
    Project,
    PytestSays,
    assert_coverage_is_pytest_covs,
    coming,
    execute,
    headline_words,
    pytest_says,
    same_project_twice,
)


@dataclass(frozen=True)
class Case:
    """A project, the execute_tests call that runs it, and the plain pytest arguments that match.

    `pytest_args` say to plain pytest what the call's arguments say to the server (`-n 2` for
    `workers: 2`), or what plain pytest needs to print its own line at all (sugar's terminal
    replaces it). `seeded`: both sides get pytest-randomly's seed from PYTEST_ADDOPTS.
    """

    project: Project
    call: dict[str, Any] = field(default_factory=dict)
    pytest_args: tuple[str, ...] = ()
    seeded: bool = True


CASES: dict[str, Case] = {
    "rerunfailures": Case(
        Project(
            {
                "test_reruns.py": """
                    ATTEMPTS = {"flaky": 0}


                    def test_flaky_passes_on_its_second_attempt():
                        ATTEMPTS["flaky"] += 1
                        assert ATTEMPTS["flaky"] > 1, "the first attempt fails"


                    def test_always_fails():
                        assert 1 + 1 == 3


                    def test_passes():
                        pass
                """
            },
            ini="addopts = --reruns 2",
        )
    ),
    "xdist": Case(
        Project(
            {
                "test_one.py": """
                    import pytest


                    @pytest.mark.parametrize("n", range(4))
                    def test_even_or_odd(n):
                        assert n in (0, 1, 2, 3)


                    def test_fails_on_a_worker():
                        assert "worker" == "controller"
                """,
                "test_two.py": """
                    import pytest


                    @pytest.mark.skip(reason="not here")
                    def test_skipped():
                        pass


                    @pytest.mark.xfail(reason="known")
                    def test_known_bug():
                        assert False
                """,
            }
        ),
        call={"workers": 2},
        pytest_args=("-n", "2"),
    ),
    "cov": Case(
        Project(
            {
                "calc.py": """
                    def sign(n):
                        if n > 0:
                            return 1
                        if n < 0:
                            return -1
                        return 0
                """,
                "test_calc.py": """
                    from calc import sign


                    def test_positive():
                        assert sign(5) == 1


                    def test_zero_is_wrong():
                        assert sign(0) == 1
                """,
            },
            ini="pythonpath = .",
        ),
        call={"coverage": True},
        pytest_args=("--cov",),
    ),
    "randomly": Case(
        Project(
            {
                "test_random.py": """
                    import random


                    def test_draw_below_a_half():
                        assert random.random() < 0.5


                    def test_draw_above_a_tenth():
                        assert random.random() > 0.1


                    def test_shuffle_moves_something():
                        items = list(range(10))
                        random.shuffle(items)
                        assert items != list(range(10))
                """
            },
            ini="addopts = -p randomly --randomly-seed=12345",
        ),
        seeded=False,
    ),
    "timeout": Case(
        Project(
            {
                "test_slow.py": """
                    import time


                    def test_sleeps_past_the_timeout():
                        time.sleep(5)


                    def test_quick():
                        pass
                """
            },
            ini="addopts = --timeout=1",
        )
    ),
    "asyncio-auto": Case(
        Project(
            {
                "test_auto.py": """
                    import asyncio

                    import pytest


                    @pytest.fixture
                    async def greeting():
                        await asyncio.sleep(0)
                        return "hello"


                    async def test_async_fixture(greeting):
                        assert greeting == "hello"


                    async def test_async_fails():
                        await asyncio.sleep(0)
                        assert 1 == 2


                    def test_sync():
                        pass
                """
            },
            ini="asyncio_mode = auto",
        )
    ),
    "asyncio-strict": Case(
        Project(
            {
                "test_strict.py": """
                    import asyncio

                    import pytest


                    @pytest.mark.asyncio
                    async def test_marked():
                        await asyncio.sleep(0)


                    @pytest.mark.asyncio
                    async def test_marked_fails():
                        assert await asyncio.sleep(0, result=1) == 2


                    async def test_unmarked_is_not_run_by_asyncio():
                        await asyncio.sleep(0)
                """
            },
            ini="asyncio_mode = strict",
        )
    ),
    "hypothesis": Case(
        Project(
            {
                "test_properties.py": """
                    from hypothesis import given, settings, strategies as st


                    @given(st.integers(), st.integers())
                    def test_addition_commutes(a, b):
                        assert a + b == b + a


                    @settings(derandomize=True, database=None)
                    @given(st.integers(min_value=0))
                    def test_falsified(n):
                        assert n < 100
                """
            }
        )
    ),
    "benchmark": Case(
        Project(
            {
                "test_bench.py": """
                    def test_sum(benchmark):
                        assert benchmark.pedantic(sum, args=(range(100),), rounds=5, iterations=10) == 4950


                    def test_sorted_the_wrong_way(benchmark):
                        assert benchmark.pedantic(sorted, args=([3, 1, 2],), rounds=5) == [3, 2, 1]
                """
            }
        )
    ),
    "sugar": Case(
        Project(
            {
                "test_sweet.py": """
                    import pytest


                    def test_passes():
                        pass


                    def test_fails():
                        assert "sugar" == "salt"


                    @pytest.mark.skip(reason="later")
                    def test_skipped():
                        pass


                    @pytest.mark.xfail(reason="known")
                    def test_xfails():
                        assert False
                """
            },
            # Its terminal even without a tty, as a developer at a terminal sees it.
            ini="addopts = --force-sugar",
        ),
        # pytest-sugar prints its own "Results" block instead of pytest's line: plain pytest
        # without it (and so without --force-sugar) says what pytest counts.
        pytest_args=("-o", "addopts=", "-p", "no:sugar"),
    ),
    "mock": Case(
        Project(
            {
                "test_mocking.py": """
                    import os


                    def test_patch(mocker):
                        mocker.patch("os.getcwd", return_value="/nowhere")
                        assert os.getcwd() == "/nowhere"


                    def test_spy(mocker):
                        spy = mocker.spy(os.path, "join")
                        os.path.join("a", "b")
                        spy.assert_called_once_with("a", "b")


                    def test_stub_never_called(mocker):
                        stub = mocker.stub(name="callback")
                        stub.assert_called_once()
                """
            }
        )
    ),
    "repeat": Case(
        Project(
            {
                "test_repeated.py": """
                    import pytest


                    def test_passes():
                        pass


                    def test_fails():
                        assert 2 * 2 == 5


                    @pytest.mark.repeat(2)
                    def test_marked_twice():
                        pass
                """
            },
            ini="addopts = --count 3",
        )
    ),
    "env": Case(
        Project(
            {
                "test_environ.py": """
                    import os


                    def test_set_by_pytest_env():
                        assert os.environ["GREETING"] == "hello"


                    def test_default_only_if_unset():
                        assert os.environ["PLUGIN_MATRIX_DEFAULT"] == "fallback"


                    def test_wrong_expectation():
                        assert os.environ["GREETING"] == "goodbye"
                """
            },
            ini="""
                env =
                    GREETING=hello
                    D:PLUGIN_MATRIX_DEFAULT=fallback
            """,
        )
    ),
    "html": Case(
        Project(
            {
                "test_report.py": """
                    import pytest


                    def test_passes():
                        pass


                    def test_fails():
                        assert [1, 2] == [1, 3]


                    @pytest.mark.skip(reason="not in the report's way")
                    def test_skipped():
                        pass
                """
            },
            ini="addopts = --html=report.html --self-contained-html",
        )
    ),
    "instafail": Case(
        Project(
            {
                "test_insta.py": """
                    import pytest


                    @pytest.fixture
                    def broken():
                        raise RuntimeError("fixture broke")


                    def test_fails_at_once():
                        assert "now" == "later"


                    def test_errors_in_setup(broken):
                        pass


                    def test_passes():
                        pass
                """
            },
            ini="addopts = --instafail",
        )
    ),
    "django": Case(
        Project(
            {
                "manage.py": """
                    import os
                    import sys

                    if __name__ == "__main__":
                        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
                        from django.core.management import execute_from_command_line

                        execute_from_command_line(sys.argv)
                """,
                "settings.py": """
                    SECRET_KEY = "plugin-matrix-not-secret"
                    INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth"]
                    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
                    USE_TZ = True
                """,
                "test_django.py": """
                    import pytest
                    from django.conf import settings
                    from django.contrib.auth.models import User


                    def test_settings_without_a_database():
                        assert settings.SECRET_KEY == "plugin-matrix-not-secret"


                    @pytest.mark.django_db
                    def test_user_is_saved():
                        User.objects.create(username="ada")
                        assert User.objects.count() == 1


                    def test_database_without_the_mark():
                        assert User.objects.count() == 0
                """,
            },
            ini="DJANGO_SETTINGS_MODULE = settings",
        )
    ),
    "bdd": Case(
        Project(
            {
                "features/arithmetic.feature": """
                    Feature: Arithmetic
                        Scenario: Adding
                            Given the number 2
                            When I add 3
                            Then the result is 5

                        Scenario: Adding wrongly
                            Given the number 2
                            When I add 2
                            Then the result is 5
                """,
                "test_arithmetic.py": """
                    from pytest_bdd import given, parsers, scenarios, then, when

                    scenarios("features/arithmetic.feature")


                    @given(parsers.parse("the number {n:d}"), target_fixture="number")
                    def number(n):
                        return {"value": n}


                    @when(parsers.parse("I add {n:d}"))
                    def add(number, n):
                        number["value"] += n


                    @then(parsers.parse("the result is {n:d}"))
                    def result(number, n):
                        assert number["value"] == n
                """,
            }
        )
    ),
    "order": Case(
        Project(
            {
                "test_ordered.py": """
                    import pytest

                    STEPS = []


                    @pytest.mark.order(2)
                    def test_second():
                        assert STEPS == ["first"]
                        STEPS.append("second")


                    @pytest.mark.order(1)
                    def test_first():
                        STEPS.append("first")


                    @pytest.mark.order(-1)
                    def test_last():
                        assert STEPS == ["first", "second"]


                    @pytest.mark.order(3)
                    def test_third_expects_nothing_yet():
                        assert STEPS == []
                """
            }
        )
    ),
    "check": Case(
        Project(
            {
                "test_soft.py": """
                    from pytest_check import check


                    def test_every_failed_check_is_reported():
                        check.equal(1, 2)
                        check.is_true(False)
                        with check:
                            assert "a" == "b"


                    def test_checks_pass():
                        check.equal(1, 1)
                        check.is_in("a", "abc")
                """
            }
        )
    ),
    # Not a package: a project's own plugin adding a status to pytest's line, as rerunfailures does.
    "local-status": Case(
        Project(
            {
                "conftest.py": """
                    def pytest_report_teststatus(report, config):
                        if report.when == "call" and report.passed and "slowpoke" in report.keywords:
                            return "slowpoke", "s", "SLOWPOKE"
                """,
                "test_status.py": """
                    import pytest


                    @pytest.mark.slowpoke
                    def test_counted_as_slowpoke():
                        pass


                    def test_passes():
                        pass


                    def test_fails():
                        assert False
                """,
            },
            ini="markers = slowpoke: a test the conftest counts under its own word",
        )
    ),
}


@dataclass(frozen=True)
class Observed:
    said: PytestSays
    answer: Answer
    mcp_root: Path


_AHEAD: Ahead[tuple[str, str], Observed] = Ahead()


def observed(
    request: pytest.FixtureRequest, env: Environment, name: str, tmp_path_factory: pytest.TempPathFactory
) -> Observed:
    """Plain pytest and the server on case `name`'s project: one run each, shared by the checks;
    the cases the class's selected tests read next are observed meanwhile."""

    def key(item: pytest.Item) -> tuple[str, str] | None:
        # The matrix's own cases on this environment (whatever asks: its class, or a representative
        # outside it), never another module's `case` parameter.
        cls, callspec = getattr(item, "cls", None), getattr(item, "callspec", None)
        matrix = isinstance(cls, type) and issubclass(cls, PluginMatrix) and cls.environment == env.name
        if not matrix or callspec is None or "case" not in callspec.params:
            return None
        return (env.name, callspec.params["case"])

    def make(key: tuple[str, str]) -> Callable[[], Awaitable[Observed]]:
        return observation(env, key[1], tmp_path_factory)

    return _AHEAD.get((env.name, name), make, coming(request, key))


def observation(
    env: Environment, name: str, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[], Awaitable[Observed]]:
    case = CASES[name]
    tmp = tmp_path_factory.mktemp(f"{name}-{env.name}")
    pytest_root, mcp_root = same_project_twice(case.project, tmp)

    async def observe() -> Observed:
        said, [answer] = await alongside(
            lambda: pytest_says(env, pytest_root, list(case.pytest_args), seeded=case.seeded),
            execute(env, mcp_root, tmp, {"detail": "all", **case.call}, seeded=case.seeded),
        )
        return Observed(said, answer, mcp_root)

    return observe


@pytest.mark.slow
class PluginMatrix:
    """The checks, on the environment a subclass names."""

    environment: str

    @pytest.fixture
    def env(self, plugin_envs: dict[str, Environment]) -> Environment:
        return plugin_envs[self.environment]

    @pytest.fixture(params=list(CASES))
    def case(self, request: pytest.FixtureRequest) -> str:
        return str(request.param)

    @pytest.fixture
    def seen(
        self, request: pytest.FixtureRequest, env: Environment, case: str, tmp_path_factory: pytest.TempPathFactory
    ) -> Observed:
        return observed(request, env, case, tmp_path_factory)

    def test_counts_are_pytests_own(self, seen: Observed) -> None:
        assert seen.answer.counts == seen.said.counts, seen.answer.context()
        assert seen.answer.result["exit_code"] == seen.said.exit_code, seen.answer.context()

    def test_text_opens_with_pytests_words(self, seen: Observed) -> None:
        assert seen.said.words is not None, seen.said.output[-3000:]
        assert headline_words(seen.answer.headline) == seen.said.words, seen.answer.context()

    def test_failures_are_pytests_short_summary(self, seen: Observed) -> None:
        assert seen.answer.failures == seen.said.failures, seen.answer.context()

    # Evidence that the plugin really ran on the server's side.

    def test_the_html_report_is_written(
        self, request: pytest.FixtureRequest, env: Environment, tmp_path_factory: pytest.TempPathFactory
    ) -> None:
        seen = observed(request, env, "html", tmp_path_factory)

        assert (seen.mcp_root / "report.html").is_file()

    def test_coverage_is_pytest_covs_total(
        self, request: pytest.FixtureRequest, env: Environment, tmp_path_factory: pytest.TempPathFactory
    ) -> None:
        seen = observed(request, env, "cov", tmp_path_factory)

        assert_coverage_is_pytest_covs(seen.answer, seen.said)

    def test_the_randomly_seed_is_in_the_command(
        self, request: pytest.FixtureRequest, env: Environment, tmp_path_factory: pytest.TempPathFactory
    ) -> None:
        seen = observed(request, env, "randomly", tmp_path_factory)

        assert "--randomly-seed=12345" in " ".join(seen.answer.result["command"] or ()), seen.answer.context()
