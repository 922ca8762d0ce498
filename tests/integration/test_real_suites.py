"""On real open-source suites, the runner's counts equal pytest's own summary line, word for word.

The suites, pinned by version, and the selection run on each are in `real_suites.toml`;
`scripts/fetch-real-suites` (run by `scripts/test`, cached under `.cache/real-suites/`) fetches
their sdists and builds their venvs. Plain pytest in the same venv is the oracle.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.runner import SubprocessPytestRunner
from pytest_mcp.domain.runs import CollectSpec, RunReport, RunSpec
from tests.integration.oracle import (
    COUNT_KEYS,
    PytestOutcome,
    pytest_collect,
    pytest_says,
    pytest_selects,
    run_args,
    summary_words,
)
from tests.integration.support import alongside, collect, run

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
FETCH = REPO / "scripts" / "fetch-real-suites"
# A worktree may link .cache: a suite's root is a real path, as Settings makes --root (bwrap cannot
# bind a root whose path runs through a link).
CACHE = (REPO / ".cache").resolve() / "real-suites"
DEFINITIONS = tomllib.loads((Path(__file__).with_name("real_suites.toml")).read_text(encoding="utf-8"))["suite"]
NAMES = [suite["name"] for suite in DEFINITIONS]

# The flags the runner passes for a verbosity, so that plain pytest prints the same line.
_VERBOSITY_FLAGS = {-1: ["-q"], 0: [], 1: ["-v"]}
_TIMEOUT = 300.0


@dataclass(frozen=True)
class RealSuite:
    name: str
    version: str
    root: Path
    python: Path
    spec: RunSpec


@pytest.fixture(scope="session")
def real_suites() -> dict[str, RealSuite]:
    """Every suite of real_suites.toml, fetched (a no-op when `.cache/real-suites/` is current)."""
    fetched = subprocess.run([sys.executable, str(FETCH)], capture_output=True, text=True, timeout=900)
    if fetched.returncode != 0:
        message = f"scripts/fetch-real-suites failed (it needs PyPI the first time):\n{fetched.stderr[-3000:]}"
        if os.environ.get("PYTEST_MCP_THIRD_PARTY") == "required":
            pytest.fail(message)
        pytest.skip(message)
    suites = {}
    for definition in DEFINITIONS:
        home = CACHE / f"{definition['name']}-{definition['version']}"
        ready = json.loads((home / "ready.json").read_text(encoding="utf-8"))
        spec = RunSpec(
            node_ids=tuple(definition.get("node_ids", ())),
            keywords=definition.get("keywords"),
            verbosity=definition.get("verbosity", 0),
            timeout=_TIMEOUT,
        )
        suites[definition["name"]] = RealSuite(
            definition["name"], definition["version"], home / ready["root"], home / ready["python"], spec
        )
    return suites


# One oracle run and one runner run per suite, shared by the tests below.
_OBSERVED: dict[str, tuple[PytestOutcome, RunReport]] = {}


async def observe(suite: RealSuite) -> tuple[PytestOutcome, RunReport]:
    if suite.name not in _OBSERVED:
        args = [*_VERBOSITY_FLAGS[suite.spec.verbosity], *run_args(suite.spec)]
        runner = SubprocessPytestRunner(TargetInterpreter.given(suite.python), root=suite.root)
        _OBSERVED[suite.name] = await alongside(
            lambda: pytest_says(suite.python, suite.root, args, timeout=_TIMEOUT), run(runner, suite.spec)
        )
    return _OBSERVED[suite.name]


@pytest.fixture(params=NAMES)
def suite(request: pytest.FixtureRequest, real_suites: dict[str, RealSuite]) -> RealSuite:
    return real_suites[request.param]


async def test_every_count_equals_pytests_summary_line_on_a_real_suite(suite: RealSuite) -> None:
    expected, report = await observe(suite)
    assert expected.counts is not None, f"no summary line from plain pytest:\n{expected.stdout[-3000:]}"
    assert report.summary is not None, f"no summary from the runner:\n{report.stdout[-3000:]}{report.stderr[-3000:]}"

    assert {key: getattr(report.summary, key) for key in COUNT_KEYS} == expected.counts
    assert report.termination.exit_code == expected.exit_code


async def test_total_is_what_pytest_selects_on_a_real_suite(suite: RealSuite) -> None:
    expected, report = await observe(suite)
    assert report.summary is not None

    # A quiet run prints no `collected N items` header; then ask `--collect-only -q` instead.
    selected = expected.selected
    if selected is None:
        selected = pytest_selects(suite.python, suite.root, run_args(suite.spec), timeout=_TIMEOUT)
    assert report.summary.total == selected


async def test_the_summary_line_we_print_is_pytests_own_on_a_real_suite(suite: RealSuite) -> None:
    expected, report = await observe(suite)
    assert report.summary is not None

    ours = report.summary.line().rsplit(" in ", 1)[0].split(", ")
    assert ours == summary_words(expected.stdout)


async def test_non_passing_reports_tally_to_the_counts_on_a_real_suite(suite: RealSuite) -> None:
    expected, report = await observe(suite)
    assert expected.counts is not None

    tally = Counter(test.outcome for test in report.tests)
    listed = {"failed", "skipped", "xfailed", "xpassed"}
    assert {outcome: tally[outcome] for outcome in listed} == {outcome: expected.counts[outcome] for outcome in listed}
    assert tally["error"] + len(report.collection_errors) == expected.counts["errors"]


async def test_the_real_suites_cover_a_big_suite_config_deselection_and_subtests(
    real_suites: dict[str, RealSuite],
) -> None:
    """Guards the choice of suites: each proves something only while pytest reports it."""
    _, packaging = await observe(real_suites["packaging"])
    assert packaging.summary is not None
    assert packaging.summary.total > 2000
    assert packaging.summary.deselected > 0, "addopts = -m 'not property' deselects the property tests"

    expected, more_itertools = await observe(real_suites["more-itertools"])
    assert more_itertools.summary is not None
    assert more_itertools.summary.subtests_passed > 1000
    assert "subtests passed" in expected.stdout.splitlines()[-1]

    _, six = await observe(real_suites["six"])
    assert six.summary is not None
    assert six.summary.skipped > 0

    _, attrs = await observe(real_suites["attrs"])
    assert attrs.summary is not None
    assert attrs.summary.passed > 500, "a src layout installed into its venv, hypothesis's property tests"


async def test_discovery_lists_exactly_pytests_node_ids_and_they_run_back(real_suites: dict[str, RealSuite]) -> None:
    """2,000+ real ids with quotes, spaces, brackets and `@#(` in them, compared one by one."""
    suite = real_suites["packaging"]
    spec = CollectSpec(path="tests/test_markers.py", timeout=_TIMEOUT)
    runner = SubprocessPytestRunner(TargetInterpreter.given(suite.python), root=suite.root)
    expected, found = await alongside(lambda: pytest_collect(suite.python, suite.root, spec), collect(runner, spec))

    ids = [test.node_id for test in found.tests]
    assert len(ids) > 2000
    assert ids == list(expected.node_ids)

    awkward = [node_id for node_id in ids if any(c in node_id for c in " '\"@#(\\")][:40]
    assert len(awkward) == 40
    rerun = await run(runner, RunSpec(node_ids=tuple(awkward), include_passed=True, timeout=_TIMEOUT))
    assert rerun.summary is not None
    assert rerun.summary.total == len(awkward)
    assert sorted(test.node_id for test in rerun.tests if test.outcome == "passed") == sorted(awkward)


_SANDBOXED: dict[str, RunReport] = {}


async def test_every_count_is_the_same_under_the_sandbox_on_a_real_suite(suite: RealSuite) -> None:
    """--sandbox (issue 37) changes nothing about a suite that needs no more than its root and /tmp.

    The suites' venvs live in this repository, their base interpreter under $HOME (pyenv) here."""
    from pytest_mcp.adapters.pytest_subprocess.sandbox import open_bubblewrap

    expected, _ = await observe(suite)
    assert expected.counts is not None
    runner = SubprocessPytestRunner(
        TargetInterpreter.given(suite.python), root=suite.root, sandbox=open_bubblewrap(False)
    )
    report = _SANDBOXED.setdefault(suite.name, await run(runner, suite.spec))

    assert report.command[0] == "bwrap"
    assert report.summary is not None, f"no summary in the sandbox:\n{report.stdout[-3000:]}{report.stderr[-3000:]}"
    counts = dict(expected.counts)
    # A suite without a pytest configuration of its own (more-itertools) has this repository's as its
    # rootdir, so pytest's cache lies outside the suite's root: the sandbox refuses that write, and
    # pytest says so in one warning. That is the sandbox doing its job, and the only difference.
    outside = f"PytestCacheWarning: cache could not write path {CACHE.parents[1]}/.pytest_cache/"
    if outside in report.stdout:
        counts["warnings"] += 1
    assert {key: getattr(report.summary, key) for key in COUNT_KEYS} == counts
    assert report.termination.exit_code == expected.exit_code
    assert not [test.blocked for test in report.tests if test.blocked]
