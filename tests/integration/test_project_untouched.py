"""Running or collecting leaves the project exactly as it was, apart from what pytest itself writes."""

from __future__ import annotations

import pytest

from pytest_mcp.domain.runs import CollectSpec, RunSpec
from tests.integration.support import FIXTURES, PYTEST_OWN_DIRS, collect, project, run, snapshot

pytestmark = pytest.mark.anyio

PROJECTS = ["outcomes", "ids", "unicode_ids", "collection_error", "internal_error", "empty", "crash", "contract"]


@pytest.mark.parametrize("project_name", PROJECTS)
async def test_run_and_collect_leave_nothing_in_the_project_but_pytest_caches(
    bare_python, json_report_python, make_runner, project_name
):
    root = project(project_name)
    before = snapshot(root)
    assert before, "the snapshot sees the fixture's files"

    # With and without pytest-json-report (linked venvs: the dev venv's other plugins are no part of it).
    for python in (json_report_python, bare_python):
        runner = make_runner(python, root)
        await run(runner, RunSpec(include_passed=True, timeout=60))
        await collect(runner, CollectSpec(timeout=60))

    assert snapshot(root) == before


def test_snapshot_notices_a_new_file(tmp_path):
    """Guards the helper: a stray report file must show up in the comparison."""
    (tmp_path / "test_a.py").write_text("def test_a(): pass\n")
    before = snapshot(tmp_path)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"")
    assert snapshot(tmp_path) == before, "pytest's own caches are ignored"
    (tmp_path / ".report.json").write_text("{}")
    assert snapshot(tmp_path) != before


def test_fixture_projects_are_all_covered_somewhere():
    """Every fixture project directory is exercised by at least one integration module."""
    names = {path.name for path in FIXTURES.iterdir() if path.is_dir() and path.name not in PYTEST_OWN_DIRS}
    sources = "\n".join(path.read_text(encoding="utf-8") for path in FIXTURES.parent.glob("integration/test_*.py"))
    missing = {name for name in names if f'"{name}"' not in sources}
    assert not missing, f"fixture projects no test uses: {missing}"
