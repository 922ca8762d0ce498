"""Which code most likely broke: a function-level spectrum ranked per symptom (ADR 0020). Pure.

The run itself records (a second pass, where the interpreter cannot), for each test, the project
functions it entered. A function that every failing test of a symptom ran, and few passing tests
did, is a likely cause (Ochiai's coefficient). A function changed since its tests last passed (or
since git's HEAD, where no run saw it) that the failing tests ran comes first: a regression is
almost always in what changed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Literal

from pydantic import Field

from pytest_mcp.domain.models import Culprit, _Value

TraceOutcome = Literal["passed", "failed", "skipped"]
MAX_CULPRITS = 3
STRONG = 0.5
"""The least Ochiai score a top culprit needs for its symptom to be grouped by it."""
_TIED = 1e-9
MAX_CAUSES = 10
"""The run's causes looked for at most: each explains failures the ones before it do not."""
CLEARLY = 1.5
"""How far ahead of a symptom's own function a low-scoring cause of every failure must be (_explains_all)."""
_TEST_DIRECTORIES = frozenset({"tests", "test"})


class CodeFunction(_Value):
    """A project function a recorded test entered."""

    file: str = Field(description="Relative to the root, with '/'.")
    name: str = Field(description="Its qualified name, e.g. `Price.gross`.")
    first: int
    last: int
    ordinal: int = Field(
        1, ge=1, description="Which definition of the name in its file, in order: a property's setter is the 2nd."
    )
    digest: str | None = Field(None, description="A digest of its code now (its syntax tree, not its layout).")
    head: str | None = Field(
        None, description="The same digest at git's HEAD; None when there is no git, or it is new since."
    )
    at_head: bool = Field(False, description="Whether git's HEAD was read for it (head None then means new).")
    trivial: bool = Field(False, description="An accessor: its body only returns a name or an attribute (or passes).")
    passing: int = Field(
        0, ge=0, description="Passing tests that entered it and are not listed in the spectrum's tests."
    )
    passing_lines: tuple[tuple[int, int], ...] = Field(
        (),
        description="(line, passing tests that ran it) for its lines that those passing tests ran, where the run "
        "recorded lines (Python 3.12 and later).",
    )

    @property
    def key(self) -> str:
        return code_key(self.file, self.name, self.ordinal)

    @property
    def lines(self) -> str:
        return f"{self.first}-{self.last}" if self.last > self.first else str(self.first)


class Trace(_Value):
    """One repeated test: how it ended this time, and the functions it entered (indexes into `functions`)."""

    node_id: str
    outcome: TraceOutcome
    functions: tuple[int, ...] = ()
    lines: tuple[tuple[int, int], ...] = Field(
        (),
        description="A failing test's (function, line) pairs, each line it ran of the functions it entered (an index "
        "into `functions` and a line number), where the run recorded lines (Python 3.12 and later).",
    )
    started_process: bool = Field(
        False, description="It started a process (one that ended while it ran): what that process ran is not recorded."
    )


MODULE_CODE = "<module>"
"""The name a file's own code (outside its functions' bodies) is digested under: no function is so named."""


def code_key(file: str, name: str, ordinal: int = 1) -> str:
    """`file::name`, and `#2`, `#3`... for a name defined again in the same file: what digests are kept by."""
    return f"{file}::{name}" if ordinal == 1 else f"{file}::{name}#{ordinal}"


class Spectrum(_Value):
    """What a run recorded of itself, or what a second pass recorded."""

    functions: tuple[CodeFunction, ...] = ()
    tests: tuple[Trace, ...] = ()
    passing_total: int = Field(
        0, ge=0, description="Passing tests not listed in `tests`, counted per function in `CodeFunction.passing`."
    )
    test_modules: tuple[str, ...] = Field((), description="Files that hold tests: test code, never blamed.")
    collected: tuple[int, ...] = Field(
        (),
        description="Functions entered before the first test, as the tests were collected (a module's import-time "
        "code): every test ran after them. Recorded by a run itself (Python 3.12 and later).",
    )
    recorder: str = ""
    in_run: bool = Field(False, description="Recorded by the run itself, not by a second pass: nothing was repeated.")
    stopped: str | None = Field(None, description="Why the pass stopped before every test ran, if it did.")
    seconds: float = 0.0


