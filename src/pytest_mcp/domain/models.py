"""Values the use cases speak in: what pytest reported, and what we answer with."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

Outcome = Literal["passed", "failed", "skipped", "xfailed", "xpassed", "error"]
Phase = Literal["setup", "call", "teardown"]
# Durations are kept to the millisecond: finer digits are timing noise, and cost bytes in every report.
Seconds = Annotated[float, AfterValidator(lambda seconds: round(seconds, 3))]


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    always_present: ClassVar[frozenset[str]] = frozenset()
    """Fields an answer carries even at their default (a zero, an empty list): the ones programs
    read without a default of their own. Every other field is left out at its default (ADR 0009)."""

    def wire(self) -> dict[str, Any]:
        """This value as an answer carries it: fields at their default left out, but for `always_present`."""
        dumped = self.model_dump(mode="json", exclude_defaults=True)
        missing = {name for name in self.always_present if name not in dumped}
        if missing:
            dumped.update(self.model_dump(mode="json", include=missing))
        # In the models' field order: the set's order would follow the process's hash seed.
        data = {name: dumped[name] for name in type(self).model_fields if name in dumped}
        for name in data:
            value = getattr(self, name)
            if isinstance(value, _Value):
                data[name] = value.wire()
            elif isinstance(value, tuple) and value and isinstance(value[0], _Value):
                data[name] = [item.wire() for item in value]
        return data


class Summary(_Value):
    """Counts exactly as pytest's terminal summary line states them.

    `total` is the number of tests selected to run (collected minus deselected). The other
    counts are per report, as pytest counts them, so a test that passes and then errors in
    teardown appears in both `passed` and `errors`.

    The `subtests_*` counts are pytest's own "N subtests passed/failed/skipped" words (pytest 9's
    built-in subtests, which also carry unittest's `subTest`). They are 0 whenever the line does
    not show them: pytest 9 leaves passing subtests out at the default verbosity, and counts a
    failing or skipped subtest in `failed` or `skipped`, as its SUBFAILED/SUBSKIPPED lines say.
    """

    total: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    xfailed: int = 0
    xpassed: int = 0
    errors: int = 0
    deselected: int = 0
    warnings: int = Field(0, description="pytest's `N warnings`: warnings recorded during the run.")
    subtests_passed: int = Field(0, description="pytest's `N subtests passed`; 0 when the line leaves it out.")
    subtests_failed: int = Field(0, description="pytest's `N subtests failed`; 0 when the line leaves it out.")
    subtests_skipped: int = Field(0, description="pytest's `N subtests skipped`; 0 when the line leaves it out.")
    rerun: int = Field(0, description="pytest-rerunfailures' `N rerun`: failed attempts that were run again.")
    other_statuses: dict[str, int] = Field(
        default_factory=dict,
        description="Every other status a plugin adds to pytest's summary line, by pytest's word, in its order "
        "(e.g. {'flaky': 2}); left out when there is none.",
    )
    duration: Seconds = Field(0.0, description="Seconds pytest spent in the session, to the millisecond.")

    always_present: ClassVar[frozenset[str]] = frozenset(
        {
            "total",
            "passed",
            "failed",
            "skipped",
            "xfailed",
            "xpassed",
            "errors",
            "deselected",
            "warnings",
            "subtests_passed",
            "subtests_failed",
            "subtests_skipped",
            "rerun",
            "duration",
        }
    )

    def words(self) -> str:
        """The counts in pytest's own order and words: `1 failed, 3 passed, 1 error`; `no tests ran` for none."""
        parts = [
            (self.failed, "failed"),
            (self.passed, "passed"),
            (self.skipped, "skipped"),
            (self.deselected, "deselected"),
            (self.xfailed, "xfailed"),
            (self.xpassed, "xpassed"),
            (self.warnings, "warning" if self.warnings == 1 else "warnings"),
            (self.errors, "error" if self.errors == 1 else "errors"),
            # pytest never pluralises these: `1 subtests passed`.
            (self.subtests_passed, "subtests passed"),
            (self.subtests_failed, "subtests failed"),
            (self.subtests_skipped, "subtests skipped"),
            (self.rerun, "rerun"),
            *((count, word) for word, count in self.other_statuses.items()),
        ]
        return ", ".join(f"{count} {word}" for count, word in parts if count) or "no tests ran"

    def line(self) -> str:
        """pytest's summary line without its separators: `1 failed, 3 passed in 0.21s`."""
        return f"{self.words()} in {self.duration:.2f}s"

    @classmethod
    def from_counts(cls, counts: Mapping[str, int], *, total: int, duration: float) -> Summary:
        """Build from counts keyed by pytest's words (`error`, `subtests passed`, `rerun`); absent keys
        are 0, and any word not modelled here is kept, in order, in `other_statuses`."""
        return cls(
            total=total,
            passed=counts.get("passed", 0),
            failed=counts.get("failed", 0),
            skipped=counts.get("skipped", 0),
            xfailed=counts.get("xfailed", 0),
            xpassed=counts.get("xpassed", 0),
            errors=counts.get("error", 0),
            deselected=counts.get("deselected", 0),
            warnings=counts.get("warnings", 0),
            subtests_passed=counts.get("subtests passed", 0),
            subtests_failed=counts.get("subtests failed", 0),
            subtests_skipped=counts.get("subtests skipped", 0),
            rerun=counts.get("rerun", 0),
            other_statuses={word: count for word, count in counts.items() if word not in _MODELLED and count},
            duration=duration,
        )


