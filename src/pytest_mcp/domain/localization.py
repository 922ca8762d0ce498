"""Which code most likely broke: a function-level spectrum ranked per symptom (ADR 0020). Pure.

A second pass records, for each test it repeats, the project functions the test entered. A
function that every failing test of a symptom ran, and few passing tests did, is a likely cause
(Ochiai's coefficient). A function changed since the project's last run (or since git's HEAD)
that the failing tests ran comes first: a regression is almost always in what changed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from pydantic import Field

from pytest_mcp.domain.models import Culprit, _Value

TraceOutcome = Literal["passed", "failed", "skipped"]
MAX_CULPRITS = 3
STRONG = 0.5
"""The least Ochiai score a top culprit needs for its symptom to be grouped by it."""
_TIED = 1e-9
_TEST_DIRECTORIES = frozenset({"tests", "test"})


class CodeFunction(_Value):
    """A project function a repeated test entered."""

    file: str = Field(description="Relative to the root, with '/'.")
    name: str = Field(description="Its qualified name, e.g. `Price.gross`.")
    first: int
    last: int
    digest: str | None = Field(None, description="A digest of its code now (its syntax tree, not its layout).")
    head: str | None = Field(
        None, description="The same digest at git's HEAD; None when there is no git, or it is new since."
    )
    at_head: bool = Field(False, description="Whether git's HEAD was read for it (head None then means new).")
    modified: float | None = Field(None, description="Its file's modification time, in seconds since the epoch.")

    @property
    def key(self) -> str:
        return f"{self.file}::{self.name}"

    @property
    def lines(self) -> str:
        return f"{self.first}-{self.last}" if self.last > self.first else str(self.first)


class Trace(_Value):
    """One repeated test: how it ended this time, and the functions it entered (indexes into `functions`)."""

    node_id: str
    outcome: TraceOutcome
    functions: tuple[int, ...] = ()


class Spectrum(_Value):
    """What a second pass recorded."""

    functions: tuple[CodeFunction, ...] = ()
    tests: tuple[Trace, ...] = ()
    test_modules: tuple[str, ...] = Field((), description="Files that hold tests: test code, never blamed.")
    recorder: str = ""
    stopped: str | None = Field(None, description="Why the pass stopped before every test ran, if it did.")
    seconds: float = 0.0


def is_test_code(path: str, test_modules: Iterable[str]) -> bool:
    """Test code, which is never blamed: a test module, a conftest, or a file in a tests directory."""
    pure = PurePosixPath(path)
    if pure.name == "conftest.py" or pure.name.startswith("test_") or pure.stem.endswith("_test"):
        return True
    return path in set(test_modules) or any(part in _TEST_DIRECTORIES for part in pure.parts[:-1])


@dataclass(frozen=True)
class Ranked:
    """A candidate function for one symptom, with its spectrum counts."""

    function: int
    changed: bool
    score: float
    failing: int
    failing_total: int
    passing: int
    passing_total: int
    elsewhere: int  # failing tests of other symptoms that ran it


@dataclass(frozen=True)
class Verdict:
    """What the spectrum says of one symptom group: its culprits, best first, and whether they can be trusted."""

    ranked: tuple[Ranked, ...]
    strong: bool
    repeated: int  # its failing tests that failed again and were recorded
    flaky: tuple[str, ...]  # its failing tests that passed when repeated


def changed_since(function: CodeFunction, last_digests: Mapping[str, str], last_run: float = 0.0) -> bool:
    """Changed since the project's last run: against the digest it recorded; without one, against git's
    HEAD, where its file was touched since the last run (or there was none); without git, its file
    touched since the last run (the whole file's functions, then: the spectrum ranks them)."""
    if function.digest is None:
        return False
    if function.key in last_digests:
        return last_digests[function.key] != function.digest
    touched = function.modified is not None and last_run > 0 and function.modified > last_run
    if function.at_head:
        return function.head != function.digest and (touched or not last_run)
    return touched


class Localization:
    """The spectrum read against the first run's symptom groups."""

    def __init__(self, spectrum: Spectrum, last_digests: Mapping[str, str], last_run: float = 0.0) -> None:
        self.spectrum = spectrum
        self._traces = {trace.node_id: trace for trace in spectrum.tests}
        blamable = [not is_test_code(function.file, spectrum.test_modules) for function in spectrum.functions]
        self._blamable = blamable
        self.changed = tuple(changed_since(function, last_digests, last_run) for function in spectrum.functions)

    def verdicts(self, groups: Mapping[str, Sequence[str]]) -> dict[str, Verdict]:
        """Each group's ranked culprits: its failing tests that failed again, against every test that passed.

        A test that failed in the run and passes when repeated is flaky: it is left out of both sides.
        """
        failing_ids = {node_id for members in groups.values() for node_id in members}
        passing = [
            trace for trace in self.spectrum.tests if trace.outcome == "passed" and trace.node_id not in failing_ids
        ]
        again: dict[str, list[Trace]] = {}
        flaky: dict[str, list[str]] = {}
        for group_id, members in groups.items():
            traces = [self._traces[node_id] for node_id in dict.fromkeys(members) if node_id in self._traces]
            again[group_id] = [trace for trace in traces if trace.outcome == "failed"]
            flaky[group_id] = [trace.node_id for trace in traces if trace.outcome == "passed"]
        ran_by: dict[int, int] = {}
        for traces in again.values():
            for trace in traces:
                for function in set(trace.functions):
                    ran_by[function] = ran_by.get(function, 0) + 1
        passed_by: dict[int, int] = {}
        for trace in passing:
            for function in set(trace.functions):
                passed_by[function] = passed_by.get(function, 0) + 1
        verdicts = {}
        for group_id, traces in again.items():
            ranked = self._ranked(traces, passed_by, len(passing), ran_by)
            verdicts[group_id] = Verdict(ranked, _strong(ranked), len(traces), tuple(flaky[group_id]))
        return verdicts

    def _ranked(
        self, failing: list[Trace], passed_by: Mapping[int, int], passing_total: int, ran_by: Mapping[int, int]
    ) -> tuple[Ranked, ...]:
        if not failing:
            return ()
        counts: dict[int, int] = {}
        for trace in failing:
            for function in set(trace.functions):
                if self._blamable[function]:
                    counts[function] = counts.get(function, 0) + 1
        candidates = []
        for function, ef in counts.items():
            ep = passed_by.get(function, 0)
            score = ef / math.sqrt(len(failing) * (ef + ep))
            candidates.append(
                Ranked(
                    function,
                    self.changed[function],
                    score,
                    ef,
                    len(failing),
                    ep,
                    passing_total,
                    ran_by.get(function, 0) - ef,
                )
            )
        # Changed code first; then the score; on a tie, the function more of the run's failures share
        # (one bug, many symptoms), then the one fewer passing tests run, then the smaller.
        candidates.sort(
            key=lambda r: (
                not r.changed,
                -round(r.score, 6),
                -r.elsewhere,
                r.passing,
                self.spectrum.functions[r.function].last - self.spectrum.functions[r.function].first,
                self.spectrum.functions[r.function].key,
            )
        )
        return tuple(candidates)

    def culprit(self, ranked: Ranked) -> Culprit:
        function = self.spectrum.functions[ranked.function]
        return Culprit(
            file=function.file,
            function=function.name,
            lines=function.lines,
            score=round(ranked.score, 2),
            failing=ranked.failing,
            failing_total=ranked.failing_total,
            passing=ranked.passing,
            passing_total=ranked.passing_total,
            changed=ranked.changed,
        )

    def digests(self) -> dict[str, str]:
        """The functions' digests now, for the next run to tell what changed."""
        return {function.key: function.digest for function in self.spectrum.functions if function.digest}


def _strong(ranked: tuple[Ranked, ...]) -> bool:
    """Whether the top culprit stands out: changed code the failures ran, or a score above STRONG that
    is not shared by more than MAX_CULPRITS functions on the same footing (a flat spectrum says nothing)."""
    if not ranked:
        return False
    top = ranked[0]
    if top.changed:
        return True
    if top.score < STRONG:
        return False
    tied = [r for r in ranked if abs(r.score - top.score) < _TIED and r.elsewhere == top.elsewhere]
    return len(tied) <= MAX_CULPRITS
