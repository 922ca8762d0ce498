"""FakeTestRunner: a scripted, deterministic TestRunner for tests of the server and of agents."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, Self

from pytest_mcp.adapters.selection_expressions import ExpressionError, compile_expression
from pytest_mcp.domain.models import CollectedTest, CollectionError, Outcome, ReportedTest, Summary
from pytest_mcp.domain.runs import CollectionReport, CollectSpec, RunReport, RunSpec, Termination
from pytest_mcp.ports.test_runner import TestRunner

FailureKind = Literal["timeout", "crash", "collection_error", "usage_error", "internal_error"]


@dataclass(frozen=True)
class ScriptedTest:
    node_id: str
    outcome: Outcome = "passed"
    message: str | None = None
    traceback: str | None = None
    duration: float = 0.0
    markers: tuple[str, ...] = ()
    stdout: str | None = None
    line: int | None = None

    @property
    def file(self) -> str:
        return self.node_id.split("::", 1)[0]

    def keywords(self) -> set[str]:
        parts = self.node_id.split("::")
        names = {part.lower() for part in parts[1:]}
        names.add(parts[0].rsplit("/", 1)[-1].lower())
        names.update(marker.lower() for marker in self.markers)
        return names


class FakeTestRunner(TestRunner):
    """A TestRunner that plays back scripted tests instead of running pytest.

    Selection follows pytest: node ids select by exact id, by file, by directory or by
    node prefix; `keywords` (-k) match case-insensitively as substrings of a test's name,
    its parents' names and its markers; `markers` (-m) match marker names exactly. Both
    accept `and`, `or`, `not` and parentheses. Not modelled: marker arguments in `-m`
    (`mark(x=1)`), fixtures, and real durations.

    `fail_with(kind)` makes the next call end the way the real runner's would, so the use
    cases raise exactly the error a real run would produce. `calls` records every spec.
    """

    def __init__(self, tests: Iterable[ScriptedTest] = ()) -> None:
        self._tests: dict[str, ScriptedTest] = {}
        self._pending_failure: tuple[FailureKind, str | None] | None = None
        self.calls: list[RunSpec | CollectSpec] = []
        for test in tests:
            self._tests[test.node_id] = test

    def script(
        self,
        node_id: str,
        outcome: Outcome = "passed",
        message: str | None = None,
        traceback: str | None = None,
        duration: float = 0.0,
        markers: Iterable[str] = (),
        stdout: str | None = None,
        line: int | None = None,
    ) -> Self:
        """Add (or replace) a scripted test; returns the runner so calls can be chained."""
        self._tests[node_id] = ScriptedTest(
            node_id, outcome, message, traceback, duration, tuple(markers), stdout, line
        )
        return self

    def fail_with(self, kind: FailureKind, detail: str | None = None) -> Self:
        """Make the next run or collect end the way a real `kind` failure ends."""
        self._pending_failure = (kind, detail)
        return self

    async def run(self, spec: RunSpec) -> RunReport:
        self.calls.append(spec)
        command = self._command(spec.node_ids, spec.markers, spec.keywords)
        failure = self._consume_failure(command)
        if failure is not None:
            return failure
        selected, deselected, usage_error = self._select(spec.node_ids, spec.markers, spec.keywords)
        if usage_error is not None:
            return self._usage_error(command, usage_error)
        reports: list[ReportedTest] = []
        failures = 0
        for test in selected:
            if spec.maxfail is not None and failures >= spec.maxfail:
                break
            reports.append(self._report(test))
            failures += test.outcome in ("failed", "error")
        counts = Counter[str](report.outcome for report in reports)
        counts["deselected"] = deselected
        summary = Summary.from_counts(counts, total=len(selected), duration=round(sum(r.duration for r in reports), 6))
        exit_code = 5 if not selected else (1 if failures else 0)
        tests = tuple(r for r in reports if spec.include_passed or r.outcome != "passed")
        return RunReport(
            termination=Termination(kind="exited", exit_code=exit_code),
            command=command,
            duration=summary.duration,
            summary=summary,
            tests=tests,
            stdout=f"{exit_code=} (fake run of {len(reports)} scripted tests)\n",
        )

    async def collect(self, spec: CollectSpec) -> CollectionReport:
        self.calls.append(spec)
        targets = (spec.path,) if spec.path else ()
        command = self._command(targets, spec.markers, spec.keywords, "--collect-only")
        failure = self._consume_failure(command)
        if failure is not None:
            return CollectionReport(
                termination=failure.termination,
                command=command,
                duration=0.0,
                finished=failure.summary is not None,
                collection_errors=failure.collection_errors,
                stderr=failure.stderr,
            )
        selected, deselected, usage_error = self._select(targets, spec.markers, spec.keywords)
        if usage_error is not None:
            report = self._usage_error(command, usage_error)
            return CollectionReport(termination=report.termination, command=command, duration=0.0, stderr=report.stderr)
        return CollectionReport(
            termination=Termination(kind="exited", exit_code=0 if selected else 5),
            command=command,
            duration=0.0,
            finished=True,
            tests=tuple(
                CollectedTest(node_id=t.node_id, file=t.file, line=t.line, markers=t.markers) for t in selected
            ),
            deselected=deselected,
        )

    def _select(
        self, targets: Iterable[str], markers: str | None, keywords: str | None
    ) -> tuple[list[ScriptedTest], int, str | None]:
        targets = list(targets)
        candidates = [t for t in self._tests.values() if not targets or any(_selects(x, t.node_id) for x in targets)]
        if targets and not candidates:
            return [], 0, f"ERROR: not found: {targets[0]}"
        try:
            keyword_filter = compile_expression(keywords) if keywords else None
            marker_filter = compile_expression(markers) if markers else None
        except ExpressionError as exc:
            option = "-k" if keywords and str(exc).endswith(f"{keywords!r}") else "-m"
            return [], 0, f"ERROR: Wrong expression passed to '{option}': {exc}"
        selected = [
            test
            for test in candidates
            if (keyword_filter is None or keyword_filter(_keyword_matcher(test)))
            and (marker_filter is None or marker_filter(test.markers.__contains__))
        ]
        return selected, len(candidates) - len(selected), None

    def _consume_failure(self, command: tuple[str, ...]) -> RunReport | None:
        if self._pending_failure is None:
            return None
        kind, detail = self._pending_failure
        self._pending_failure = None
        if kind == "timeout":
            return RunReport(termination=Termination(kind="timed_out"), command=command, duration=0.0)
        if kind == "crash":
            return RunReport(
                termination=Termination(kind="signalled", signal=detail or "SIGSEGV"),
                command=command,
                duration=0.0,
                stderr="Fatal Python error: Segmentation fault\n",
            )
        if kind == "collection_error":
            error = CollectionError(
                node_id="tests/test_broken.py",
                message=detail or "ModuleNotFoundError: No module named 'missing'",
            )
            return RunReport(
                termination=Termination(kind="exited", exit_code=2),
                command=command,
                duration=0.0,
                summary=Summary(errors=1),
                collection_errors=(error,),
                stdout="!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n",
            )
        if kind == "usage_error":
            return self._usage_error(command, detail or "ERROR: file or directory not found: tests/missing.py")
        return RunReport(
            termination=Termination(kind="exited", exit_code=3),
            command=command,
            duration=0.0,
            stderr=f"INTERNALERROR> {detail or 'RuntimeError: scripted internal error'}\n",
        )

    @staticmethod
    def _usage_error(command: tuple[str, ...], line: str) -> RunReport:
        return RunReport(
            termination=Termination(kind="exited", exit_code=4),
            command=command,
            duration=0.0,
            stderr=line + "\n",
        )

    @staticmethod
    def _report(test: ScriptedTest) -> ReportedTest:
        failed = test.outcome in ("failed", "error")
        return ReportedTest(
            node_id=test.node_id,
            outcome=test.outcome,
            phase="setup" if test.outcome == "error" else "call",
            location=f"{test.file}:{test.line}" if test.line else test.file,
            message=test.message,
            traceback=test.traceback if failed else None,
            duration=test.duration,
            stdout=test.stdout if failed else None,
        )

    @staticmethod
    def _command(targets: Iterable[str], markers: str | None, keywords: str | None, *extra: str) -> tuple[str, ...]:
        argv = ["fake", "-m", "pytest", *extra]
        if markers:
            argv += ["-m", markers]
        if keywords:
            argv += ["-k", keywords]
        return (*argv, "--", *targets)


def _selects(target: str, node_id: str) -> bool:
    target = target.rstrip("/")
    return node_id == target or node_id.startswith((target + "::", target + "/"))


def _keyword_matcher(test: ScriptedTest) -> Callable[[str], bool]:
    names = test.keywords()
    return lambda identifier: any(identifier.lower() in name for name in names)