_MODELLED = frozenset(
    {"passed", "failed", "skipped", "xfailed", "xpassed", "error", "deselected", "warnings", "rerun"}
    | {"subtests passed", "subtests failed", "subtests skipped"}
)


class ReportedTest(_Value):
    """One test report: a test's outcome in one phase."""

    # On every report, real or fake, 0 included: a field a program reads is there or never is.
    always_present: ClassVar[frozenset[str]] = frozenset({"duration"})

    node_id: str = Field(description="Exactly as pytest prints it; can be passed back to execute_tests.")
    outcome: Outcome
    phase: Phase
    location: str | None = Field(None, description="file:line of the test function, relative to the root.")
    message: str | None = None
    traceback: str | None = None
    duration: Seconds = Field(
        0.0,
        description="Seconds this phase took, to the millisecond; 0 when under 0.5 ms. On every report, 0 included "
        "(the test double's reports carry their scripted duration, 0 by default).",
    )
    stdout: str | None = Field(None, description="Captured stdout, when show_capture is on.")
    stderr: str | None = Field(None, description="Captured stderr, when show_capture is on.")
    reruns: int = Field(
        0,
        description="Times pytest-rerunfailures ran it again after a failed attempt. With outcome 'passed' the "
        "test is flaky: it is listed although it passed.",
    )
    first_failure: str | None = Field(None, description="With reruns: the message of its first failed attempt.")
    # What a failure's group is made of; an answer says it once, in the group, and leaves it out here.
    exception: str | None = Field(None, description="A failure's exception type, e.g. `ValueError`, when known.")
    crash: str | None = Field(
        None,
        description="A failure's crash site: file:line of the deepest frame in the project's own code (not "
        "site-packages or the standard library), which is not always the test's line.",
    )
    blocked: str | None = Field(
        None,
        description="Under --sandbox: what the sandbox blocked that this failure met, and what allows it, e.g. "
        "`connect 127.0.0.1:5432; --sandbox-network allows it`.",
    )

    @property
    def is_failure(self) -> bool:
        return self.outcome in ("failed", "error")


def _share(part: int, whole: int) -> str:
    if part == whole:
        return {1: "the", 2: "both"}.get(whole, f"all {whole:,}")
    return f"{part:,} of {whole:,}"


