"""What a test runner is asked to do, and the raw facts it reports back."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from pytest_mcp.domain.localization import CodeState, Spectrum
from pytest_mcp.domain.models import (
    CollectedTest,
    CollectionError,
    CoverageReport,
    ModuleCount,
    ReportedTest,
    RunFacts,
    Summary,
    _Value,
)

TerminationKind = Literal[
    "exited",
    "signalled",
    "timed_out",
    "pytest_unavailable",
    "busy",
    "plugin_missing",
    "option_refused",
    "command_too_long",
    "report_unreadable",
]


class RunSpec(_Value):
    """A fully resolved pytest run: every default applied, every value validated."""

    node_ids: tuple[str, ...] = ()
    markers: str | None = None
    keywords: str | None = None
    maxfail: int | None = None
    verbosity: int = -1  # `-q`: what the request defaults to
    show_capture: bool = True
    timeout: float = 300.0
    include_passed: bool = False
    last_failed: bool = False
    failed_first: bool = False
    workers: int | Literal["auto"] | None = None
    coverage: bool = False
    affected: bool = False
    progress: bool = False
    facts: dict[str, int] = Field(
        default_factory=dict,
        description="The facts the answer asks pytest's process for, by their RunFacts field, each with its "
        "figure (slowest: how many tests); the reporter gathers them and writes them in its facts event.",
    )

    @field_validator("facts")
    @classmethod
    def _facts_are_run_facts(cls, value: dict[str, int]) -> dict[str, int]:
        unknown = sorted(set(value) - set(RunFacts.model_fields))
        if unknown:
            raise ValueError(f"{', '.join(unknown)} is not a field of RunFacts")
        return value


class LocalizeSpec(_Value):
    """A second pass after a run with failures (ADR 0020): its failing tests again, then at most `others`
    of the rest of their modules, recording the functions each test runs. What it runs is counted, not
    timed, so that the same failures record the same tests at any load; `seconds` is only a safety."""

    run: RunSpec
    failing: tuple[str, ...] = Field(description="The failing tests' node ids, in run order: run first.")
    modules: tuple[str, ...] = Field(description="Their modules: what the pass collects.")
    others: int = Field(
        ge=0, description="At most this many of their modules' other tests, the first by file and line, run after."
    )
    seconds: float = Field(gt=0, description="The pass's safety limit, start-up included: it is killed there.")

    @property
    def last_start(self) -> float:
        """Seconds into the pass after which no test starts: its last quarter, at most 2 s, is left
        for the test under way and pytest's closing, so that a pass usually ends on its own."""
        return self.seconds - min(2.0, self.seconds / 4)


class CollectSpec(_Value):
    """A fully resolved collection (`--collect-only`): what discover_tests asks a runner for."""

    path: str | None = None
    markers: str | None = None
    keywords: str | None = None
    timeout: float = 300.0
    max_listed: int | None = Field(
        None,
        ge=0,
        description="Describe at most this many tests, the first in collection order; count the rest. "
        "None describes every test.",
    )


class Termination(_Value):
    """How the pytest process ended."""

    kind: TerminationKind
    exit_code: int | None = None
    signal: str | None = Field(None, description="Signal name, e.g. SIGSEGV, when kind is 'signalled'.")
    detail: str | None = Field(
        None,
        description="Why pytest could not be started, why the run had to wait, (plugin_missing) "
        "the distribution that is missing, e.g. `pytest-xdist`, (option_refused) `FIELD: REASON` for a "
        "request the project's configuration cannot honour, (command_too_long) why the OS would refuse the "
        "command, or (report_unreadable) why a file the run left was not read, e.g. `report.jsonl is not a "
        "regular file (a FIFO)`.",
    )


class RunReport(_Value):
    """Everything a runner observed about one run. `summary` is None when pytest never finished a session."""

    termination: Termination
    command: tuple[str, ...]
    duration: float
    summary: Summary | None = None
    tests: tuple[ReportedTest, ...] = ()
    collection_errors: tuple[CollectionError, ...] = ()
    stdout: str = ""
    stderr: str = ""
    coverage: CoverageReport | None = None
    stopped_processes: tuple[str, ...] = Field(
        (), description="Command lines of the processes the tests left running, which were stopped at the end."
    )
    facts: RunFacts = Field(RunFacts(), description="What pytest's process learnt besides the reports (ADR 0019).")
    spectrum: Spectrum | None = Field(
        None,
        description="The functions each test entered, recorded by the run itself (ADR 0020); None where the "
        "interpreter cannot record them (before Python 3.12): a second pass records them then.",
    )
    code: CodeState | None = Field(
        None, description="The digests of the functions of the project files the run imported (ADR 0020)."
    )
    passed: tuple[str, ...] | None = Field(
        None,
        description="The tests that passed, as `history.passed_key`s, where the run recorded them; None: the "
        "passing tests among `tests` are all there is.",
    )


class CollectionReport(_Value):
    termination: Termination
    command: tuple[str, ...]
    duration: float
    finished: bool = Field(False, description="True when pytest completed its collection session.")
    tests: tuple[CollectedTest, ...] = ()
    unlisted: int = Field(0, description="Collected tests after `tests`, counted but not described (max_listed).")
    modules: tuple[ModuleCount, ...] = Field((), description="Every collected test counted by file, listed or not.")
    deselected: int = 0
    collection_errors: tuple[CollectionError, ...] = ()
    stdout: str = ""
    stderr: str = ""
