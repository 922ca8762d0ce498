"""Read the reporter plugin's JSON-lines file into domain values, with a bounded size."""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic import ValidationError

from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
from pytest_mcp.adapters.pytest_subprocess.untrusted import open_untrusted, read_untrusted
from pytest_mcp.adapters.structlog_logging import routed_logger
from pytest_mcp.domain.models import (
    CollectedTest,
    CollectionError,
    CoverageFile,
    CoverageReport,
    ModuleCount,
    ReportedTest,
    RunFacts,
    Summary,
)
from pytest_mcp.ports.progress import ProgressSink
from pytest_mcp.ports.worker import Inline, Worker

_log = routed_logger("pytest_mcp.runner")


@dataclass
class ParsedReport:
    summary: Summary | None = None
    tests: list[ReportedTest] = field(default_factory=list)
    items: list[CollectedTest] = field(default_factory=list)
    modules: list[ModuleCount] = field(default_factory=list)
    collection_errors: list[CollectionError] = field(default_factory=list)
    deselected: int = 0
    reproduce: tuple[str, ...] = ()  # options that repeat a plugin's seed or order (pytest-randomly)
    facts: RunFacts = field(default_factory=RunFacts)


def _event(raw: bytes) -> tuple[str | None, dict[str, Any]]:
    """(kind, fields) of one line of the report; (None, {}) for a line that is not an event."""
    try:
        event = json.loads(raw)
    except ValueError:  # a run killed mid-write leaves a partial last line
        return None, {}
    if not isinstance(event, dict):
        return None, {}
    kind = event.pop(protocol.EVENT, None)
    return (kind if isinstance(kind, str) else None), event


_LAST_EVENTS = (protocol.FACTS, protocol.SUMMARY)
"""The report's last lines, in this order: still read past the byte budget."""


_TAIL_BYTES = 1024 * 1024
"""Past the budget, how much of the report's end is read for its last lines."""


def read_report(path: Path, max_bytes: int) -> ParsedReport:
    """Parse the report; past `max_bytes` only its last lines, the facts and the summary, are still read.

    The report is in the run's private directory, which the tests can write: it is opened as
    untrusted (`open_untrusted`), and UntrustedFileRefused says why it was not read.
    """
    parsed = ParsedReport()
    try:
        handle = open_untrusted(path)
    except FileNotFoundError:
        return parsed
    consumed = 0
    with handle:
        while raw := handle.readline(max_bytes - consumed + 1):
            consumed += len(raw)
            if consumed > max_bytes:
                break
            if not raw.startswith(protocol.PROGRESS_START):  # one a test, and only for the follower
                _apply(parsed, *_event(raw))
        if consumed > max_bytes:
            handle.seek(max(consumed, handle.seek(0, 2) - _TAIL_BYTES))
            last = [line for line in handle.read(_TAIL_BYTES).split(b"\n") if line][-len(_LAST_EVENTS) :]
            for raw in last:
                kind, event = _event(raw)
                if kind in _LAST_EVENTS:
                    _apply(parsed, kind, event)
    return parsed


def _apply(parsed: ParsedReport, kind: str | None, event: dict[str, Any]) -> None:
    if kind == protocol.TEST:
        parsed.tests.append(ReportedTest.model_validate(event))
    elif kind == protocol.ITEM:
        parsed.items.append(CollectedTest.model_validate(event))
    elif kind == protocol.MODULES:
        parsed.modules = [ModuleCount(file=str(file), tests=int(tests)) for file, tests in event["modules"]]
    elif kind == protocol.COLLECT_ERROR:
        parsed.collection_errors.append(CollectionError.model_validate(event))
    elif kind == protocol.SUMMARY:
        counts = event["counts"]
        parsed.deselected = counts["deselected"]
        parsed.reproduce = tuple(str(option) for option in event.get("reproduce", ()))
        parsed.summary = Summary.from_counts(counts, total=event["total"], duration=event["duration"])
    elif kind == protocol.FACTS:
        parsed.facts = _facts(event)


def _facts(event: dict[str, Any]) -> RunFacts:
    """The facts event, validated by the one model whose fields its members are. Facts are extras
    beside pytest's counts: an event of another version, or one that does not fit, is logged and
    read as no facts, and the run's result stands."""
    version = event.pop("v", None)
    if version != protocol.FACTS_VERSION:
        _log.warning("facts_version_unknown", version=version, expected=protocol.FACTS_VERSION)
        return RunFacts()
    try:
        return RunFacts.model_validate(event)
    except ValidationError as exc:
        _log.warning("facts_unreadable", errors=exc.errors(include_url=False, include_input=False))
        return RunFacts()


