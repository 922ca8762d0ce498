"""A project's own `addopts` (issue 19): counts stay exact, and workers, coverage and failfast work.

One project, written once per case with the case's options as its pytest.ini `addopts`: each
option the issue lists, and two combinations. The installed server answers execute_tests on it
in the plugin matrix's environments of ENVIRONMENTS (pytest-xdist and pytest-cov are installed),
with no arguments and with `workers`/`coverage`/`failfast`; plain pytest runs it with the same
options on its command line. A request that conflicts with the project's addopts is passed after
them, so pytest takes the request's value (`-n 1` after `-n auto`, `--maxfail=2` after `-x`);
these cases show the server's answer follows (README: "When the project's addopts and a request
disagree").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp_types import INVALID_PARAMS

from tests.answers import call_error
from tests.integration.support import alongside
from tests.plugins.support import (
    CALL_TIMEOUT,
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
    server_for,
)

pytestmark = pytest.mark.slow

# pytest 9 only: on pytest 8 as well this module costs about 90 s more CPU, about 45 s more of
# CI's wall time on 2 cores. Add "pytest8" to run it there too.
ENVIRONMENTS = ("pytest9",)

FILES = {
    "conftest.py": "",  # puts the root on sys.path, for `lib`
    "lib.py": """
        def halve(n):
            if n % 2:
                raise ValueError("odd")
            return n // 2
    """,
    "test_first.py": """
        import os
        import warnings

        import pytest

        from lib import halve


        def test_halves():
            assert halve(4) == 2


        def test_fails_and_names_its_workers():
            workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "none")
            assert halve(2) == 2, f"fails on purpose (xdist workers: {workers})"


        @pytest.mark.skip(reason="skipped on purpose")
        def test_skipped():
            pass


        @pytest.mark.xfail(reason="known bug")
        def test_known_bug():
            assert halve(3) == 1


        def test_warns():
            warnings.warn(UserWarning("careful"))
    """,
    "test_second.py": """
        import pytest


        @pytest.fixture
        def broken():
            raise RuntimeError("fixture broke")


        def test_errors_in_setup(broken):
            pass


        def test_fails_too():
            assert [1, 2] == [2, 1]


        @pytest.mark.parametrize("n", [2, 4, 6])
        def test_even(n):
            assert n % 2 == 0
    """,
}

# The requests, and what plain pytest is told for each (beyond the project's own addopts).
REQUESTS: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "plain": ({}, ()),
    "workers-coverage": ({"workers": 2, "coverage": True}, ("-n", "2", "--cov")),
    "failfast": ({"failfast": True}, ("-x",)),
    "one-worker": ({"workers": 1}, ("-n", "1")),
    "maxfail-2": ({"maxfail": 2}, ("--maxfail=2",)),
    "coverage": ({"coverage": True}, ("--cov",)),
}


@dataclass(frozen=True)
class Case:
    """A project's `addopts` and the requests tried on it."""

    addopts: str
    requests: tuple[str, ...] = ("plain",)

    @property
    def quiet(self) -> bool:
        """Plain pytest gets the server's default `-q` unless the project has its own: our `-q` on top
        of it is `-qq`, at which pytest prints no summary line, so plain pytest runs at the project's."""
        return "-q" not in self.addopts.split()

    @property
    def no_terminal(self) -> bool:
        """Without its terminal pytest prints no line: plain pytest says what it counts without addopts."""
        return "no:terminal" in self.addopts


CASES: dict[str, Case] = {
    # -n 1 after -n auto: the request's count wins, as it would on pytest's command line.
    "n-auto": Case("-n auto", ("plain", "one-worker")),
    "p-xdist": Case("-p xdist", ("plain", "workers-coverage", "failfast")),
    "cov": Case("--cov", ("plain", "coverage")),
    # --maxfail=2 after -x: the request's limit wins. Where -x stops under xdist is a race, in
    # pytest as in the server, so no project with -x is asked for workers.
    "x": Case("-x", ("plain", "failfast", "maxfail-2")),
    "q": Case("-q"),
    "v": Case("-v"),
    "ra": Case("-ra"),
    "no-cacheprovider": Case("-p no:cacheprovider"),
    "tb-line": Case("--tb=line"),
    "no-terminal": Case("-p no:terminal", ("plain", "workers-coverage", "failfast")),
    "parallel": Case("-n auto --cov -q -ra -p no:cacheprovider --tb=line"),
    "serial": Case("-x -v -ra --tb=line -p no:cacheprovider", ("plain", "coverage", "failfast")),
}

CALLS = [(env, case, request) for env in ENVIRONMENTS for case, spec in CASES.items() for request in spec.requests]
CALL_IDS = [f"{env}-{case}-{request}" for env, case, request in CALLS]


@dataclass(frozen=True)
class Observed:
    said: PytestSays
    answer: Answer


_AHEAD: Ahead[tuple[str, str], dict[str, Observed]] = Ahead()