class CodeState(_Value):
    """The digests of the functions of the project files a run imported, on every run: what tells, on
    the next, which functions changed since (ADR 0020)."""

    digests: dict[str, str] = Field(
        default_factory=dict,
        description="`code_key` -> a digest of its syntax tree; `code_key(file, MODULE_CODE)` holds what the file "
        "runs outside its functions' bodies.",
    )
    files: tuple[str, ...] = Field((), description="The files read: a function new in one of them is new code.")
    cached: tuple[str, ...] = Field(
        (), description="The `code_key`s of functions behind a caching decorator: a cache's answer enters none."
    )


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
    raised: int = 0  # failing tests (of those it was ranked on) whose failure surfaced in its lines


@dataclass(frozen=True)
class Verdict:
    """What the spectrum says of one symptom group: its culprits, best first, and whether they can be trusted."""

    ranked: tuple[Ranked, ...]
    strong: bool
    repeated: int  # its failing tests that failed again and were recorded
    flaky: tuple[str, ...]  # its failing tests that passed when repeated
    merges: bool = False  # strong, and its top the one cause of all its failures: it may sit under it
    cause: Ranked | None = None  # its top, with its evidence over all the run's failing tests (`_Evidence.whole`)
    order: int = 0  # its cause's place among the run's causes (their number where it has none)


@dataclass(frozen=True)
class _Cause:
    """A function the run's failures point at, and the failing tests (node ids) it explains."""

    ranked: Ranked
    covers: frozenset[str]


@dataclass(frozen=True)
class _Evidence:
    """The run's counts every candidate is scored with."""

    passed_by: Mapping[int, int]  # function -> passing tests that ran it
    passing_total: int
    ran_by: Mapping[int, int]  # function -> failing tests that ran it
    failing_total: int
    surfaced: Mapping[str, int]  # failing test -> the function its crash site lies in

    def whole(self, ranked: Ranked) -> Ranked:
        """A candidate's evidence over all the run's failing tests, whatever it was ranked on: what is
        shown of it, the same wherever it is named."""
        ef = self.ran_by.get(ranked.function, ranked.failing)
        score = ef / math.sqrt(self.failing_total * (ef + ranked.passing)) if ef else 0.0
        return replace(ranked, score=score, failing=ef, failing_total=self.failing_total, elsewhere=0)


ChangeBasis = Literal["run", "new", "head"]


def changed_since(
    function: CodeFunction,
    last_digests: Mapping[str, str],
    last_files: Iterable[str] = (),
    held_at_head: Iterable[str] = (),
) -> ChangeBasis | None:
    """What a function changed since, if it did: `run`, the digest an earlier run recorded (the last one,
    or, while a failing test runs it, the one from before its change); `head`, git's HEAD, for a
    function no run saw, or one that differed from HEAD while a failing test has run it since; `new`,
    a function new in a file an earlier run read. Without git, a function no run saw cannot be told
    changed, and nothing is claimed."""
    if function.digest is None:
        return None
    if function.key in last_digests:
        return "run" if last_digests[function.key] != function.digest else None
    if function.key not in set(held_at_head) and function.file in set(last_files):
        return "new"
    if function.at_head and function.head != function.digest:
        return "head"
    return None


MAX_UNTESTED = 5


