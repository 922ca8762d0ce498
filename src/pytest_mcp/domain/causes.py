"""Failures by cause: a second pass names the likely faulty functions, and the history says what is new (ADR 0020).

The execute_tests use case asks this once a run with failures has ended. It never raises for a
pass that could not run: the answer then says why in one line, and the signature groups stand.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_mcp.domain.groups import cause_key, crash_of, failure_groups, frames_of, signature_of, symptom_groups
from pytest_mcp.domain.history import History, passed_key, since, updated
from pytest_mcp.domain.localization import (
    MAX_CULPRITS,
    CodeState,
    Localization,
    Spectrum,
    Verdict,
    changed_untested,
)
from pytest_mcp.domain.models import Culprit, FailureGroup, LocalizationNote, ReportedTest, Since
from pytest_mcp.domain.requests import RequestPolicy
from pytest_mcp.domain.runs import LocalizeSpec, RunSpec
from pytest_mcp.ports.history import RunHistory
from pytest_mcp.ports.test_runner import TestRunner
from pytest_mcp.ports.worker import Inline, Worker


@dataclass(frozen=True)
class Causes:
    """What a run's failures come from: its groups (by cause where the evidence is strong), the culprits
    (best first), how they were found, and the same groups with every member listed (for paging)."""

    groups: tuple[FailureGroup, ...]
    culprits: tuple[Culprit, ...]
    note: LocalizationNote | None
    full_groups: tuple[FailureGroup, ...]
    untested: tuple[str, ...] = ()


LOCALIZE_FLOOR_TESTS = 50
"""Other tests a second pass may always run: half of a five-test run is too few passing tests to tell
a culprit from what every test runs (ADR 0020)."""
LOCALIZE_SAFETY = 4.0
"""A second pass is stopped at this many times its expected share of the run's wall time (--localize
times it): a safety against a pass far slower than its run, never what decides what it records."""
LOCALIZE_SAFETY_FLOOR = 10.0
"""Seconds a second pass may always take before its safety stops it (under --localize-max-seconds):
starting Python and pytest and collecting a few modules, on a busy machine."""


class NameCauses:
    """Runs the second pass after a run with failures, and reads it with the project's history."""

    def __init__(self, runner: TestRunner, policy: RequestPolicy, worker: Worker | None = None) -> None:
        self._runner = runner
        self._policy = policy
        self._worker = worker or Inline()  # grouping and ranking thousands of failures is CPU work

    async def forget(
        self,
        spec: RunSpec,
        reports: Sequence[ReportedTest],
        history: RunHistory | None,
        code: CodeState | None,
        recorded: Spectrum | None = None,
        passed: Sequence[str] | None = None,
    ) -> tuple[str, ...]:
        """A run whose failures are not read by cause (nothing failed, or `detail` was `summary`) still
        tells the history which tests failed, which it ran and did not fail, and its code's digests:
        a later edit is one made since this run. It answers the changed functions no test entered."""
        if history is None:
            return ()
        previous = await history.recall()
        untested, following = await self._worker.run(
            _forgotten, spec, reports, previous, code or CodeState(), recorded, passed
        )
        await history.remember(following)
        return untested

    async def __call__(
        self,
        spec: RunSpec,
        duration: float,
        reports: Sequence[ReportedTest],
        history: RunHistory | None,
        recorded: Spectrum | None = None,
        code: CodeState | None = None,
        passed: Sequence[str] | None = None,
        total: int | None = None,
    ) -> Causes:
        """`recorded` is the run's own spectrum, where it could record one (Python 3.12 and later): then
        nothing runs again. Without it, a second pass records the failing tests and their modules.
        `total` is the run's number of tests (its summary's), which a second pass's count is a share
        of; None when `reports` are all of them (passing tests are listed only with `detail` all)."""
        symptoms = await self._worker.run(symptom_groups, reports)
        failing = [node_id for members in symptoms.values() for node_id in members]
        previous = await history.recall() if history is not None else History()
        spectrum: Spectrum | str = "no test failed"
        if failing and self._policy.localize > 0 and recorded is not None:
            spectrum = recorded
        elif failing and self._policy.localize > 0:
            # In the order the run reached them: a src-layout project may import its package through
            # the first module pytest collects (a doctest module), before its tests' modules need it.
            modules = tuple(dict.fromkeys(test.node_id.split("::", 1)[0] for test in reports if test.is_failure))
            tests = total if total is not None else len(reports)
            spectrum = await self._runner.localize(self._pass(spec, symptoms, modules, tests, duration))
        elif failing:
            spectrum = "localization is off (--localize 0)"
        code = code or CodeState()
        causes, following = await self._worker.run(_read, spec, reports, symptoms, spectrum, previous, code, passed)
        if history is not None:
            await history.remember(following)
        return causes

    def _pass(
        self,
        spec: RunSpec,
        symptoms: Mapping[str, Sequence[str]],
        modules: tuple[str, ...],
        tests: int,
        duration: float,
    ) -> LocalizeSpec:
        """The failing tests again, then --localize times the run's number of tests (at least
        LOCALIZE_FLOOR_TESTS) of their modules' others: counted, never timed, so that the load of the
        machine does not change what is recorded. Only a pass far slower than its share of the run is
        stopped (LOCALIZE_SAFETY), and the answer then says so."""
        ratio = self._policy.localize
        others = max(math.ceil(ratio * tests), LOCALIZE_FLOOR_TESTS)
        seconds = min(max(LOCALIZE_SAFETY * ratio * duration, LOCALIZE_SAFETY_FLOOR), self._policy.localize_max_seconds)
        return LocalizeSpec(run=spec, failing=repeated(symptoms), modules=modules, others=others, seconds=seconds)


