"""collect() lists what `pytest --collect-only` lists, with where each test is and how it is marked."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mcp.domain.runs import CollectionReport, CollectSpec
from tests.integration.oracle import CollectedByPytest, pytest_collect
from tests.integration.support import alongside, collect, project

pytestmark = pytest.mark.anyio

# (fixture project, selection) pairs compared against `pytest --collect-only -q`.
COLLECTIONS = {
    "ids-everything": ("ids", CollectSpec()),
    "ids-marker-slow": ("ids", CollectSpec(markers="slow")),
    "ids-marker-and-keyword": ("ids", CollectSpec(markers="db", keywords="not flavours")),
    "ids-class-path": ("ids", CollectSpec(path="test_ids.py::TestOuter")),
    "ids-keyword-matches-nothing": ("ids", CollectSpec(keywords="nothing_matches_this_keyword")),
    "unicode-ids-everything": ("unicode_ids", CollectSpec()),
    "outcomes-file-path": ("outcomes", CollectSpec(path="test_outcomes.py")),
    "collection-error-everything": ("collection_error", CollectSpec()),
    "empty-project": ("empty", CollectSpec()),
}


@pytest.fixture(params=list(COLLECTIONS), ids=list(COLLECTIONS))
def collection(request: pytest.FixtureRequest) -> str:
    return request.param


# One plain-pytest collection and one runner collection per (interpreter, selection).
_OBSERVED: dict[tuple[Path, str], tuple[CollectedByPytest, CollectionReport]] = {}


async def observe(python: Path, make_runner, name: str) -> tuple[Path, CollectedByPytest, CollectionReport]:
    project_name, spec = COLLECTIONS[name]
    root = project(project_name)
    spec = spec.model_copy(update={"timeout": 60.0})
    key = (python, name)
    if key not in _OBSERVED:
        _OBSERVED[key] = await alongside(
            lambda: pytest_collect(python, root, spec), collect(make_runner(python, root), spec)
        )
    return root, *_OBSERVED[key]


async def test_collect_lists_exactly_the_tests_pytest_collect_only_lists(python, make_runner, collection):
    _, expected, report = await observe(python, make_runner, collection)
    assert expected.selected is not None, f"oracle found no count line in:\n{expected.output[-2000:]}"

    assert [test.node_id for test in report.tests] == list(expected.node_ids)
    assert len(report.tests) == expected.selected
    assert report.deselected == expected.deselected
    assert report.termination.kind == "exited"
    assert report.termination.exit_code == expected.exit_code
    assert report.finished


async def test_collected_tests_carry_the_file_and_1_based_line_pytest_knows(python, make_runner, collection):
    root, expected, report = await observe(python, make_runner, collection)

    got = {test.node_id: (test.file, test.line) for test in report.tests}
    assert got == expected.locations
    for test in report.tests:
        source_line = (root / test.file).read_text(encoding="utf-8").splitlines()[test.line - 1]
        assert source_line.lstrip().startswith(("def ", "async def ", "class ", "@")), (test, source_line)


@pytest.mark.parametrize("marker", ["slow", "db"])
async def test_collected_markers_agree_with_what_pytest_selects_by_that_marker(python, make_runner, marker):
    root = project("ids")
    selected_by_pytest = set(pytest_collect(python, root, CollectSpec(markers=marker)).node_ids)
    assert selected_by_pytest, "the fixture has tests with this marker"

    _, _, report = await observe(python, make_runner, "ids-everything")

    carrying_marker = {test.node_id for test in report.tests if marker in test.markers}
    assert carrying_marker == selected_by_pytest


async def test_collection_errors_are_reported_with_the_exception_line(python, make_runner):
    _, _, report = await observe(python, make_runner, "collection-error-everything")

    assert report.termination.exit_code == 2
    assert [error.node_id for error in report.collection_errors] == ["test_broken_import.py"]
    error = report.collection_errors[0]
    assert "ModuleNotFoundError" in error.message
    assert "module_that_does_not_exist_pytest_mcp" in error.message
    assert "\n" not in error.message.strip(), "the message is the exception line, not the traceback"
    assert {test.node_id for test in report.tests} == {"test_fine.py::test_fine", "test_fine.py::test_also_fine"}


async def test_max_listed_describes_the_first_tests_and_counts_the_rest(python, make_runner):
    root = project("ids")
    runner = make_runner(python, root)
    everything = await collect(runner, CollectSpec(timeout=60))
    assert len(everything.tests) > 3

    for limit in (0, 3):
        report = await collect(runner, CollectSpec(timeout=60, max_listed=limit))

        assert report.tests == everything.tests[:limit]
        assert report.unlisted == len(everything.tests) - limit
        assert report.termination == everything.termination


async def test_collecting_a_missing_path_is_a_usage_error(python, make_runner):
    root = project("ids")
    expected = pytest_collect(python, root, CollectSpec(path="no_such_file.py"))
    assert expected.exit_code == 4

    report = await collect(make_runner(python, root), CollectSpec(path="no_such_file.py", timeout=60))

    assert report.termination.exit_code == 4
    assert report.tests == ()
    assert "no_such_file.py" in report.stderr