def changed_untested(
    code: CodeState,
    spectrum: Spectrum | None,
    last_digests: Mapping[str, str],
    last_files: Iterable[str] = (),
    held_at_head: Iterable[str] = (),
) -> tuple[str, ...]:
    """Functions of the imported project files changed since an earlier run here that no test of this run
    entered, at most MAX_UNTESTED, in file order: what an edit the suite passes may have left untried.
    Only a run that recorded every test itself can tell (Python 3.12 and later)."""
    if spectrum is None or not spectrum.in_run:
        return ()
    entered = {function.key for function in spectrum.functions}
    files, heads = frozenset(last_files), frozenset(held_at_head)
    found = []
    for key, digest in code.digests.items():
        if (
            key in entered
            or key.endswith(f"::{MODULE_CODE}")
            or is_test_code(key.split("::", 1)[0], spectrum.test_modules)
        ):
            continue  # a test no run selected is not code left untried; a module's own code ran as it was imported
        if key in last_digests:
            changed = last_digests[key] != digest
        else:
            changed = key.split("::", 1)[0] in files and key not in heads
        if changed:
            found.append(key)
            if len(found) == MAX_UNTESTED:
                break
    return tuple(found)


def function_of(node_id: str) -> str:
    """A test's own function's `code_key`, as its first definition: `file::Class.test` for
    `file::Class::test[param]`."""
    file, _, names = node_id.partition("::")
    return code_key(file, names.split("[", 1)[0].replace("::", "."))


def own_function_key(node_id: str, digests: Mapping[str, str]) -> str | None:
    """The `code_key` of a test's own function among `digests`, if they hold it (`function_of`); of a name
    defined twice, the last definition (the one pytest collects)."""
    first = function_of(node_id)
    file, _, name = first.partition("::")
    if not name or first not in digests:
        return None
    ordinal = 1
    while code_key(file, name, ordinal + 1) in digests:
        ordinal += 1
    return code_key(file, name, ordinal)


