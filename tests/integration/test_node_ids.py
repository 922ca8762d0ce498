"""Node ids survive the round trip: awkward ids select exactly their test, and returned ids can be reused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_mcp.domain.runs import CollectSpec, RunSpec
from tests.integration.oracle import pytest_collect
from tests.integration.support import project, run, run_once

pytestmark = pytest.mark.anyio

IDS = "test_ids.py"
UNICODE = "test_unicode.py"

# As pytest prints them: non-ASCII is escaped unless the project opts out (unicode_ids does).
AWKWARD_IDS = [
    ("ids", rf"{IDS}::test_param_ids[\u2603]"),
    ("ids", rf"{IDS}::test_param_ids[\xe9]"),
    ("ids", f"{IDS}::test_param_ids[two words]"),
    ("ids", f"{IDS}::test_param_ids[a[b]c]"),
    ("ids", f"{IDS}::test_param_ids[x::y]"),
    ("ids", f"{IDS}::test_param_ids[p/q]"),
    ("ids", rf"{IDS}::test_pytest_param_ids[one \u2603 snow]"),
    ("ids", f"{IDS}::test_pytest_param_ids[dir/sub::name]"),
    ("ids", f"{IDS}::test_pytest_param_ids[[nested]]"),
    ("ids", f"{IDS}::TestOuter::TestInner::test_x"),
    ("unicode_ids", f"{UNICODE}::test_raw_unicode_ids[☃]"),
    ("unicode_ids", f"{UNICODE}::test_raw_unicode_ids[é]"),
    ("unicode_ids", f"{UNICODE}::test_raw_unicode_ids[naïve café [x::y]]"),
    ("unicode_ids", f"{UNICODE}::test_more_unicode[日本語 / テスト]"),
]


def test_awkward_ids_are_real_node_ids_according_to_pytest(json_report_python):
    """Guards the table above: every id must be one pytest itself collects."""
    for name in ("ids", "unicode_ids"):
        collected = set(pytest_collect(json_report_python, project(name), CollectSpec()).node_ids)
        wanted = {node_id for project_name, node_id in AWKWARD_IDS if project_name == name}
        assert wanted <= collected, wanted - collected


def _readable(node_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "-", node_id.split("::", 1)[1]).strip("-")


@pytest.mark.parametrize(("project_name", "node_id"), AWKWARD_IDS, ids=[_readable(n) for _, n in AWKWARD_IDS])
async def test_an_exact_node_id_runs_exactly_that_test(bare_python, make_runner, project_name, node_id):
    # One at a time with the fast interpreter; the next test sends them all through both interpreters.
    python: Path = bare_python
    root = project(project_name)
    report = await run(make_runner(python, root), RunSpec(node_ids=(node_id,), include_passed=True, timeout=60))

    assert report.termination.exit_code == 0, report.stdout[-2000:]
    assert report.summary is not None
    assert report.summary.total == 1
    assert report.summary.passed == 1
    assert [test.node_id for test in report.tests] == [node_id]


@pytest.mark.parametrize("project_name", ["ids", "unicode_ids"])
async def test_several_awkward_node_ids_together_run_exactly_those_tests(python, make_runner, project_name):
    root = project(project_name)
    wanted = tuple(node_id for name, node_id in AWKWARD_IDS if name == project_name)
    report = await run(make_runner(python, root), RunSpec(node_ids=wanted, include_passed=True, timeout=60))

    assert report.termination.exit_code == 0, report.stdout[-2000:]
    assert report.summary is not None
    assert report.summary.total == len(wanted)
    assert sorted(test.node_id for test in report.tests) == sorted(wanted)


@pytest.mark.parametrize("project_name", ["ids", "unicode_ids"])
async def test_every_returned_node_id_selects_exactly_that_one_test_when_passed_back(
    bare_python, make_runner, project_name
):
    python: Path = bare_python  # the fastest interpreter; the ids above cover both
    root = project(project_name)
    runner = make_runner(python, root)
    everything = await run_once(runner, python, root, RunSpec(include_passed=True, timeout=60))
    returned = sorted({test.node_id for test in everything.tests})
    assert everything.summary is not None
    assert len(returned) == everything.summary.total

    for node_id in returned:
        again = await run(runner, RunSpec(node_ids=(node_id,), include_passed=True, timeout=60))
        assert again.summary is not None, f"{node_id!r}: {again.stdout[-1500:]}"
        assert again.summary.total == 1, f"{node_id!r} selected {again.summary.total} tests"
        assert {test.node_id for test in again.tests} == {node_id}
