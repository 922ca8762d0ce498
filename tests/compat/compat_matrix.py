"""Exact results on every (Python, pytest) pair of the matrix, judged by that venv's own pytest.

The fixture projects of tests/fixtures run through SubprocessPytestRunner and through plain
pytest in the same venv; counts, exit code, total, summary words and the listed reports must
agree. What differs between versions is pytest's own behaviour, asserted per version below.
"""

from __future__ import annotations

import importlib
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from pytest_mcp.domain.runs import CollectSpec, RunReport, RunSpec
from tests.compat.conftest import COMBOS, Combo, Target, compat_target, runner_for
from tests.integration.oracle import (
    COUNT_KEYS,
    PytestOutcome,
    pytest_collect,
    pytest_says,
    pytest_selects,
    run_args,
    summary_words,
)
from tests.integration.support import alongside, collect, fired, linked_project, project, run

_VERBOSITY_FLAGS = {-1: ["-q"], 0: [], 1: ["-v"]}

RUNS = {
    "outcomes": ("outcomes", RunSpec()),
    "outcomes-maxfail": ("outcomes", RunSpec(maxfail=1)),
    "ids": ("ids", RunSpec()),
    "ids-marker-slow": ("ids", RunSpec(markers="slow")),
    "unicode-ids": ("unicode_ids", RunSpec()),
    "collection-error": ("collection_error", RunSpec()),
    "empty": ("empty", RunSpec()),
    "contract": ("contract", RunSpec()),
    "project-config": ("project_config", RunSpec()),
    "subtests": ("subtests", RunSpec(verbosity=0)),
    "subtests-quiet": ("subtests", RunSpec(verbosity=-1)),
}


_OBSERVED: dict[tuple[str, str], tuple[PytestOutcome, RunReport]] = {}


async def observe(target: Target, name: str) -> tuple[PytestOutcome, RunReport]:
    key = (target.combo.name, name)
    if key not in _OBSERVED:
        project_name, spec = RUNS[name]
        root = project(project_name)
        spec = spec.model_copy(update={"include_passed": True, "timeout": 60.0})
        args = [*_VERBOSITY_FLAGS[spec.verbosity], *run_args(spec)]
        _OBSERVED[key] = await alongside(
            lambda: pytest_says(target.python, root, args), run(runner_for(target, root), spec)
        )
    return _OBSERVED[key]


CONTAINMENT = {
    "walk-into-links": ((".",), 2, ""),
    "selection-beside-links": (("tests/test_in.py",), 0, ""),
    "symlink-then-dotdot": (("deep/../../outside/test_out.py",), 4, "leads outside the project root"),
    "pyargs": (("email",), 4, "--pyargs"),
    "linked-test-directory": ((), 4, "testing_shared leads outside the project root"),
}