def _read(
    spec: RunSpec,
    reports: Sequence[ReportedTest],
    symptoms: Mapping[str, Sequence[str]],
    spectrum: Spectrum | str,
    previous: History,
    code: CodeState,
    passed: Sequence[str] | None = None,
) -> tuple[Causes, History]:
    """The run's causes read from its symptoms, its spectrum and the history; and the history to keep.
    Plain CPU work, done by the worker: thousands of failures never hold up the event loop."""
    frames: dict[str, tuple[str, ...]] = {}
    for test in reports:
        if test.is_failure:  # a node id's reports (set-up, call, subtests) share one trace
            frames[test.node_id] = (*frames.get(test.node_id, ()), *frames_of(test))
    localization = Localization(
        spectrum if isinstance(spectrum, Spectrum) else Spectrum(),
        previous.digests,
        previous.files,
        previous.heads,
        frames,
        code.cached,
    )
    verdicts = localization.verdicts(symptoms, {test.node_id: crash_of(test) for test in reports if test.is_failure})
    causes = {
        group_id: localization.culprit(verdict.cause)
        for group_id, verdict in verdicts.items()
        if verdict.strong and verdict.cause is not None
    }
    flaky_now = {node_id for verdict in verdicts.values() for node_id in verdict.flaky}
    flaky_now |= {test.node_id for test in reports if test.outcome == "passed" and test.reruns}
    signatures = _signatures(reports)
    unchanged = localization.unchanged({**code.digests, **localization.digests()}, code.cached)
    passed_before = frozenset(previous.passed)

    def labelled(members: Sequence[ReportedTest]) -> Since | None:
        return since(members, signatures, previous, flaky_now, unchanged, passed_before)

    # One cause, one answer: every symptom whose failures one cause of the run explains, with no
    # rival, sits under it, a wrong value asserted in the tests and an exception raised on the way
    # alike, and so does the one exception the culprit raises itself. A culprit that raises in two
    # ways (at two lines, or two exceptions) may hold two failures of its own: each way keeps an
    # entry, which joins only the same raise met elsewhere (in a test's set-up and in a test's
    # call), and the cause's other symptoms sit under neither. Messages do not part a raise: one
    # raise quotes what it choked on, and quoted input is not always normalized alike.
    kinds = {signature.id: signature for signature in map(signature_of, reports)}
    raised = {
        group_id: (kinds[group_id].crash, kinds[group_id].exception)
        for group_id, culprit in causes.items()
        if group_id in kinds and _raised_in(kinds[group_id].crash, culprit)
    }
    ways = Counter(where for where, _ in {(causes[group_id].where, kind) for group_id, kind in raised.items()})
    merge = {
        group_id: cause_key(causes[group_id], *raised[group_id])
        if group_id in raised and ways[causes[group_id].where] > 1
        else cause_key(causes[group_id])
        for group_id in causes
        if verdicts[group_id].merges
    }
    groups = failure_groups(reports, causes, labelled, merge=merge)
    full = failure_groups(reports, causes, labelled, merge=merge, compress=False)
    culprits = _culprits(groups, verdicts, localization)
    recorded = spectrum if isinstance(spectrum, Spectrum) else None
    untested = changed_untested(code, recorded, previous.digests, previous.files, previous.heads)
    digests = {**code.digests, **localization.digests()}
    following = updated(
        previous, spec, signatures, flaky_now, digests, code.files, localization.implicated(), _passed(reports, passed)
    )
    note = _note(spectrum, verdicts, bool(causes), any(symptoms.values()))
    return Causes(groups, culprits, note, full, untested), following


def _forgotten(
    spec: RunSpec,
    reports: Sequence[ReportedTest],
    previous: History,
    code: CodeState,
    recorded: Spectrum | None,
    passed: Sequence[str] | None = None,
) -> tuple[tuple[str, ...], History]:
    """The changed functions no test entered, and the history after a run not read by cause."""
    signatures = _signatures(reports)
    flaky = {test.node_id for test in reports if test.outcome == "passed" and test.reruns}
    untested = changed_untested(code, recorded, previous.digests, previous.files, previous.heads)
    return untested, updated(
        previous, spec, signatures, flaky, code.digests, code.files, passed=_passed(reports, passed)
    )