class Culprit(_Value):
    """A function the failures point at (ADR 0020): where it is, and the evidence in numbers."""

    always_present: ClassVar[frozenset[str]] = frozenset(
        {"file", "function", "lines", "score", "failing", "failing_total", "passing", "passing_total", "changed"}
    )

    file: str = Field(description="Relative to the root.")
    function: str = Field(description="Its qualified name, e.g. `Cart.total`.")
    lines: str = Field(description="Its line range, e.g. `12-19`.")
    line: int | None = Field(
        None,
        description="Its most telling line, where the run recorded the lines its tests ran (Python 3.12 and later): "
        "the one whose run goes most with failing. `score`, `failing` and `passing` are then that line's.",
    )
    score: float = Field(description="Ochiai's coefficient, 0 to 1: how closely running it goes with failing.")
    failing: int = Field(description="Failing tests (repeated) that ran it.")
    failing_total: int = Field(description="Failing tests repeated.")
    passing: int = Field(description="Passing tests that ran it.")
    passing_total: int = Field(description="Passing tests run in the repeat.")
    changed: bool = Field(
        description="Changed since its tests last passed in this project's runs here, or, where no run read "
        "it, since git's HEAD (see `changed_since`)."
    )
    changed_since: Literal["run", "new", "head"] | None = Field(
        None,
        description="With changed: `run`, its code differs from the last run here that its tests passed; `new`, "
        "it is new in a file an earlier run read; `head`, no run here read it, and it differs from git's HEAD.",
    )

    preexisting: bool = Field(
        False, description="Every failure it is named for was already failing, the same way, before this run."
    )
    before_tests: bool = Field(
        False,
        description="Run before every test, as the tests were collected (a module's import-time code), not by a "
        "test itself: changed, every test ran after the change.",
    )

    @property
    def where(self) -> str:
        """`shop/version.py::compare (lines 6-12), line 12`: its most telling line last, where one is known."""
        line = f", line {self.line}" if self.line is not None else ""
        return f"{self.file}::{self.function} (lines {self.lines}){line}"

    def evidence(self) -> str:
        """`run by all 235 failing tests and 9 % of the passing ones; changed since the last run`."""
        noun = "test" if self.failing_total == 1 else "tests"
        old = "; its failures were already failing" if self.preexisting else ""
        if self.before_tests:
            return f"run before every test, as they were collected{self._changed()}{old}"
        if self.failing_total == 1:
            return f"run by the failing test and {self._passing()}{self._changed()}{old}"
        share = _share(self.failing, self.failing_total)
        return f"run by {share} failing {noun} and {self._passing()}{self._changed()}{old}"

    def _passing(self) -> str:
        if not self.passing_total:
            return "no passing test repeated"
        return f"{round(100 * self.passing / self.passing_total)} % of the {self.passing_total:,} passing ones"

    def _changed(self) -> str:
        if not self.changed:
            return ""
        return {
            "new": "; new since the last run",
            "head": "; changed since git's HEAD",
        }.get(self.changed_since or "", "; changed since its tests last passed")


class Symptom(_Value):
    """One way a cause's tests fail: an exception and masked message, where, and how many fail so."""

    always_present: ClassVar[frozenset[str]] = frozenset({"count", "exception", "message", "crash", "sites"})

    count: int
    exception: str | None
    message: str = Field(
        description="The head of the masked first line, as a group's `message`, less a leading name of "
        "`exception` (`pkg.errors.ParseError: `): at most 64 characters, the last an ellipsis when cut."
    )
    crash: str | None = Field(description="Its first assertion site, file:line.")
    sites: int = Field(1, description="Assertion sites that fail with this message (the same check in many files).")


