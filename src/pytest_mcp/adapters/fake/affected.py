"""What the fake's affected runs select: pytest-testmon's rules, over tests an `edit` names.

The fake keeps what testmon keeps: which tests an affected run recorded, and which of them
failed. A test is affected when there is no data yet (the first run), when an `edit` since its
last affected run names it, when it is new (never recorded), or when it failed last time. An edit
of a file testmon cannot see (`files`: data, not Python) makes every test affected, as the real
side does: it discards the data, and says which files changed.
As testmon does, a file whose tests are all unaffected is not collected at all (its tests
count as not run); elsewhere the unaffected tests left by -m/-k are deselected, in pytest's count.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pytest_mcp.adapters.fake.script import ScriptedTest, ScriptError
from pytest_mcp.domain.models import AffectedRun, ReportedTest

_LISTED = 10  # changed files an answer names, as the real side's


def _names(pattern: str, node_id: str) -> bool:
    """Whether an edit's pattern (a directory, file, class or test, as a node id) covers the test."""
    return node_id == pattern or node_id.startswith((pattern + "::", pattern + "[", pattern.rstrip("/") + "/"))


@dataclass
class AffectedData:
    """testmon's data, for the fake: None until the first affected run records it."""

    recorded: set[str] | None = None
    failing: set[str] = field(default_factory=set)
    stale: set[str] = field(default_factory=set)  # recorded, then named by an edit
    unseen: set[str] = field(default_factory=set)  # files testmon cannot see, changed since the last run

    def edit(self, patterns: Sequence[object], tests: Iterable[ScriptedTest], files: Iterable[object] = ()) -> None:
        files = list(files) if not isinstance(files, str) else [files]
        for index, name in enumerate(files):
            if not isinstance(name, str) or not name.strip() or name.startswith(("/", "-")) or name.endswith(".py"):
                raise ScriptError(
                    f"files[{index}]: must be the path of a file that is not Python, relative to the root, like "
                    f"'tests/data/limits.json' (a Python file's edit names the tests it affects); got {name!r}"
                )
        tests = list(tests)
        touched: set[str] = set()
        for index, pattern in enumerate(patterns):
            if not isinstance(pattern, str) or not pattern.strip() or pattern.startswith(("/", "-")):
                raise ScriptError(
                    f"affects[{index}]: must be a test's node id, a file or a directory relative to the root, "
                    f"like 'tests/test_cart.py::test_total' or 'tests/test_cart.py'; got {pattern!r}"
                )
            named = {test.node_id for test in tests if _names(pattern, test.node_id)}
            if not named:
                raise ScriptError(f"affects[{index}]: {pattern!r} names no scripted test")
            touched |= named
        self.stale |= touched
        self.unseen |= {str(name) for name in files}

    def affected(self, test: ScriptedTest) -> bool:
        node_id = test.node_id
        if self.recorded is None or self.unseen or node_id not in self.recorded:
            return True
        return node_id in self.failing or node_id in self.stale

    @property
    def leaves_out_any(self) -> bool:
        """Whether some recorded test is unaffected: testmon then turns 'no tests ran' (5) into 0."""
        return bool(self.recorded and self.recorded - self.failing - self.stale)

    def collected(self, tests: Iterable[ScriptedTest]) -> tuple[list[ScriptedTest], int]:
        """The tests pytest still collects, and how many it never sees: those of fully unaffected files."""
        tests = list(tests)
        files_with_affected = {test.file for test in tests if self.affected(test)}
        kept = [test for test in tests if test.file in files_with_affected]
        return kept, len(tests) - len(kept)

    def selected(self, tests: Sequence[ScriptedTest]) -> list[ScriptedTest]:
        return [test for test in tests if self.affected(test)]

    def ran(self, reports: Sequence[ReportedTest], selected: int, not_run: int) -> AffectedRun:
        """A finished affected run's figures; then its data records what ran, and what failed, as testmon does."""
        changed = sorted(self.unseen) if self.recorded is not None else []
        figures = AffectedRun(
            run=selected,
            not_run=not_run,
            ran_everything="no_data" if self.recorded is None else ("files_changed" if changed else None),
            changed_files=tuple(changed[:_LISTED]),
            changed_file_count=len(changed),
        )
        if self.unseen:  # the data is discarded: what this run does not reach is new next time
            self.recorded, self.failing, self.stale, self.unseen = set(), set(), set(), set()
        ran = {report.node_id for report in reports}
        self.recorded = (self.recorded or set()) | ran
        failed = {report.node_id for report in reports if report.is_failure}
        self.failing = (self.failing - ran) | failed
        self.stale -= ran
        return figures
