"""Recordings: one real run kept as a FakeTestRunner script (`pytest-mcp record`), and read back.

The format is versioned JSON: `{"format": "pytest-mcp-recording", "version": 1, "root": ...,
"tests": [ScriptedTest, ...]}`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pytest_mcp.adapters.fake.script import ScriptedTest, ScriptError, scripted
from pytest_mcp.domain.discover_tests import DiscoverTests
from pytest_mcp.domain.execute_tests import ExecuteTests
from pytest_mcp.domain.models import CollectedTest, DiscoveryResult, ReportedTest, RunResult
from pytest_mcp.domain.requests import DiscoverTestsRequest, ExecuteTestsRequest, RequestPolicy
from pytest_mcp.ports.presenter import ResultPresenter

Result = RunResult | DiscoveryResult

RECORDING_FORMAT = "pytest-mcp-recording"
RECORDING_VERSION = 1


def recording_document(root: str, tests: Iterable[ScriptedTest]) -> dict[str, Any]:
    """A recording in its JSON shape: versioned, with one entry per test."""
    return {
        "format": RECORDING_FORMAT,
        "version": RECORDING_VERSION,
        "root": root,
        "tests": [test.model_dump(mode="json") for test in tests],
    }


def read_recording(source: str | PathLike[str] | Mapping[str, Any]) -> tuple[str, list[ScriptedTest]]:
    """(root, tests) of a recording: a path to its JSON file, or the loaded JSON.

    Raises FileNotFoundError for a missing file and ScriptError, naming the field, for anything
    that is not a version-1 pytest-mcp recording.
    """
    document: Any
    if isinstance(source, Mapping):
        where, document = "recording", source
    else:
        path = Path(source)
        where = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FileNotFoundError(
                f"no recording at {path}; make one with `pytest-mcp record --root DIR --out {path}`"
            ) from None
        try:
            document = json.loads(text)
        except ValueError as exc:
            raise ScriptError(f"{where}: not valid JSON ({exc})") from None
    return _parse(document, where)


def _parse(document: Any, where: str) -> tuple[str, list[ScriptedTest]]:
    if not isinstance(document, Mapping):
        raise ScriptError(f"{where}: a recording is a JSON object, not {type(document).__name__}")
    if document.get("format") != RECORDING_FORMAT:
        raise ScriptError(
            f"{where}: format: expected {RECORDING_FORMAT!r}, got {document.get('format')!r}; "
            "this is not a pytest-mcp recording"
        )
    if document.get("version") != RECORDING_VERSION:
        raise ScriptError(
            f"{where}: version: this pytest-mcp reads version {RECORDING_VERSION} recordings, "
            f"not {document.get('version')!r}"
        )
    unknown = sorted(set(document) - {"format", "version", "root", "tests"})
    if unknown:
        raise ScriptError(f"{where}: {unknown[0]}: unknown field; the fields are format, version, root, tests")
    root = document.get("root")
    if not isinstance(root, str) or not root:
        raise ScriptError(f"{where}: root: must be the recorded project's root directory, got {root!r}")
    entries = document.get("tests")
    if not isinstance(entries, list):
        raise ScriptError(f"{where}: tests: must be a list of tests, got {type(entries).__name__}")
    tests: list[ScriptedTest] = []
    problems: list[str] = []
    for index, entry in enumerate(entries):
        try:
            tests.append(scripted(entry, f"tests[{index}]"))
        except ScriptError as exc:
            problems.append(str(exc))
    if problems:
        raise ScriptError(f"{where}: " + "; ".join(problems))
    return root, tests


class DomainResults(ResultPresenter[Result]):
    """A presenter that hands the use case's result back unchanged, for callers inside the process."""

    def present_run(self, result: RunResult) -> Result:
        return result

    def present_discovery(self, result: DiscoveryResult) -> Result:
        return result

    def discovery_capacity(self) -> None:
        return None  # the recorder needs every test's line and markers


class RunRecorder:
    """Runs a project's default selection once and keeps every test as a replayable script entry.

    Rules:
    - It goes through the same use cases and request parsing as the tools: discovery first
      (for markers and lines), then one run with `detail="all"` (for every report).
    - A run that gives no result (collection errors, a timeout, a crash, a usage or internal
      error) raises ExecutionFailed, as the tool would; nothing is recorded.
    - Each test takes its outcome, phase and evidence from its first non-passing report (a
      setup error, a call failure, a teardown error); a teardown error after a pass keeps
      phase `teardown`, which replays as 1 passed and 1 error. A test that fails in its call
      *and* in teardown keeps only the call failure: a script holds one outcome per test.
    - The order is pytest's run order.
    """

    def __init__(
        self,
        execute_tests: ExecuteTests[Result],
        discover_tests: DiscoverTests[Result],
        policy: RequestPolicy,
    ) -> None:
        self._execute_tests = execute_tests
        self._discover_tests = discover_tests
        self._policy = policy

    async def record(self) -> dict[str, Any]:
        """The recording document (see `FakeTestRunner.from_recording`) for one real run."""
        discovery = await self._discover_tests.execute(DiscoverTestsRequest.parse({}, self._policy))
        run = await self._execute_tests.execute(ExecuteTestsRequest.parse({"detail": "all"}, self._policy))
        if not isinstance(discovery, DiscoveryResult) or not isinstance(run, RunResult):
            raise TypeError("RunRecorder needs use cases wired with the DomainResults presenter")
        collected = {test.node_id: test for test in discovery.tests}
        reports: dict[str, list[ReportedTest]] = {}
        for report in run.tests:
            reports.setdefault(report.node_id, []).append(report)
        tests = [_scripted(node_id, found, collected.get(node_id)) for node_id, found in reports.items()]
        return recording_document(str(Path(self._policy.root)), tests)


def _scripted(node_id: str, reports: list[ReportedTest], collected: CollectedTest | None) -> ScriptedTest:
    primary = next((report for report in reports if report.outcome != "passed"), reports[0])
    line = collected.line if collected is not None else _line_of(primary.location)
    fields: dict[str, Any] = {
        "node_id": node_id,
        "outcome": primary.outcome,
        "phase": primary.phase,
        "message": primary.message,
        "traceback": primary.traceback,
        "duration": round(sum(report.duration for report in reports), 6),
        "markers": collected.markers if collected is not None else (),
        "stdout": primary.stdout,
        "stderr": primary.stderr,
        "line": line,
    }
    try:
        return ScriptedTest.model_validate(fields)
    except ValidationError:
        # A phase a script cannot express (say, a skip in teardown): keep the outcome, not the phase.
        return ScriptedTest.model_validate({**fields, "phase": None})


def _line_of(location: str | None) -> int | None:
    if not location or ":" not in location:
        return None
    tail = location.rsplit(":", 1)[1]
    return int(tail) if tail.isdigit() and int(tail) > 0 else None