class Since(_Value):
    """Whether a group's tests newly fail, were already failing, or are flaky (ADR 0020)."""

    new: int = Field(0, description="Tests that newly fail: they passed in this project's previous run, or never ran.")
    preexisting: int = Field(0, description="Tests that were already failing, the same way, in the previous run.")
    flaky: int = Field(
        0, description="Tests that are flaky: they passed when repeated, or passed on a rerun (seen flaky here before)."
    )
    unknown: int = Field(
        0, description="Tests failing in the project's first run here: there is no earlier run to compare with."
    )
    suspect_flaky: int = Field(
        0,
        description="Tests that passed in the last run they ran in and fail now, while every function they ran "
        "(their test code included) has the same digest as that run read: nothing they run changed. Not proven "
        "flaky: a change outside Python code (data, dependencies, the environment) reads the same.",
    )

    def words(self) -> str:
        parts = [
            (self.new, "newly fail", "newly fails"),
            (self.preexisting, "were already failing", "was already failing"),
            (self.flaky, "are flaky", "is flaky"),
            (self.unknown, "no earlier run", "no earlier run"),
            (
                self.suspect_flaky,
                "are suspect flaky (passed last run; nothing they run changed)",
                "is suspect flaky (passed last run; nothing it runs changed)",
            ),
        ]
        shown = [(count, many, one) for count, many, one in parts if count]
        if len(shown) == 1:
            count, many, one = shown[0]
            return many if count > 1 else one
        return ", ".join(f"{count:,} {many if count > 1 else one}" for count, many, one in shown)


class FailureGroup(_Value):
    """Non-passing reports that fail the same way: the same root-cause signature (ADR 0014), or, where the
    evidence is strong, the same likely faulty function (a cause, ADR 0020)."""

    always_present: ClassVar[frozenset[str]] = frozenset({"id", "count", "representative"})

    id: str = Field(
        description="The group's id, made of its signature only (outcome, phase, exception, masked message and "
        "crash site): the same signature always has the same id, on every server and in the test double; "
        "a cause's (ADR 0020), of its culprit's file and function. get_test_run takes it."
    )
    count: int = Field(description="How many reports share the signature.")
    # A group of one is its report under the group's id: the signature and the members would only
    # repeat the representative, and are left out (ADR 0020's budget).
    outcome: Outcome | None = Field(None, description="Left out of a group of one: its representative's.")
    phase: Phase | None = Field(None, description="Left out of a group of one: its representative's.")
    exception: str | None = Field(None, description="The exception's type name; null when the report gives none.")
    message: str = Field(
        "",
        description="The first line of the message as the signature reads it: numbers, quoted literals, "
        "addresses, temporary paths and parameter ids masked (<n>, <str>, <addr>, <tmp>, <param>).",
    )
    crash: str | None = Field(
        None, description="file:line of the deepest frame in the project's code (else the test's own location)."
    )
    title: str = Field("", description="The signature in words, e.g. `180 tests fail the same way: ValueError in ...`.")
    representative: ReportedTest = Field(
        description="The first member's report as the text shows it (failing lines, E lines, frames, the crash "
        "line, the last lines captured), at most 1.5 KB; the whole report: get_test_run with node_ids."
    )
    members: tuple[str, ...] = Field(
        (), description="The members' node ids, in run order, compressed where a pattern allows (see `compressed`)."
    )
    compressed: str = Field("", description="How `members` was compressed; empty when it lists every node id as is.")
    omitted_members: int = Field(
        0,
        description="Member node ids that `members` leaves out: in an answer whose run is kept, a group whose entries "
        "run past 240 characters lists its first ones within 120; get_test_run with run_id and this group's id "
        "pages through every member.",
    )
    culprit: Culprit | None = Field(
        None, description="The function these failures most likely come from; null when the evidence is weak."
    )
    symptoms: tuple[Symptom, ...] = Field(
        (),
        description="A cause's ways of failing, by assertion site, most first, at most 6; empty for a single "
        "signature.",
    )
    omitted_symptoms: int = Field(
        0,
        description="A cause's rarer ways of failing that `symptoms` leaves out; get_test_run with this group's id "
        "pages through every member.",
    )
    since: Since | None = Field(None, description="Whether its tests newly fail, were already failing, or are flaky.")
    blocked: str | None = Field(
        None,
        description="Under --sandbox: the group's failure was the sandbox's doing (its first member's), e.g. "
        "`connect 127.0.0.1:5432; --sandbox-network allows it`; absent otherwise.",
    )