@pytest.mark.anyio
@pytest.mark.compat
@pytest.mark.slow
class CompatMatrix:
    """The checks, on the combo a subclass names (one module per combo, so that `--dist loadfile`
    spreads the matrix over the workers instead of giving all of it to one)."""

    COMBO: Combo

    @pytest.fixture
    def target(self) -> Target:
        return compat_target(self.COMBO)

    @pytest.fixture(params=list(RUNS), ids=list(RUNS))
    def run_name(self, request: pytest.FixtureRequest) -> str:
        return str(request.param)

    def test_the_matrix_has_one_module_per_combo(self) -> None:
        """A combo added to COMBOS without a module of its own would never run."""
        named = []
        for path in sorted(Path(__file__).parent.glob("test_*.py")):
            module = importlib.import_module(f"tests.compat.{path.stem}")
            named += [
                kind.COMBO
                for kind in vars(module).values()
                if isinstance(kind, type) and kind is not CompatMatrix and issubclass(kind, CompatMatrix)
            ]
        assert sorted(named, key=str) == sorted(COMBOS, key=str)

    def test_each_target_has_the_python_and_pytest_of_its_combo(self, target: Target) -> None:
        probe = subprocess.run(
            [str(target.python), "-c", "import platform, pytest; print(platform.python_version(), pytest.__version__)"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert probe.stdout.split() == [target.combo.python_version, target.combo.pytest_version]

    async def test_counts_exit_code_and_total_equal_that_pytests_own(self, target: Target, run_name: str) -> None:
        expected, report = await observe(target, run_name)
        assert expected.counts is not None, expected.stdout[-3000:]
        assert report.summary is not None, report.stdout[-3000:] + report.stderr[-3000:]

        assert {key: getattr(report.summary, key) for key in COUNT_KEYS} == expected.counts
        assert report.termination.exit_code == expected.exit_code
        selected = expected.selected
        if selected is None:  # quiet runs print no `collected` header
            project_name, spec = RUNS[run_name]
            selected = pytest_selects(target.python, project(project_name), run_args(spec))
        assert report.summary.total == selected

    async def test_the_summary_line_we_print_is_that_pytests_own(self, target: Target, run_name: str) -> None:
        expected, report = await observe(target, run_name)
        assert report.summary is not None

        assert report.summary.line().rsplit(" in ", 1)[0].split(", ") == summary_words(expected.stdout)

    async def test_listed_reports_tally_to_the_counts(self, target: Target, run_name: str) -> None:
        expected, report = await observe(target, run_name)
        assert expected.counts is not None

        tally = Counter(test.outcome for test in report.tests)
        outcomes = ("passed", "failed", "skipped", "xfailed", "xpassed")
        assert {key: tally[key] for key in outcomes} == {key: expected.counts[key] for key in outcomes}
        assert tally["error"] + len(report.collection_errors) == expected.counts["errors"]

    async def test_subtests_are_counted_as_each_pytest_version_counts_them(self, target: Target) -> None:
        _, report = await observe(target, "subtests-quiet")
        assert report.summary is not None

        if target.combo.pytest_major >= 9:
            # Built in: 14 passing subtests counted, failing ones listed under their test's node id.
            assert report.summary.subtests_passed == 14
            assert any((test.message or "").startswith("subtest [parity] (i=1)") for test in report.tests)
        else:
            # No `subtests` fixture (4 setup errors), and a failing subTest fails its whole test.
            assert report.summary.subtests_passed == 0
            assert report.summary.errors == 4
            assert not any((test.message or "").startswith("subtest ") for test in report.tests)

    @pytest.mark.parametrize("project_name", ["ids", "unicode_ids", "project_config"])
    async def test_discovered_node_ids_and_lines_are_that_pytests_own(self, target: Target, project_name: str) -> None:
        root: Path = project(project_name)
        spec = CollectSpec(timeout=60.0)
        expected, found = await alongside(
            lambda: pytest_collect(target.python, root, spec), collect(runner_for(target, root), spec)
        )

        assert [test.node_id for test in found.tests] == list(expected.node_ids)
        assert {test.node_id: (test.file, test.line) for test in found.tests} == expected.locations
        assert found.deselected == expected.deselected

    @pytest.mark.parametrize("case", list(CONTAINMENT))
    async def test_containment_holds_on_every_pytest(self, target: Target, tmp_path: Path, case: str) -> None:
        """The plugin's containment hooks, on pytest 7.4 to 9.2 (tests/integration/test_containment.py says why)."""
        node_ids, exit_code, words = CONTAINMENT[case]
        root = linked_project(tmp_path)
        if case == "pyargs":
            (root / "pytest.ini").write_text("[pytest]\naddopts = --pyargs\n")
        if case == "linked-test-directory":
            os.symlink(tmp_path / "outside", root / "testing_shared")

        report = await run(runner_for(target, root), RunSpec(node_ids=node_ids, timeout=60))

        assert report.termination.exit_code == exit_code, report.stdout + report.stderr
        assert words in report.stderr
        if case == "walk-into-links":
            assert {error.node_id for error in report.collection_errors} == {"escape", "tests/test_link.py"}
        assert fired(tmp_path) == []