class Localization:
    """The spectrum read against the first run's symptom groups."""

    def __init__(
        self,
        spectrum: Spectrum,
        last_digests: Mapping[str, str],
        last_files: Iterable[str] = (),
        held_at_head: Iterable[str] = (),
        frames: Mapping[str, Sequence[str]] | None = None,
        cached: Iterable[str] = (),
    ) -> None:
        """`frames` gives a failing test's project frames (`file:line`, from its traceback and crash site):
        the functions that hold them ran for its failure, and count as entered by it, recorded or not.
        `cached` names the functions behind a caching decorator (`code_key`s), whose cached answers enter
        nothing."""
        self.spectrum = spectrum
        self._held: dict[str, int | None] = {}  # site -> the function holding it (`_holding`)
        self._by_file: dict[str, list[int]] | None = None
        files, heads = frozenset(last_files), frozenset(held_at_head)
        self.basis = tuple(changed_since(function, last_digests, files, heads) for function in spectrum.functions)
        self.changed = tuple(basis is not None for basis in self.basis)
        # Test code is never blamed; nor is an accessor, unless it changed: every caller of a value runs it.
        self._blamable = [
            not is_test_code(function.file, spectrum.test_modules) and (changed or not function.trivial)
            for function, changed in zip(spectrum.functions, self.changed, strict=True)
        ]
        # A function entered before the first test (a module's import-time code: a constructor called at
        # module level) ran before every test. Unchanged, it tells no test from another; changed, every
        # test ran the change, though none entered it: it counts as run by each.
        known = len(spectrum.functions)
        self._before = frozenset(f for f in spectrum.collected if 0 <= f < known and self.changed[f])
        # Changed code can run unrecorded: a changed function behind a cache answers from it without
        # being entered (emoji's name lookup, cached by an earlier test's call), and a process a test
        # starts runs whatever it imports (html2text's command-line tests). A failing test that entered no
        # changed code counts as running the changed cached functions, and, if it started a process,
        # every changed function: the only changes it can have met. Never a passing test.
        behind = frozenset(cached)
        changed = [index for index, yes in enumerate(self.changed) if yes and self._blamable[index]]
        self._unseen = frozenset(index for index in changed if spectrum.functions[index].key in behind)
        self._unseen_by_process = frozenset(changed)
        self._tests = tuple(self._completed(trace, frames or {}) for trace in spectrum.tests)
        # What the ranking reads: each function as its most telling line, where the run recorded lines; but a
        # changed function as a whole: every failing test that entered it met the change, whichever lines it ran.
        self._told = {f: told for f, told in most_telling_lines(spectrum).items() if not self.changed[f]}
        self._traces: dict[str, Trace] = {}
        for trace, completed in zip(spectrum.tests, self._tests, strict=True):
            read = _by_line(trace, self._told)
            self._traces[trace.node_id] = completed if read is trace else self._completed(read, frames or {})
        self._last = last_digests
        # Known the same as an earlier run saw it: digested then and now, and equal.
        self._same = tuple(
            function.digest is not None and last_digests.get(function.key) == function.digest
            for function in spectrum.functions
        )

    def _completed(self, trace: Trace, frames: Mapping[str, Sequence[str]]) -> Trace:
        """A test's trace with what it ran without being recorded entering it: the changed import-time
        functions, which ran before every test; and, for a failing test, the functions its traceback
        shows running when it failed, and, if it entered no changed code, the changed code it may have
        run unrecorded (behind a cache, in a process it started). A failure re-raised from a class's
        set-up that failed in an earlier test enters nothing again, and would be evidence against the
        very function it raised in."""
        shown = frames.get(trace.node_id, ()) if trace.outcome == "failed" else ()
        running = {index for frame in shown if (index := self._holding(frame)) is not None}
        extra = (self._before | running).difference(trace.functions)
        if trace.outcome == "failed" and not any(self.changed[f] for f in (*trace.functions, *extra)):
            extra |= self._unseen_by_process if trace.started_process else self._unseen
        if not extra:
            return trace
        return trace.model_copy(update={"functions": tuple(sorted(extra.union(trace.functions)))})

    def _holding(self, crash: str) -> int | None:
        """The blamable function whose lines hold `crash` (`file:line`), the innermost if they nest. Looked
        up once a site: thousands of failures share a few crash sites and frames."""
        if crash in self._held:
            return self._held[crash]
        file, _, line = crash.rpartition(":")
        if self._by_file is None:
            self._by_file = {}
            for index, function in enumerate(self.spectrum.functions):
                if self._blamable[index]:
                    self._by_file.setdefault(function.file, []).append(index)
        found = None
        if line.isdigit():
            number = int(line)
            functions = self.spectrum.functions
            holding = [i for i in self._by_file.get(file, ()) if functions[i].first <= number <= functions[i].last]
            found = min(holding, key=lambda i: functions[i].last - functions[i].first, default=None)
        self._held[crash] = found
        return found

    def verdicts(
        self, groups: Mapping[str, Sequence[str]], crashes: Mapping[str, str | None] | None = None
    ) -> dict[str, Verdict]:
        """Each group's ranked culprits, read from the causes of the run's failures as a whole.

        A test that failed in the run and passes when repeated is flaky: it is left out of both sides.
        `crashes` gives a failing test's crash site (`file:line`, the deepest project frame), which
        tells the function its failure surfaced in.
        """
        crashes = crashes or {}
        # Failures share a few crash sites: each is looked up once among the functions.
        holding = {crash: self._holding(crash) for crash in set(crashes.values()) if crash}
        surfaced = {
            node_id: index for node_id, crash in crashes.items() if crash and (index := holding[crash]) is not None
        }
        failing_ids = {node_id for members in groups.values() for node_id in members}
        passing = [
            trace for trace in self._traces.values() if trace.outcome == "passed" and trace.node_id not in failing_ids
        ]
        again: dict[str, list[Trace]] = {}
        flaky: dict[str, list[str]] = {}
        for group_id, members in groups.items():
            traces = [self._traces[node_id] for node_id in dict.fromkeys(members) if node_id in self._traces]
            again[group_id] = [trace for trace in traces if trace.outcome == "failed"]
            flaky[group_id] = [trace.node_id for trace in traces if trace.outcome == "passed"]
        failing = list({trace.node_id: trace for traces in again.values() for trace in traces}.values())
        ran_by: dict[int, int] = {}
        for trace in failing:
            for function in set(trace.functions):
                ran_by[function] = ran_by.get(function, 0) + 1
        # A run's own spectrum counts its passing tests per function; a second pass lists them.
        passed_by = {index: f.passing for index, f in enumerate(self.spectrum.functions) if f.passing}
        passed_by.update((index, passed) for index, (_line, passed) in self._told.items())
        for trace in passing:
            for function in set(trace.functions):
                passed_by[function] = passed_by.get(function, 0) + 1
        passing_total = len(passing) + self.spectrum.passing_total
        passed_by.update(dict.fromkeys(self._before, passing_total))
        evidence = _Evidence(passed_by, passing_total, ran_by, len(failing), surfaced)
        causes = self._causes(failing, again.values(), evidence)
        verdicts = {}
        for group_id, traces in again.items():
            local = self._ranked(traces, evidence)
            verdict = self._verdict(traces, local, causes, evidence)
            if verdict is None:  # no cause of the run's explains its failures: its own evidence speaks
                whole = evidence.whole(local[0]) if local else None
                verdict = Verdict(
                    local, _strong(local), len(traces), (), merges=_ahead(local), order=len(causes), cause=whole
                )
            verdicts[group_id] = replace(verdict, flaky=tuple(flaky[group_id]))
        return verdicts

    def _causes(
        self, failing: Sequence[Trace], symptoms: Iterable[Sequence[Trace]], evidence: _Evidence
    ) -> list[_Cause]:
        """The run's causes, most telling first: the best candidate over all the failing tests (changed
        code first, then Ochiai's score), then the best over the failing tests it does not explain, and so
        on while the evidence is strong. One root cause under many symptoms beats each symptom's local
        helper, since its score counts every failure it explains; a second bug, whose failures do not
        run the first, is found in the failures left. Each is shown with its evidence over all the
        run's failures.

        A candidate must explain at least one symptom whole: every failing test of a symptom group ran
        it. A group's members share a crash site and a message, one failure mode; a function that only
        some of them ran is a detail of some inputs, not their cause (a helper of six of a lexer's 26
        identical crashes outscored the lexer's function all 26 ran and raised in). Where no candidate
        explains a whole symptom, as when one holds two bugs' failures, every candidate is weighed."""
        ran = {trace.node_id: frozenset(trace.functions) for trace in failing}
        left = list(failing)
        causes: list[_Cause] = []
        while left and len(causes) < MAX_CAUSES:
            ids = {trace.node_id for trace in left}
            whole: set[int] = set()
            for members in symptoms:
                runs = [ran[trace.node_id] for trace in members if trace.node_id in ids]
                if runs:
                    whole |= frozenset.intersection(*runs)
            ranked = self._ranked(left, evidence)
            ranked = tuple(r for r in ranked if r.function in whole) or ranked
            ranked = _one_cause_first(ranked, left, ran)
            if not _strong(ranked) and not _explains_all(ranked, len(left), _rival(ranked, left, ran)):
                break
            top = ranked[0]
            covers = frozenset(trace.node_id for trace in left if top.function in ran[trace.node_id])
            causes.append(_Cause(evidence.whole(top), covers))
            left = [trace for trace in left if trace.node_id not in covers]
        return causes

    def _verdict(
        self, traces: Sequence[Trace], local: tuple[Ranked, ...], causes: Sequence[_Cause], evidence: _Evidence
    ) -> Verdict | None:
        """A group's verdict from the run's cause that explains most of its failing tests, if one does.

        It sits under that cause (one cause, one answer) when the cause explains most of them and has
        no rival: a function on the same footing (changed or not) that all of them ran, two or more,
        and nothing else did, no other failure and no passing test. Such a function may be a second
        bug that the first one's callers also run: precision first, the group keeps its own entry
        (and still names the run's cause). A symptom seen once is no evidence of a second bug."""
        explained = [sum(1 for trace in traces if trace.node_id in cause.covers) for cause in causes]
        if not traces or not any(explained):
            return None
        order = max(range(len(causes)), key=lambda index: (explained[index], -index))
        cause = causes[order].ranked
        rival = len(traces) > 1 and any(
            r.function != cause.function
            and r.changed == cause.changed
            and r.failing == len(traces)
            and r.passing == 0
            and evidence.ran_by.get(r.function, 0) == len(traces)
            for r in local
        )
        merges = 2 * explained[order] > len(traces) and not rival
        ranked = (cause, *(r for r in local if r.function != cause.function))
        return Verdict(ranked, True, len(traces), (), merges=merges, order=order, cause=cause)

    def _ranked(self, failing: Sequence[Trace], evidence: _Evidence) -> tuple[Ranked, ...]:
        """The candidates the `failing` tests ran, best first: changed code first, then Ochiai's score over
        them; on a tie, the function more of the run's other failures share, then the one fewer passing
        tests run, then the larger: functions the same tests ran are as suspicious line for line, so the
        one with more lines more likely holds the fault (h11's header clean-up, 57 lines, and the 17-line
        setter it calls; iso8601's time-zone parser and the 5-line constructor it returns through)."""
        if not failing:
            return ()
        counts: dict[int, int] = {}
        raised: dict[int, int] = {}
        for trace in failing:
            for function in set(trace.functions):
                if self._blamable[function]:
                    counts[function] = counts.get(function, 0) + 1
            surfaced = evidence.surfaced.get(trace.node_id)
            if surfaced is not None:
                raised[surfaced] = raised.get(surfaced, 0) + 1
        candidates = []
        for function, ef in counts.items():
            ep = evidence.passed_by.get(function, 0)
            candidates.append(
                Ranked(
                    function,
                    self.changed[function],
                    ef / math.sqrt(len(failing) * (ef + ep)),
                    ef,
                    len(failing),
                    ep,
                    evidence.passing_total,
                    evidence.ran_by.get(function, 0) - ef,
                    raised.get(function, 0),
                )
            )

        def key(r: Ranked) -> tuple[bool, bool, float, int, int, int, str]:
            function = self.spectrum.functions[r.function]
            return (
                not r.changed,
                not _surfaced_in(r, len(failing)),
                -round(r.score, 6),
                -r.elsewhere,
                r.passing,
                function.first - function.last,
                function.key,
            )

        candidates.sort(key=key)
        return tuple(candidates)

    def culprit(self, ranked: Ranked) -> Culprit:
        function = self.spectrum.functions[ranked.function]
        return Culprit(
            file=function.file,
            function=function.name,
            lines=function.lines,
            line=self._told[ranked.function][0] if ranked.function in self._told else None,
            score=round(ranked.score, 2),
            failing=ranked.failing,
            failing_total=ranked.failing_total,
            passing=ranked.passing,
            passing_total=ranked.passing_total,
            changed=ranked.changed,
            changed_since=self.basis[ranked.function],
            before_tests=ranked.function in self._before,
        )

    def unchanged(self, now: Mapping[str, str], cached: Iterable[str] = ()) -> dict[str, int]:
        """The failing tests that failed again and ran nothing that changed: each one's test function (its
        digest in `now`, the run's code) and every function it was recorded entering were digested by an
        earlier run, and are the same now. Node id -> how many functions were compared. A test whose
        functions are not all known is left out: nothing is claimed of it; nor of one that started a
        process, which may have run changed code that no record shows (a CLI's test through a subprocess).

        Nor is any test, when project code changed that a test runs without entering a function: a
        file's own code (a constant, a table, a class attribute: `MODULE_CODE`), or a function behind a
        cache (`cached`), whose answer from the cache enters nothing (emoji's cached name lookup changed,
        and the tests it answered from its cache were called suspect flaky). A test module's own code
        counts for its own tests only: a test added to one file leaves the others' labels alone."""

        def moved(key: str) -> bool:
            return key in self._last and key in now and self._last[key] != now[key]

        modules = [key for key in now if key.endswith(f"::{MODULE_CODE}")]
        project = [key for key in modules if not is_test_code(key.split("::", 1)[0], self.spectrum.test_modules)]
        if any(moved(key) for key in (*project, *cached)):
            return {}
        found = {}
        for trace in self._tests:
            if trace.outcome != "failed" or trace.started_process or not all(self._same[f] for f in trace.functions):
                continue
            own = own_function_key(trace.node_id, now)
            if moved(code_key(trace.node_id.partition("::")[0], MODULE_CODE)):
                continue  # its test module's own code changed: a constant, a parametrization's values
            if own is not None and self._last.get(own) == now[own]:
                found[trace.node_id] = len({self.spectrum.functions[f].key for f in trace.functions} | {own})
        return found

    def digests(self) -> dict[str, str]:
        """The functions' digests now, for the next run to tell what changed."""
        return {function.key: function.digest for function in self.spectrum.functions if function.digest}

    def implicated(self) -> dict[str, ChangeBasis]:
        """The changed functions a failing test ran, with what they changed since: their change is not yet
        shown good, so the next run still compares them with the same (their tests last passed there)."""
        failing = {f for trace in self._tests if trace.outcome == "failed" for f in trace.functions}
        return {
            self.spectrum.functions[index].key: basis
            for index in sorted(failing)
            if (basis := self.basis[index]) is not None
        }