class SkipReason(_Value):
    """Skipped or xfailed reports that give the same reason."""

    always_present: ClassVar[frozenset[str]] = frozenset({"outcome", "reason", "count"})

    outcome: Literal["skipped", "xfailed"]
    reason: str = Field(description="The reason as pytest gives it, without its `Skipped: ` prefix.")
    count: int


class CollectionError(_Value):
    """A file or node that pytest could not collect."""

    node_id: str
    message: str = Field(description="The exception line, e.g. `ModuleNotFoundError: No module named 'x'`.")
    traceback: str | None = None


class CollectedTest(_Value):
    node_id: str
    file: str
    line: int | None = Field(None, description="1-based line of the test definition, when pytest knows it.")
    markers: tuple[str, ...] = ()


class CoverageFile(_Value):
    file: str
    percent: float
    missing: str = Field("", description="Missing line ranges, e.g. `12-15, 40`; cut with a marker when long.")


class CoverageReport(_Value):
    """pytest-cov's measurement: the total, and the files with the lowest coverage first."""

    percent: float
    files: tuple[CoverageFile, ...] = ()
    files_omitted: int = Field(0, description="Measured files not listed, to stay within budget.")


RanEverything = Literal["no_data", "packages_changed", "files_changed", "files_unrecorded"]
"""Why an affected run ran every selected test (ADR 0017)."""


class AffectedRun(_Value):
    """With affected=true: what pytest-testmon selected, and what it left out."""

    always_present: ClassVar[frozenset[str]] = frozenset({"run", "not_run"})

    run: int = Field(0, description="Tests run: those affected by changes since the last affected run.")
    not_run: int = Field(0, description="Tests left out as unaffected: they passed when they last ran.")
    ran_everything: RanEverything | None = Field(
        None,
        description="Why every selected test ran: 'no_data' (the first affected run, which records the data), "
        "'packages_changed' (the target environment's packages changed), 'files_changed' (files pytest-testmon "
        "cannot see, those not Python, changed since the last affected run: see changed_files), "
        "'files_unrecorded' (no record yet of those files).",
    )
    changed_files: tuple[str, ...] = Field(
        (), description="With files_changed: the changed files, relative to the root, at most 10, by path."
    )
    changed_file_count: int = Field(0, description="With files_changed: how many files changed, listed or not.")

    def line(self) -> str:
        """The answer's sentence: what ran, what did not, and why that can be trusted."""
        ran = f"ran everything ({self.run:,} test{'' if self.run == 1 else 's'})"
        if self.ran_everything == "no_data":
            return f"first affected run, no data yet: {ran} and recorded what each test uses"
        if self.ran_everything == "packages_changed":
            return f"the target environment's packages changed since the last affected run: {ran}"
        if self.ran_everything == "files_changed":
            more = self.changed_file_count - len(self.changed_files)
            names = ", ".join(self.changed_files) + (f", and {more:,} more" if more > 0 else "")
            count = f"{self.changed_file_count:,} file{'' if self.changed_file_count == 1 else 's'}"
            return f"{count} pytest-testmon cannot see changed since the last affected run ({names}): {ran}"
        if self.ran_everything == "files_unrecorded":
            return f"no record yet of the files pytest-testmon cannot see (those not Python): {ran} and recorded them"
        return (
            f"{self.run:,} affected test{'' if self.run == 1 else 's'} run; {self.not_run:,} unaffected not run "
            "(they passed when they last ran; affected=false runs everything)"
        )


class SlowTest(_Value):
    """One of a run's slowest tests."""

    node_id: str = Field(description="Exactly as pytest prints it; can be passed back to execute_tests.")
    duration: Seconds = Field(description="Seconds the test took: its setup, call and teardown summed.")


class RunFacts(_Value):
    """What pytest's process learns about a run besides its reports: the members of the reporter's
    one `facts` event (ADR 0019), validated here, carried by RunReport as one field, and answered
    by RunResult, which inherits these fields. A datum from inside pytest is one field here."""

    affected: AffectedRun | None = Field(None, description="With affected=true: what ran and what was left out.")
    slowest: tuple[SlowTest, ...] = Field(
        (),
        description="With slowest=N: the N slowest tests, slowest first (equal durations in run order), each "
        "test's setup, call and teardown summed; a test pytest-rerunfailures ran again, every attempt's.",
    )


