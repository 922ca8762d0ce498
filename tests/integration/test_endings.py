"""Every way pytest can end is reported as it happened: exit codes 2-5, a fatal signal."""

from __future__ import annotations

import pytest

from pytest_mcp.domain.runs import RunSpec
from tests.integration.oracle import pytest_run
from tests.integration.support import project, run, run_once

pytestmark = pytest.mark.anyio


async def test_collection_error_exits_2_with_the_error_listed(python, make_runner):
    root = project("collection_error")
    report = await run(make_runner(python, root), RunSpec(timeout=60))

    assert report.termination.kind == "exited"
    assert report.termination.exit_code == 2
    assert [error.node_id for error in report.collection_errors] == ["test_broken_import.py"]
    message = report.collection_errors[0].message
    assert "ModuleNotFoundError" in message
    assert "module_that_does_not_exist_pytest_mcp" in message
    assert "module_that_does_not_exist_pytest_mcp" in (report.collection_errors[0].traceback or "")


async def test_internal_error_exits_3_and_keeps_the_internalerror_lines(python, make_runner):
    root = project("internal_error")
    plain = pytest_run(python, root, RunSpec())
    assert plain.exit_code == 3, "the fixture makes pytest itself exit 3"

    report = await run(make_runner(python, root), RunSpec(timeout=60))

    assert report.termination.kind == "exited"
    assert report.termination.exit_code == 3
    output = report.stdout + report.stderr
    assert "INTERNALERROR>" in output
    assert "RuntimeError: boom-internal" in output


async def test_node_id_in_a_missing_file_exits_4_with_pytests_usage_message(python, make_runner):
    root = project("outcomes")
    spec = RunSpec(node_ids=("no_such_file.py::test_nothing",), timeout=60)
    plain = pytest_run(python, root, spec)
    assert plain.exit_code == 4

    report = await run(make_runner(python, root), spec)

    assert report.termination.kind == "exited"
    assert report.termination.exit_code == 4
    assert "file or directory not found: no_such_file.py" in report.stderr
    assert report.tests == ()


@pytest.mark.parametrize(
    ("project_name", "spec"),
    [("empty", RunSpec(timeout=60)), ("ids", RunSpec(keywords="nothing_matches_this_keyword", timeout=60))],
    ids=["empty-project", "keyword-matching-nothing"],
)
async def test_nothing_to_run_exits_5_with_a_finished_session(python, make_runner, project_name, spec):
    root = project(project_name)
    report = await run(make_runner(python, root), spec)

    assert report.termination.kind == "exited"
    assert report.termination.exit_code == 5
    assert report.summary is not None
    assert report.summary.total == 0
    assert report.tests == ()


async def test_segfault_is_reported_as_signalled_sigsegv_without_a_summary(python, make_runner):
    root = project("crash")
    report = await run_once(make_runner(python, root), python, root, RunSpec(include_passed=True, timeout=60))

    assert report.termination.kind == "signalled"
    assert report.termination.signal == "SIGSEGV"
    assert report.summary is None, "pytest never finished its session"
    assert "Segmentation fault" in report.stderr
    assert "test_crash.py" in report.stderr, "faulthandler's traceback names the crashing test file"


async def test_reports_of_tests_that_finished_before_a_crash_are_kept(python, make_runner):
    root = project("crash")
    report = await run_once(make_runner(python, root), python, root, RunSpec(include_passed=True, timeout=60))

    assert report.termination.kind == "signalled"
    assert [(test.node_id, test.outcome) for test in report.tests] == [("test_crash.py::test_before_crash", "passed")]