def _passed(reports: Sequence[ReportedTest], recorded: Sequence[str] | None) -> Sequence[str]:
    """The `passed_key`s of the tests that passed: as the run recorded them, or else those its reports
    list (a test that failed in one phase and passed in another did not pass)."""
    if recorded is not None:
        return recorded
    failed = {test.node_id for test in reports if test.is_failure}
    return [passed_key(test.node_id) for test in reports if test.outcome == "passed" and test.node_id not in failed]


def _raised_in(crash: str | None, culprit: Culprit) -> bool:
    """Whether a failure's crash site (`file:line`) lies in the culprit's own lines."""
    if crash is None:
        return False
    file, _, line = crash.rpartition(":")
    first, _, last = culprit.lines.partition("-")
    return file == culprit.file and line.isdigit() and int(first) <= int(line) <= int(last or first)


REPEATED_PER_SYMPTOM = 10
REPEATED_AT_MOST = 100


def repeated(symptoms: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """The failing tests a second pass repeats, in turn from each symptom: at most REPEATED_PER_SYMPTOM
    of each and REPEATED_AT_MOST in all. A few failures per symptom rank its culprits as well as all
    of them; the time they leave goes to the passing tests, which tell a culprit from its callers."""
    queues = [list(dict.fromkeys(members))[:REPEATED_PER_SYMPTOM] for members in symptoms.values()]
    chosen: list[str] = []
    for turn in range(REPEATED_PER_SYMPTOM):
        chosen += [queue[turn] for queue in queues if turn < len(queue)]
    return tuple(dict.fromkeys(chosen))[:REPEATED_AT_MOST]


def _signatures(reports: Sequence[ReportedTest]) -> dict[str, str]:
    """Each failing test's signature group id: what the history compares the next run's with."""
    return {test.node_id: signature_of(test).id for test in reports if test.is_failure}


def _culprits(
    groups: tuple[FailureGroup, ...], verdicts: dict[str, Verdict], localization: Localization
) -> tuple[Culprit, ...]:
    """The run's causes in the order the spectrum ranks them, then the culprits of symptoms no cause of the
    run explains, the most failures first. Those whose failures were all already failing come after
    the rest, marked so: an agent's own new failures are the question of the moment."""
    labels: dict[str, list[Since | None]] = {}
    for group in groups:
        if group.culprit is not None:
            labels.setdefault(group.culprit.where, []).append(group.since)
    found: dict[str, tuple[int, int, Culprit]] = {}  # its cause's order, minus the failures it is named for
    for verdict in verdicts.values():
        if verdict.strong and verdict.cause is not None:
            culprit = localization.culprit(verdict.cause)
            order, failures, _ = found.get(culprit.where, (verdict.order, 0, culprit))
            found[culprit.where] = (min(order, verdict.order), failures - verdict.repeated, culprit)

    def old(culprit: Culprit) -> bool:
        return _only_preexisting(labels.get(culprit.where, []))

    ordered = sorted(found.values(), key=lambda entry: (old(entry[2]), entry[0], entry[1], entry[2].where))
    marked = (culprit.model_copy(update={"preexisting": True}) if old(culprit) else culprit for *_, culprit in ordered)
    return tuple(marked)[:MAX_CULPRITS]


def _only_preexisting(labels: Sequence[Since | None]) -> bool:
    return bool(labels) and all(
        label is not None and label.preexisting and not (label.new or label.unknown or label.flaky) for label in labels
    )


def _note(
    spectrum: Spectrum | str, verdicts: dict[str, Verdict], grouped: bool, failed: bool
) -> LocalizationNote | None:
    if not failed:
        return None
    if isinstance(spectrum, str):
        return LocalizationNote(recorder="", repeated=0, seconds=0.0, reason=spectrum)
    reasons = []
    if not grouped and not any(verdict.strong for verdict in verdicts.values()):
        if not any(verdict.repeated for verdict in verdicts.values()):
            reasons.append("no failing test was recorded" if spectrum.in_run else "no failure was repeated")
        elif not any(verdict.ranked for verdict in verdicts.values()):
            reasons.append("the failing tests ran no project code outside the tests")
        else:
            reasons.append("no function stands out")
    if spectrum.stopped:
        reasons.append("the second pass hit its time limit")
    if spectrum.in_run:  # nothing ran again: the run recorded itself
        return LocalizationNote(
            recorder=f"{spectrum.recorder}, in the run", repeated=0, seconds=0.0, reason="; ".join(reasons)
        )
    return LocalizationNote(
        recorder=spectrum.recorder, repeated=len(spectrum.tests), seconds=spectrum.seconds, reason="; ".join(reasons)
    )