def most_telling_lines(spectrum: Spectrum) -> dict[int, tuple[int, int]]:
    """Each function's most telling line, where the run recorded the lines its tests ran: the line of it
    with the best Ochiai score over the run's failing tests, and the passing tests that ran it (function
    index -> (line, passing)). On a tie, the line more failing tests ran, then fewer passing ones, then
    the first.

    A function is as suspicious as its most suspicious line. A function that most passing tests enter
    can still hold a line only the failing ones run: the branch a bug lives in, or the one it sends them
    down (semver's comparison: 187 passing tests enter it; one of its lines ran in all 11 failures and
    few passing tests). Ranked by their functions' entries, the planted bug of 54 real suites came
    first in 24; ranked by their most telling lines, in 39 (ADR 0020)."""
    failing = [trace for trace in spectrum.tests if trace.outcome == "failed" and trace.lines]
    if not failing:
        return {}
    ran: dict[tuple[int, int], int] = {}
    for trace in failing:
        entered = frozenset(trace.functions)
        for pair in set(trace.lines):
            if pair[0] in entered:  # a line of a function pytest itself called for it is no evidence
                ran[pair] = ran.get(pair, 0) + 1
    passed = {
        (index, line): count
        for index, function in enumerate(spectrum.functions)
        for line, count in function.passing_lines
    }
    best: dict[int, tuple[tuple[float, int, int, int], int, int]] = {}
    for (function, line), failed in ran.items():
        passing = passed.get((function, line), 0)
        key = (round(failed / math.sqrt(failed + passing), 9), failed, -passing, -line)  # Ochiai over a fixed F
        if function not in best or key > best[function][0]:
            best[function] = (key, line, passing)
    return {function: (line, passing) for function, (_key, line, passing) in best.items()}


