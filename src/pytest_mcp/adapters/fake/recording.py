"""Recordings: one real run kept as a FakeTestRunner script (`pytest-mcp record`), and read back.

The format is versioned JSON. Version 3: `{"format": "pytest-mcp-recording", "version": 3,
"tests": [ScriptedTest, ...], "collection_errors": [{"node_id", "message", "traceback"}, ...],
"functions": {"shop/price.py::gross_price": {"lines": "4-9", "changed": true}, ...}}` (`"at_import":
true` for one that runs as the tests are collected, `"cached": true` for one behind a cache), a
test's `runs` naming the functions it runs (what a second pass records). Version 2 had no `functions`.
Paths are relative to the project's root, and wherever a text named the root itself (an
ImportError's module path, a fixture error's file), it says `<root>`, which a replay fills in with
its own root. Versions 1 (`root` given, no collection errors) and 2 are still read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pytest_mcp.adapters.fake.script import ROOT_MARK, ScriptedTest, ScriptError, scripted
from pytest_mcp.domain.discover_tests import DiscoverTests
from pytest_mcp.domain.execute_tests import ExecuteTests
from pytest_mcp.domain.models import CollectedTest, CollectionError, DiscoveryResult, ReportedTest, RunResult
from pytest_mcp.domain.requests import DiscoverTestsRequest, ExecuteTestsRequest, RequestPolicy
from pytest_mcp.ports.presenter import ResultPresenter

Result = RunResult | DiscoveryResult

RECORDING_FORMAT = "pytest-mcp-recording"
RECORDING_VERSION = 3
_FIELDS = {
    1: ("format", "version", "root", "tests"),
    2: ("format", "version", "tests", "collection_errors"),
    3: ("format", "version", "tests", "collection_errors", "functions"),
}
_TEXTS = ("message", "traceback", "stdout", "stderr")


@dataclass(frozen=True)
class Recording:
    """What a recording holds: the tests, in run order, the modules that could not be imported, and the
    functions the tests run (their lines, whether they changed), as `where` (its path) names it."""

    tests: list[ScriptedTest]
    collection_errors: list[CollectionError]
    functions: Mapping[str, Any]
    where: str


def _unrooted(text: Any, root: str | None) -> Any:
    """`text` with the root directory written as `<root>`, so the recording holds no absolute path."""
    if not isinstance(text, str) or not root or root == ".":
        return text
    return re.sub(re.escape(root.rstrip("/")) + r"(?=[/'\"\s:,)]|$)", ROOT_MARK, text)


def recording_document(
    tests: Iterable[ScriptedTest],
    collection_errors: Iterable[CollectionError] = (),
    functions: Mapping[str, Any] | None = None,
    *,
    root: str | None = None,
) -> dict[str, Any]:
    """A recording in its JSON shape: versioned, one entry per test, per collection error and per
    function with lines or a change."""
    entries = []
    for test in tests:
        # A recorded traceback names its crash site; `crash` and `outcomes` are for scripts, and older
        # readers forbid them: left out unless given.
        unset = {name for name in ("crash", "outcomes") if not getattr(test, name)}
        entry = test.model_dump(mode="json", exclude=unset or None)
        entries.append({key: _unrooted(value, root) if key in _TEXTS else value for key, value in entry.items()})
    return {
        "format": RECORDING_FORMAT,
        "version": RECORDING_VERSION,
        "tests": entries,
        "collection_errors": [
            {"node_id": e.node_id, "message": _unrooted(e.message, root), "traceback": _unrooted(e.traceback, root)}
            for e in collection_errors
        ],
        "functions": dict(functions or {}),
    }


def read_recording(source: str | PathLike[str] | Mapping[str, Any]) -> Recording:
    """The tests and collection errors of a recording: a path to its JSON file, or the loaded JSON.

    Raises FileNotFoundError for a missing file and ScriptError, naming the field, for anything
    that is not a version 1, 2 or 3 pytest-mcp recording.
    """
    document: Any
    if isinstance(source, Mapping):
        where, document = "recording", source
    elif isinstance(source, str | PathLike):
        if isinstance(source, str) and source.lstrip().startswith(("{", "[")):
            raise ScriptError(
                "source: this is JSON text, not the path of a recording; pass json.loads(text), or the file's path"
            )
        path = Path(source)
        where = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FileNotFoundError(
                f"no recording at {path}; make one with `pytest-mcp record --root DIR --out {path}`"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ScriptError(f"source: cannot read a recording from {where} ({type(exc).__name__}: {exc})") from None
        try:
            document = json.loads(text)
        except ValueError as exc:
            raise ScriptError(f"{where}: not valid JSON ({exc})") from None
    else:
        raise ScriptError(f"source: must be a recording's path or its loaded JSON, not {type(source).__name__}")
    return _parse(document, where)


def _parse(document: Any, where: str) -> Recording:
    if not isinstance(document, Mapping):
        raise ScriptError(f"{where}: a recording is a JSON object, not {type(document).__name__}")
    if document.get("format") != RECORDING_FORMAT:
        raise ScriptError(
            f"{where}: format: expected {RECORDING_FORMAT!r}, got {document.get('format')!r}; "
            "this is not a pytest-mcp recording"
        )
    version = document.get("version")
    if version not in _FIELDS or isinstance(version, bool):
        raise ScriptError(
            f"{where}: version: this pytest-mcp reads version 1 to {RECORDING_VERSION} recordings, not {version!r}"
        )
    unknown = sorted(set(document) - set(_FIELDS[version]))
    if unknown:
        raise ScriptError(f"{where}: {unknown[0]}: unknown field; the fields are {', '.join(_FIELDS[version])}")
    root: str | None = None
    if version == 1:
        root = document.get("root")
        if not isinstance(root, str) or not root:
            raise ScriptError(f"{where}: root: must be the recorded project's root directory, got {root!r}")
    entries = document.get("tests")
    if not isinstance(entries, list):
        raise ScriptError(f"{where}: tests: must be a list of tests, got {type(entries).__name__}")
    errors = document.get("collection_errors", [])
    if not isinstance(errors, list):
        raise ScriptError(f"{where}: collection_errors: must be a list, got {type(errors).__name__}")
    tests: list[ScriptedTest] = []
    collection_errors: list[CollectionError] = []
    problems: list[str] = []
    for index, entry in enumerate(entries):
        if root is not None and isinstance(entry, Mapping):  # version 1 kept the root in its texts
            entry = {key: _unrooted(value, root) if key in _TEXTS else value for key, value in entry.items()}
        try:
            tests.append(scripted(entry, f"tests[{index}]"))
        except ScriptError as exc:
            problems.append(str(exc))
    for index, entry in enumerate(errors):
        try:
            error = CollectionError.model_validate(entry)
            node = error.node_id
            if "::" in node or node.startswith(("/", "-")) or ".." in node.split("/") or not node.endswith(".py"):
                raise ValueError(f"node_id: {node!r} is not a test module's path relative to the root")
            collection_errors.append(error)
        except (ValidationError, ValueError) as exc:
            problems.append(f"collection_errors[{index}]: {str(exc).splitlines()[0]}")
    if problems:
        raise ScriptError(f"{where}: " + "; ".join(problems))
    functions = document.get("functions", {})
    if not isinstance(functions, Mapping):
        raise ScriptError(f"{where}: functions: must be an object of function key to its fields, got {functions!r}")
    return Recording(tests, collection_errors, functions, where)


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
      (for markers, lines and collection errors), then one run with `detail="all"` (for every
      report).
    - Modules that cannot be imported are recorded as collection errors (a replay breaks them
      the same way); the run then names the files that did collect, since pytest runs nothing
      while a selected module is broken.
    - Any other run that gives no result (a timeout, a crash, a usage or internal error) raises
      ExecutionFailed, as the tool would; nothing is recorded.
    - Each test takes its outcome, phase and evidence from its first non-passing report (a
      setup error, a call failure, a teardown error); a teardown error after a pass keeps
      phase `teardown`, which replays as 1 passed and 1 error. A test that fails in its call
      *and* in teardown keeps only the call failure: a script holds one outcome per test.
    - The order is pytest's run order. Texts name the root as `<root>`.
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
        if not isinstance(discovery, DiscoveryResult):
            raise TypeError("RunRecorder needs use cases wired with the DomainResults presenter")
        arguments: dict[str, Any] = {"detail": "all"}
        if discovery.collection_errors:
            arguments["node_ids"] = list(dict.fromkeys(test.file for test in discovery.tests))
        reports: dict[str, list[ReportedTest]] = {}
        if not discovery.collection_errors or arguments["node_ids"]:
            run = await self._execute_tests.execute(ExecuteTestsRequest.parse(arguments, self._policy))
            if not isinstance(run, RunResult):
                raise TypeError("RunRecorder needs use cases wired with the DomainResults presenter")
            for report in run.tests:
                reports.setdefault(report.node_id, []).append(report)
        collected = {test.node_id: test for test in discovery.tests}
        tests = [_scripted(node_id, found, collected.get(node_id)) for node_id, found in reports.items()]
        return recording_document(tests, discovery.collection_errors, root=str(Path(self._policy.root)))


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
