"""The test-runner port."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from pytest_mcp.domain.runs import CollectionReport, CollectSpec, LocalizeSpec, RunReport, RunSpec
from pytest_mcp.ports.progress import ProgressSink

if TYPE_CHECKING:
    from pytest_mcp.domain.localization import Spectrum


class TestRunner(Protocol):
    """Runs or collects a project's tests and reports what happened, without judging it.

    Promises:
    - `run` and `collect` return a report for every way pytest can end: a normal exit, a
      signal, a timeout (`termination.kind == "timed_out"`), or pytest being unavailable.
      Classifying those endings is the use case's job, not the runner's.
    - When the call is cancelled, everything the runner started is stopped before the
      cancellation propagates; nothing outlives the call.
    - Output held in the report is bounded, with explicit truncation markers.

    Raises only on its own bugs. It never modifies the project beyond what pytest writes.
    """

    async def run(self, spec: RunSpec, progress: ProgressSink | None = None) -> RunReport:
        """Run the tests; when `progress` is given, report to it as tests finish (best-effort)."""
        ...

    async def collect(self, spec: CollectSpec) -> CollectionReport: ...

    async def localize(self, spec: LocalizeSpec) -> Spectrum | str:
        """A second pass (ADR 0020): the spectrum it recorded, each function's digest now and at git's
        HEAD where there is one; or, when it recorded nothing, why, in a few words. Never longer than
        `spec.seconds` and a moment to stop; nothing it starts outlives it."""
        ...
