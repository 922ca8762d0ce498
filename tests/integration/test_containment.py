"""pytest's own walk stays inside the root: links out of it are refused where pytest would follow them.

The server refuses node ids that leave the root before pytest starts (tests/unit/test_requests.py).
These run the real runner with specs that skip that check, so what they show is the second line:
the guard plugin (`_plugin/_pytest_mcp_guard.py`), inside pytest, refusing what pytest itself
would reach through a symlink.
Each outside file writes a canary when it is imported, so "not run" is a fact we read.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_mcp.domain.runs import CollectSpec, RunSpec
from tests.integration.support import collect, fired, linked_project, run

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("node_ids", [(".",), ()], ids=["dot", "default-selection"])
async def test_a_walk_into_a_link_out_of_the_root_is_a_collection_error_and_runs_nothing_outside(
    python: Path, make_runner, tmp_path: Path, node_ids: tuple[str, ...]
) -> None:
    root = linked_project(tmp_path)

    report = await run(make_runner(python, root), RunSpec(node_ids=node_ids, timeout=60))

    assert report.termination.exit_code == 2
    errors = {error.node_id: error.message for error in report.collection_errors}
    assert set(errors) == {"escape", "tests/test_link.py"}
    assert "leads outside the project root" in errors["escape"]
    assert fired(tmp_path) == []


async def test_under_xdist_each_worker_walks_inside_the_guard_too(
    xdist_python: Path, make_runner, tmp_path: Path
) -> None:
    """pytest-xdist's workers do the collecting; they load our plugins by name from the run's directory."""
    root = linked_project(tmp_path)

    report = await run(make_runner(xdist_python, root), RunSpec(node_ids=(".",), workers=2, timeout=60))

    assert {error.node_id for error in report.collection_errors} == {"escape", "tests/test_link.py"}
    assert "leads outside the project root" in report.collection_errors[0].message
    assert fired(tmp_path) == []


async def test_a_selection_that_never_reaches_the_link_is_not_disturbed(python: Path, make_runner, tmp_path: Path):
    """pytest 8+ looks at a selected path's siblings on its way; only what the selection holds counts."""
    root = linked_project(tmp_path)

    report = await run(make_runner(python, root), RunSpec(node_ids=("tests/test_in.py",), timeout=60))

    assert report.termination.exit_code == 0
    assert report.summary is not None
    assert report.summary.passed == 1
    assert report.collection_errors == ()
    assert fired(tmp_path) == []


async def test_discovery_lists_the_link_as_a_collection_error_beside_the_tests_inside(
    python: Path, make_runner, tmp_path: Path
) -> None:
    root = linked_project(tmp_path)

    report = await collect(make_runner(python, root), CollectSpec(path=".", timeout=60))

    assert [test.node_id for test in report.tests] == ["tests/test_in.py::test_in"]
    assert {error.node_id for error in report.collection_errors} == {"escape", "tests/test_link.py"}
    assert fired(tmp_path) == []


@pytest.mark.parametrize(
    "node_id",
    ["deep/../../outside/test_out.py", "escape/test_out.py", "escape", "../outside"],
    ids=["symlink-then-dotdot", "through-a-link", "the-link", "dotdot"],
)
async def test_a_starting_path_out_of_the_root_is_refused_before_any_conftest_loads(
    python: Path, make_runner, tmp_path: Path, node_id: str
) -> None:
    """The server refuses these first; the plugin refuses them too, judging the path as pytest reads it."""
    root = linked_project(tmp_path)

    report = await run(make_runner(python, root), RunSpec(node_ids=(node_id,), timeout=60))

    assert report.termination.exit_code == 4
    assert f"pytest-mcp: {node_id} leads outside the project root" in report.stderr
    assert fired(tmp_path) == []


async def test_a_test_directory_linked_out_of_the_root_cannot_bring_its_conftest_in(
    python: Path, make_runner, tmp_path: Path
) -> None:
    """pytest imports ROOT/test*/conftest.py at start-up, before any collection hook could refuse it."""
    root = linked_project(tmp_path)
    os.symlink(tmp_path / "outside", root / "testing_shared")

    report = await run(make_runner(python, root), RunSpec(timeout=60))

    assert report.termination.exit_code == 4
    assert "testing_shared leads outside the project root" in report.stderr
    assert fired(tmp_path) == []


async def test_node_ids_under_pyargs_are_refused_and_a_plain_run_still_works(
    python: Path, make_runner, tmp_path: Path
) -> None:
    """With --pyargs in addopts, pytest imports a node id as a module from anywhere on sys.path."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "pytest.ini").write_text("[pytest]\naddopts = --pyargs\n")
    (root / "test_in.py").write_text("def test_in():\n    pass\n")
    runner = make_runner(python, root)

    refused = await run(runner, RunSpec(node_ids=("email",), timeout=60))
    plain = await run(runner, RunSpec(timeout=60))

    assert refused.termination.exit_code == 4
    assert "--pyargs" in refused.stderr
    assert plain.termination.exit_code == 0
    assert plain.summary is not None
    assert plain.summary.passed == 1