def _by_line(trace: Trace, told: Mapping[int, tuple[int, int]]) -> Trace:
    """A failing test's trace as the ranking reads it: a function it entered counts only if it ran the
    function's most telling line (`most_telling_lines`)."""
    if trace.outcome != "failed" or not told:
        return trace
    ran = frozenset(trace.lines)
    kept = tuple(f for f in trace.functions if f not in told or (f, told[f][0]) in ran)
    return trace if len(kept) == len(trace.functions) else trace.model_copy(update={"functions": kept})


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


def _explains_all(ranked: tuple[Ranked, ...], failing: int, rival: float) -> bool:
    """Whether the top candidate of the run's failures stands out without a high score: two or more
    failing tests, every one of them ran it, and either most of them surfaced in it, or no other
    function they all ran scores as well and it scores at least CLEARLY times the `rival` story of
    two or more bugs (`_rival`). Ochiai's score of a function every failure ran is the share of the
    tests running it that fail, which a helper every part of a project calls keeps low even when it
    is the one cause (a width function of a CLI library: 73 failing of the 350 tests that ran it,
    0.46, against 0.25 for the best helper of one symptom). The margin keeps two bugs apart: each
    bug's function explains its own symptom whole, and a caller both share, which every failure ran,
    must clearly beat both to be named as their one cause."""
    if failing < 2 or not ranked or ranked[0].failing < failing:
        return False
    top = ranked[0]
    if _surfaced_in(top, failing):
        return True
    for r in ranked[1:]:
        if r.changed == top.changed and r.failing == failing and top.score - r.score <= _TIED:
            return False  # another function every failure ran, as telling: nothing stands out
    return top.score >= CLEARLY * rival