class RunProgress(_Value):
    """How far a run that is still going has got."""

    always_present: ClassVar[frozenset[str]] = frozenset({"done", "total", "elapsed"})

    done: int = Field(0, description="Tests finished so far.")
    total: int = Field(0, description="Tests selected to run; 0 until pytest has collected them.")
    elapsed: Seconds = Field(0.0, description="Seconds since the run started.")


class RunPage(_Value):
    """Which of a finished run's non-passing reports an answer of get_test_run holds."""

    always_present: ClassVar[frozenset[str]] = frozenset({"offset", "total", "next_offset"})

    offset: int = Field(0, description="Position of the first report listed in `tests`.")
    total: int = Field(
        0,
        description="Reports selected: the run's non-passing reports, the node ids asked for, or the group's "
        "members. A page holds as many as fit the answer's size budget: page sizes vary.",
    )
    next_offset: int | None = Field(None, description="The offset of the next page; null when this is the last.")
    group: str | None = Field(None, description="With group: the group whose member ids this page lists.")


class StoppedProcesses(_Value):
    """Processes the tests started that were still alive when pytest ended, which the runner stopped."""

    count: int = Field(description="How many were stopped.")
    commands: tuple[str, ...] = Field(
        description="Their command lines, each cut to 80 characters; the first 10 when there were more."
    )


class LocalizationNote(_Value):
    """How the culprits were found, or why they could not be (ADR 0020)."""

    always_present: ClassVar[frozenset[str]] = frozenset({"repeated", "seconds"})

    recorder: str = Field(
        "", description="What recorded the functions each test ran: `sys.monitoring`, `sys.setprofile`."
    )
    repeated: int = Field(description="Tests the second pass ran, failing ones first.")
    seconds: Seconds = Field(description="Seconds the second pass took.")
    reason: str = Field("", description="Why no culprit is named, or why the pass stopped early; empty when neither.")


