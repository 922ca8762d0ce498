"""pytest's `cache/lastfailed`, kept by the fake from its own runs: what `--lf` and `--ff` act on.

A port of `_pytest.cacheprovider.LFPlugin` (pytest 8-9): which reports add or remove an entry,
which files `--lf` skips or filters while collecting, and the `run-last-failure:` line.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pytest_mcp.adapters.fake.script import ScriptedTest
from pytest_mcp.domain.models import ReportedTest


def _parents(path: str) -> list[str]:
    parents = []
    while path not in ("", "."):
        path = posixpath.dirname(path) or "."
        parents.append(path)
    return parents


def _child_ids(module: str, tests: Iterable[ScriptedTest]) -> list[str]:
    """The ids of a module's direct children, as its collect report lists them: functions and classes."""
    ids = []
    for test in tests:
        if test.file == module:
            names = test.id.names
            ids.append(test.node_id if len(names) == 1 else f"{module}::{names[0]}")
    return list(dict.fromkeys(ids))


@dataclass
class LastFailed:
    """The node ids that failed last time they ran (or modules that failed to import), in pytest's order."""

    ids: dict[str, bool] = field(default_factory=dict)

    def collected(self, module: str, broken: bool, tests: Sequence[ScriptedTest]) -> None:
        """LFPlugin.pytest_collectreport: a module that failed to import is a failure; one that imports
        again is replaced by its children, each counted as failed until it passes."""
        if broken:
            self.ids[module] = True
        elif module in self.ids:
            del self.ids[module]
            self.ids.update(dict.fromkeys(_child_ids(module, tests), True))

    def reported(self, report: ReportedTest) -> None:
        """LFPlugin.pytest_runtest_logreport: a passed call or any skip clears a test; a failure records it."""
        # xfailed is a skip to pytest, a non-strict xpassed a passed call; a strict one is scripted as failed.
        if (report.phase == "call" and report.outcome in ("passed", "xpassed")) or report.outcome in (
            "skipped",
            "xfailed",
        ):
            self.ids.pop(report.node_id, None)
        elif report.outcome in ("failed", "error"):
            self.ids[report.node_id] = True

    def collect(
        self, tests: Sequence[ScriptedTest], modules: Sequence[str], initial_paths: set[str], known_files: Iterable[str]
    ) -> tuple[list[ScriptedTest], list[str]]:
        """What `--lf` collects of `tests` (already collected without it), and the modules it skipped
        (never imported: a broken one among them reports no error).

        LFPluginCollWrapper: directories and files holding a last failure are collected first;
        within a file that holds one among its direct children, only the failures (and every class,
        and any file named on the command line) are kept; once such a file has been seen, files
        without a failure are skipped outright.
        """
        failed_files = {node_id.split("::", 1)[0] for node_id in self.ids}
        paths = {path for file in failed_files for path in (file, *_parents(file))}
        paths &= {path for file in known_files for path in (file, *_parents(file))}  # those that exist
        by_module: dict[str, list[ScriptedTest]] = {module: [] for module in modules}
        for test in tests:
            by_module.setdefault(test.file, []).append(test)
        kept: list[ScriptedTest] = []
        seen_a_failure = False
        skipped: list[str] = []
        for module in _failures_first(list(by_module), paths):
            found = by_module[module]
            if module not in paths:
                if seen_a_failure:
                    skipped.append(module)
                else:
                    kept += found
                continue
            if not seen_a_failure:
                children = _child_ids(module, found)
                if not any(child in self.ids for child in children):
                    kept += found
                    continue
                seen_a_failure = True
            kept += [
                test
                for test in found
                if test.node_id in self.ids or module in initial_paths or len(test.id.names) > 1  # classes stay whole
            ]
        return kept, skipped

    def order(
        self, selected: Sequence[ScriptedTest], *, last_failed: bool, failed_first: bool, skipped_files: int
    ) -> tuple[list[ScriptedTest], list[ScriptedTest], str]:
        """LFPlugin.pytest_collection_modifyitems: (kept, deselected, the `run-last-failure:` status)."""
        if not self.ids:
            return list(selected), [], "no previously failed tests, not deselecting items."
        failed = [test for test in selected if test.node_id in self.ids]
        passed = [test for test in selected if test.node_id not in self.ids]
        if not failed:
            status = f"{len(self.ids)} known failures not in selected tests"
            kept, deselected = list(selected), list[ScriptedTest]()
        else:
            kept, deselected = (failed, passed) if last_failed else (failed + passed, [])
            noun = "failure" if len(failed) == 1 else "failures"
            status = f"rerun previous {len(failed)} {noun}{' first' if failed_first else ''}"
        if skipped_files:
            status += f" (skipped {skipped_files} file{'' if skipped_files == 1 else 's'})"
        return kept, deselected, status


def _failures_first(modules: list[str], paths: set[str]) -> list[str]:
    """Session and directories sort what holds a last failure first (a stable sort, level by level)."""

    def key(module: str) -> tuple[bool, ...]:
        parts = module.split("/")
        return tuple("/".join(parts[: depth + 1]) not in paths for depth in range(len(parts)))

    # Sorting by the whole tuple would also reorder siblings under a failing directory by their own
    # flags, which is what sorting each directory's entries does.
    return sorted(modules, key=key)