class ProgressFollower:
    """Follows the report while pytest writes it and forwards progress events and listed test
    reports to a sink.

    Reads only the bytes added since the last poll, and of the progress events in them (one a
    test) parses and forwards the last only. Reading and parsing more than INLINE_BYTES is the
    `worker`'s (a run with thousands of failures writes thousands of reports between two polls);
    forwarding is the event loop's. Progress is best-effort: a sink that fails (a client that went away) is logged
    and never disturbs the run.

    What a poll read but did not forward is kept for the next (`_unsent`): the follower is cancelled
    as pytest exits, perhaps while a slow client takes a notification, and those bytes are no
    longer in the file for the run's final poll. A cancellation is never held up by a client that
    stopped reading.
    """

    POLL_SECONDS = 0.1
    MAX_POLL_BYTES = 4 * 1024 * 1024  # a poll's read: the rest waits for the next
    INLINE_BYTES = 16 * 1024

    def __init__(self, path: Path, sink: ProgressSink, worker: Worker | None = None) -> None:
        self._path = path
        self._sink = sink
        self._worker = worker or Inline()
        self._position = 0
        self._pending = b""
        self._total = 0
        self._unsent: collections.deque[tuple[str | None, dict[str, Any] | ReportedTest]] = collections.deque()

    async def follow(self) -> None:
        while True:
            await anyio.sleep(self.POLL_SECONDS)
            await self.poll()

    async def poll(self) -> None:
        try:
            added = self._path.lstat().st_size - self._position
        except OSError:
            added = 0
        # A few progress lines, most polls, are read where we are: a trip to a thread would cost
        # more than it saves, and on a loaded machine every thread wanting the GIL delays the loop.
        if added <= self.INLINE_BYTES:
            self._take_new_events()
        else:  # kept by the thread itself: a cancelled caller still waits for it, then drops what it returns
            await self._worker.run(self._take_new_events)
        while self._unsent:
            await self._forward(*self._unsent[0])
            self._unsent.popleft()

    def _take_new_events(self) -> None:
        self._unsent.extend(self._new_events())

    def _new_events(self) -> list[tuple[str | None, dict[str, Any] | ReportedTest]]:
        """What the bytes added since the last poll say, to forward in order."""
        try:
            with open_untrusted(self._path) as handle:
                handle.seek(self._position)
                chunk = handle.read(self.MAX_POLL_BYTES)
        except OSError:  # not there yet, or not a file to read (the run's end says so)
            return []
        self._position += len(chunk)
        *lines, self._pending = (self._pending + chunk).split(b"\n")
        if len(self._pending) > self.MAX_POLL_BYTES:  # no line is that long: not one of ours
            self._pending = b""
        progress = None
        collected = False
        events: list[tuple[str | None, dict[str, Any] | ReportedTest]] = []
        for line in lines:
            if line.startswith(protocol.PROGRESS_START):
                progress = line  # only the last of them is forwarded
                continue
            kind, event = _event(line)
            if kind == protocol.COLLECTED:
                self._total, collected = event["total"], True
            elif kind == protocol.TEST:
                try:
                    events.append((kind, ReportedTest.model_validate(event)))
                except ValidationError:  # best-effort, as forwarding is
                    _log.debug("progress_dropped", exc_info=True)
            elif kind == protocol.PROGRESS:
                events.append((kind, event))
        if progress is not None:
            events.append(_event(progress))
        elif collected:  # collected, no test done yet: the total is known ("0 of 120", not "0 of ?")
            events.append((protocol.PROGRESS, {"done": 0, "failed": 0}))
        return events

    async def _forward(self, kind: str | None, event: dict[str, Any] | ReportedTest) -> None:
        try:
            if isinstance(event, ReportedTest):
                await self._sink.reported(event)
            elif kind == protocol.PROGRESS:
                await self._sink.update(event["done"], max(self._total, event["done"]), event["failed"])
        except Exception:  # best-effort by contract; the run's result must not depend on it
            _log.debug("progress_dropped", exc_info=True)


def read_coverage(path: Path, root: Path, max_bytes: int = 64 * 1024 * 1024) -> CoverageReport | None:
    """pytest-cov's JSON report: every project file's percentage and missing lines, and the total.

    Files outside the root are left out (a bare `--cov` also traces our own reporter, which
    runs from a temporary directory), and the total is recomputed over the rest with
    coverage.py's own formula: covered lines and branches over statements and branches.
    """
    try:
        data = json.loads(read_untrusted(path, max_bytes))
        kept = {
            name: entry
            for name, entry in data.get("files", {}).items()
            if not Path(name).is_absolute() or Path(name).is_relative_to(root)
        }
        files = tuple(
            CoverageFile(
                file=name,
                percent=round(float(entry["summary"]["percent_covered"]), 2),
                missing=line_ranges(entry.get("missing_lines", [])),
            )
            for name, entry in sorted(kept.items())
        )
        summaries = [entry["summary"] for entry in kept.values()]
        covered = sum(s.get("covered_lines", 0) + s.get("covered_branches", 0) for s in summaries)
        measurable = sum(s.get("num_statements", 0) + s.get("num_branches", 0) for s in summaries)
        percent = 100.0 * covered / measurable if measurable else 100.0
        return CoverageReport(percent=round(percent, 2), files=files)
    except (OSError, ValueError, KeyError, TypeError):
        _log.warning("coverage_report_unreadable", exc_info=True)
        return None


def line_ranges(lines: list[int]) -> str:
    """`[1, 2, 3, 7, 9, 10]` as `1-3, 7, 9-10`."""
    ranges: list[str] = []
    start = previous = None
    for line in sorted(lines):
        if start is None:
            start = previous = line
        elif line == previous + 1:  # type: ignore[operator]
            previous = line
        else:
            ranges.append(f"{start}" if start == previous else f"{start}-{previous}")
            start = previous = line
    if start is not None:
        ranges.append(f"{start}" if start == previous else f"{start}-{previous}")
    return ", ".join(ranges)