class _RunAnswer(_Value):
    """The answer to execute_tests when pytest ran to completion (exit code 0, 1 or 5), or, with
    `status` "running", how far a run that goes on after the call has got.

    The exit code, every count, `tests` and `collection_errors` are always there, zeros and
    empty lists included; the extras (`command`, `text_output`, `omitted_tests`, `coverage`,
    `stopped_processes`)
    are left out at their default, and so are `status`, `run_id` and `progress` in a finished
    answer.
    """

    always_present: ClassVar[frozenset[str]] = frozenset(
        {"exit_code", "summary", "groups", "reasons", "tests", "collection_errors"}
    )

    status: Literal["finished", "running", "cancelled"] = Field(
        "finished",
        description="'running': the run goes on after this answer, and get_test_run with run_id gives its result; "
        "'cancelled': get_test_run stopped it, with every process it started. Left out of a finished answer.",
    )
    run_id: str | None = Field(
        None,
        description="The run's id for get_test_run: with status 'running' or 'cancelled', and in a finished answer "
        "whose run had non-passing tests (their full reports are kept for the server's --run-ttl).",
    )
    progress: RunProgress | None = Field(
        None, description="With status 'running' or 'cancelled': tests done out of the total."
    )
    exit_code: int | None = Field(
        description="0: all passed, 1: some failed, 5: no tests collected, 2: pytest-xdist stopped the run at its "
        "failure limit (failfast, maxfail, -x); null while running or when cancelled."
    )
    summary: Summary = Field(
        description="pytest's counts; while running, the counts of the tests finished so far, from their reports."
    )
    groups: tuple[FailureGroup, ...] = Field(
        (),
        description="Failures, errors and xpasses grouped by root-cause signature, largest group first, each with "
        "one full report; empty with detail='summary'.",
    )
    reasons: tuple[SkipReason, ...] = Field(
        (), description="Skips and xfails grouped by reason, largest first; empty with detail='summary'."
    )
    tests: tuple[ReportedTest, ...] = Field(
        (),
        description="Every report with detail='all'; by default only what `groups` and `reasons` do not cover (a "
        "test that passed on a rerun); none with 'summary'.",
    )
    collection_errors: tuple[CollectionError, ...] = ()
    command: tuple[str, ...] = Field(
        (), description="The argv that ran; left out of a clean run's answer unless detail='all'."
    )
    text_output: str = Field(
        "", description="The tail of pytest's terminal output; left out of a clean run's answer unless detail='all'."
    )
    omitted_tests: int = Field(
        0, description="Test reports left out of `tests` to keep the response within its size budget."
    )
    omitted_groups: int = Field(
        0,
        description="The smallest groups left out of `groups` to keep the response within its size budget; "
        "get_test_run with run_id reaches them.",
    )
    omitted_reasons: int = Field(
        0,
        description="Skip and xfail reasons left out of `reasons`, the rarest, past the 10 most common (the 3 "
        "most common when tests failed); the summary still counts their tests, and detail='all' lists every "
        "report.",
    )
    coverage: CoverageReport | None = Field(None, description="With coverage=true: totals and the worst files.")
    stopped_processes: StoppedProcesses | None = Field(
        None,
        description="Processes the tests left running (a server started in its own session, a daemon), "
        "stopped when pytest ended; left out when there were none.",
    )
    page: RunPage | None = Field(None, description="In get_test_run's answer with node_ids or offset: the page.")
    notes: tuple[str, ...] = Field((), description="What the server did that the call did not ask for, in words.")
    culprits: tuple[Culprit, ...] = Field(
        (),
        description="The functions the failures most likely come from, at most 3, best first (ADR 0020); empty "
        "when nothing failed or the evidence is weak.",
    )
    localization: LocalizationNote | None = Field(
        None, description="With failures: how the culprits were found, or why none is named."
    )
    changed_untested: tuple[str, ...] = Field(
        (),
        description="Functions (`file::name`) changed since an earlier run here that no test of this run "
        "entered, at most 5 (ADR 0020): an edit the suite passes may still be untried. Only a run that "
        "records itself tells (Python 3.12 and later).",
    )
    members: tuple[str, ...] = Field(
        (), description="In get_test_run's answer with group: this page of the group's member ids."
    )


class RunResult(RunFacts, _RunAnswer):
    # The answer's own fields, then the facts of the run (RunFacts' fields, after its own in the
    # schema and on the wire): a fact added to RunFacts is a field of the answer, with no copy here.
    __doc__ = _RunAnswer.__doc__


class ModuleCount(_Value):
    """How many of the collected tests one file holds."""

    always_present: ClassVar[frozenset[str]] = frozenset({"file", "tests"})

    file: str = Field(description="The file as node ids start with it; discover_tests' `path` takes it.")
    tests: int


def count_by_module(files: Iterable[str]) -> tuple[ModuleCount, ...]:
    """Tests per file, in the order the files first appear."""
    return tuple(ModuleCount(file=file, tests=count) for file, count in Counter(files).items())


class DiscoveryResult(_Value):
    """The answer to discover_tests: tests per file, the collected tests in collection order, and every
    collection error."""

    always_present: ClassVar[frozenset[str]] = frozenset(
        {"exit_code", "total", "deselected", "modules", "tests", "collection_errors"}
    )

    exit_code: int
    total: int
    deselected: int = 0
    modules: tuple[ModuleCount, ...] = Field(
        (), description="Every file with collected tests and how many, in collection order: the map before the ids."
    )
    omitted_modules: int = Field(0, description="Files left out of `modules` (the last ones) to stay within budget.")
    tests: tuple[CollectedTest, ...] = ()
    collection_errors: tuple[CollectionError, ...] = ()
    command: tuple[str, ...]
    omitted_tests: int = Field(
        0,
        description="Collected tests left out of `tests` (the last ones) to keep the response within its size "
        "budget; `total` still counts them. Narrow with path, keywords or markers to see them.",
    )