def observed(
    request: pytest.FixtureRequest,
    plugin_envs: dict[str, Environment],
    call: tuple[str, str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Observed:
    """Every request of a case through one server, and plain pytest once per request; the cases
    the module's selected tests read next are observed meanwhile."""
    env, case, name = call

    def key(item: pytest.Item) -> tuple[str, str] | None:
        params = getattr(getattr(item, "callspec", None), "params", {})
        found = params.get("call") or params.get("feature_call")
        if getattr(item, "module", None) is not request.module or found is None:
            return None
        return (found[0], found[1])

    def make(key: tuple[str, str]) -> Callable[[], Awaitable[dict[str, Observed]]]:
        return observation(plugin_envs[key[0]], key[1], tmp_path_factory)

    return _AHEAD.get((env, case), make, coming(request, key))[name]


def observation(
    env: Environment, case: str, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[], Awaitable[dict[str, Observed]]]:
    spec = CASES[case]
    project = Project(FILES, ini=f"addopts = {spec.addopts}")
    tmp = tmp_path_factory.mktemp(f"addopts-{case}-{env.name}")
    mcp_root = project.write(tmp / "mcp")
    pytest_roots = {name: project.write(tmp / "pytest" / name) for name in spec.requests}
    extra = ["-o", "addopts="] if spec.no_terminal else []

    def ask_pytest() -> list[PytestSays]:
        return [
            pytest_says(env, root, [*extra, *REQUESTS[name][1]], quiet=spec.quiet)
            for name, root in pytest_roots.items()
        ]

    async def observe() -> dict[str, Observed]:
        said, answers = await alongside(
            ask_pytest, execute(env, mcp_root, tmp, *(REQUESTS[name][0] for name in spec.requests))
        )
        return {name: Observed(*pair) for name, *pair in zip(spec.requests, said, answers, strict=True)}

    return observe


@pytest.fixture(params=CALLS, ids=CALL_IDS)
def call(request: pytest.FixtureRequest) -> tuple[str, str, str]:
    return request.param


@pytest.fixture
def seen(
    request: pytest.FixtureRequest,
    plugin_envs: dict[str, Environment],
    call: tuple[str, str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Observed:
    return observed(request, plugin_envs, call, tmp_path_factory)


def test_counts_are_pytests_own(seen: Observed) -> None:
    assert seen.answer.counts == seen.said.counts, seen.answer.context()
    assert seen.answer.result["exit_code"] == seen.said.exit_code, seen.answer.context()


def test_text_opens_with_pytests_words(seen: Observed) -> None:
    assert seen.said.words is not None, seen.said.output[-3000:]
    assert headline_words(seen.answer.headline) == seen.said.words, seen.answer.context()


def test_failures_are_pytests_short_summary(seen: Observed) -> None:
    assert seen.answer.failures == seen.said.failures, seen.answer.context()


FEATURE_CALLS = [call for call in CALLS if {"workers", "coverage"} & set(REQUESTS[call[2]][0])]


@pytest.mark.parametrize("feature_call", FEATURE_CALLS, ids=[CALL_IDS[CALLS.index(call)] for call in FEATURE_CALLS])
def test_requested_workers_and_coverage_happen(
    request: pytest.FixtureRequest,
    plugin_envs: dict[str, Environment],
    feature_call: tuple[str, str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The failing test names the xdist workers it ran under; coverage is pytest-cov's TOTAL."""
    seen = observed(request, plugin_envs, feature_call, tmp_path_factory)
    arguments = REQUESTS[feature_call[2]][0]

    if "workers" in arguments:
        messages = [
            test["message"] or ""
            for test in seen.answer.reports
            if test["node_id"] == "test_first.py::test_fails_and_names_its_workers"
        ]
        assert any(f"xdist workers: {arguments['workers']}" in message for message in messages), seen.answer.context()
    if "coverage" in arguments:
        assert_coverage_is_pytest_covs(seen.answer, seen.said)


@pytest.mark.anyio
@pytest.mark.parametrize("field", ["last_failed", "failed_first"])
async def test_the_cache_a_project_turned_off_is_asked_for(
    plugin_envs: dict[str, Environment], field: str, tmp_path: Path
) -> None:
    """`-p no:cacheprovider` and `last_failed`/`failed_first`: pytest would run everything, silently."""
    root = Project(FILES, ini="addopts = -p no:cacheprovider").write(tmp_path / "project")
    async with server_for(plugin_envs[ENVIRONMENTS[-1]], root, tmp_path).client() as client:
        error = await call_error(client, "execute_tests", {field: True, "timeout": CALL_TIMEOUT}, within=CALL_TIMEOUT)

    assert (error.code, error.reason) == (INVALID_PARAMS, "invalid_arguments"), error
    assert [item["field"] for item in error.data["errors"]] == [field], error


def test_the_second_pass_runs_under_the_projects_options(seen: Observed) -> None:
    """The pass that names culprits starts under every project's addopts and PYTEST_ADDOPTS (here a
    `--randomly-seed`): a usage error, or a pass that repeats nothing, names no culprit, silently."""
    reason = (seen.answer.result.get("localization") or {}).get("reason", "")
    assert not any(words in reason for words in ("exit code", "could not start", "repeated no test")), (
        seen.answer.context()
    )
