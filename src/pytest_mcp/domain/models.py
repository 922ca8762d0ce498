"""Values the use cases speak in: what pytest reported, and what we answer with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Outcome = Literal["passed", "failed", "skipped", "xfailed", "xpassed", "error"]
Phase = Literal["setup", "call", "teardown"]
Detail = Literal["summary", "failures", "all"]


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Summary(_Value):
    """Counts exactly as pytest's terminal summary line states them.

    `total` is the number of tests selected to run (collected minus deselected). The other
    counts are per report, as pytest counts them, so a test that passes and then errors in
    teardown appears in both `passed` and `errors`.
    """

    total: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    xfailed: int = 0
    xpassed: int = 0
    errors: int = 0
    deselected: int = 0
    duration: float = Field(0.0, description="Seconds pytest spent in the session.")

    @classmethod
    def from_counts(cls, counts: Mapping[str, int], *, total: int, duration: float) -> Summary:
        """Build from counts keyed by pytest's outcome words (`error`, not `errors`); absent keys are 0."""
        return cls(
            total=total,
            passed=counts.get("passed", 0),
            failed=counts.get("failed", 0),
            skipped=counts.get("skipped", 0),
            xfailed=counts.get("xfailed", 0),
            xpassed=counts.get("xpassed", 0),
            errors=counts.get("error", 0),
            deselected=counts.get("deselected", 0),
            duration=duration,
        )


class ReportedTest(_Value):
    """One test report: a test's outcome in one phase."""

    node_id: str = Field(description="Exactly as pytest prints it; can be passed back to execute_tests.")
    outcome: Outcome
    phase: Phase
    location: str | None = Field(None, description="file:line of the test function, relative to the root.")
    message: str | None = None
    traceback: str | None = None
    duration: float = 0.0
    stdout: str | None = Field(None, description="Captured stdout, when show_capture is on.")
    stderr: str | None = Field(None, description="Captured stderr, when show_capture is on.")

    @property
    def is_failure(self) -> bool:
        return self.outcome in ("failed", "error")


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


class RunResult(_Value):
    """The answer to execute_tests when pytest ran to completion (exit code 0, 1 or 5)."""

    exit_code: int = Field(description="0: all passed, 1: some failed, 5: no tests collected.")
    summary: Summary
    tests: tuple[ReportedTest, ...] = Field(
        (), description="Non-passing reports by default; every report with detail='all'; none with 'summary'."
    )
    collection_errors: tuple[CollectionError, ...] = ()
    command: tuple[str, ...] = Field(description="The argv that ran.")
    text_output: str = Field("", description="The tail of pytest's terminal output, trimmed.")


class DiscoveryResult(_Value):
    """The answer to discover_tests: every collected test and every collection error."""

    exit_code: int
    total: int
    deselected: int = 0
    tests: tuple[CollectedTest, ...] = ()
    collection_errors: tuple[CollectionError, ...] = ()
    command: tuple[str, ...]