def _one_cause_first(
    ranked: tuple[Ranked, ...], failing: Sequence[Trace], ran: Mapping[str, frozenset[int]]
) -> tuple[Ranked, ...]:
    """`ranked` with the best function every failing test ran first, when it stands out as their one
    cause (`_explains_all`) though a function that explains only some of them scores higher: that
    function leaves failures a second bug must explain, and the one cause beats every such story
    clearly. A helper that one failure alone ran (hyperlink's fragment decoder, 0.21, and none of the
    97 passing tests) outscored the authority getter both failures ran (0.20): a symptom seen once is
    no evidence of a bug. The top keeps its place when it is on another footing (changed code) or
    holds where most failures surfaced."""
    if len(failing) < 2 or not ranked or ranked[0].failing == len(failing) or _surfaced_in(ranked[0], len(failing)):
        return ranked
    full = next((r for r in ranked if r.failing == len(failing) and r.changed == ranked[0].changed), None)
    if full is None:
        return ranked
    first = (full, *(r for r in ranked if r is not full))
    return first if _explains_all(first, len(failing), _rival(first, failing, ran)) else ranked


def _rival(ranked: tuple[Ranked, ...], failing: Sequence[Trace], ran: Mapping[str, frozenset[int]]) -> float:
    """How strongly two or more bugs explain the `failing` tests instead of `ranked`'s top: the score of
    the weakest function of the story they need. Functions on the top's footing (changed or not) that
    two or more of them ran, not all, are taken best first, each for the failures none before it
    explains, until every failure is explained: a story of two bugs needs both functions buggy, and is
    as likely as the less telling of them (isodate's converter, which all 5 failures ran, 0.41, was held
    back by a caller of 3 of them, 0.29, though the other 2 ran only another caller, 0.24). Where no
    such story explains them all (failures only the top explains: it may hold a second bug itself),
    the best of those functions alone is the rival. A function one failure ran is no evidence of a
    second bug, nor of a part of one: 0.0 when there is none."""
    if not ranked:
        return 0.0
    top = ranked[0]
    partial = sorted(
        (r for r in ranked[1:] if r.changed == top.changed and 2 <= r.failing < len(failing)),
        key=lambda r: -r.score,
    )
    if not partial:
        return 0.0
    left = {trace.node_id for trace in failing}
    story: list[Ranked] = []
    for r in partial:
        explains = {node_id for node_id in left if r.function in ran[node_id]}
        if len(explains) >= 2:
            story.append(r)
            left -= explains
        if not left:
            return min(r.score for r in story)
    return partial[0].score


def _surfaced_in(ranked: Ranked, failing: int) -> bool:
    """Whether most of the `failing` tests it was ranked on failed in its own lines: their deepest
    project frame, where the exception was raised or a library call failed."""
    return 2 * ranked.raised > failing


def _ahead(ranked: tuple[Ranked, ...]) -> bool:
    """A strong top ahead of the second on change or score: a symptom no run-wide cause explains may sit
    under it. A top decided only by how many other failures share it could join two bugs into one."""
    if not _strong(ranked):
        return False
    if len(ranked) < 2:
        return True
    top, second = ranked[0], ranked[1]
    return top.changed != second.changed or top.score - second.score > _TIED
