"""Read the reporter plugin's JSON-lines file into domain values, with a bounded size."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_mcp.domain.models import CollectedTest, CollectionError, ReportedTest, Summary

_SUMMARY_PREFIX = b'{"e": "summary"'


@dataclass
class ParsedReport:
    summary: Summary | None = None
    exit_code: int | None = None
    tests: list[ReportedTest] = field(default_factory=list)
    items: list[CollectedTest] = field(default_factory=list)
    collection_errors: list[CollectionError] = field(default_factory=list)
    deselected: int = 0
    skipped_events: int = 0


def read_report(path: Path, max_bytes: int) -> ParsedReport:
    """Parse the report; past `max_bytes` only the final summary is still read."""
    parsed = ParsedReport()
    if not path.exists():
        return parsed
    consumed = 0
    with path.open("rb") as handle:
        for raw in handle:
            consumed += len(raw)
            if consumed > max_bytes and not raw.startswith(_SUMMARY_PREFIX):
                parsed.skipped_events += 1
                continue
            try:
                event = json.loads(raw)
            except ValueError:  # a run killed mid-write leaves a partial last line
                continue
            _apply(parsed, event)
    return parsed


def _apply(parsed: ParsedReport, event: dict[str, Any]) -> None:
    kind = event.pop("e", None)
    if kind == "test":
        parsed.tests.append(ReportedTest.model_validate(event))
    elif kind == "item":
        parsed.items.append(CollectedTest.model_validate(event))
    elif kind == "collect_error":
        parsed.collection_errors.append(CollectionError.model_validate(event))
    elif kind == "summary":
        counts = event["counts"]
        parsed.exit_code = event["exit_code"]
        parsed.deselected = counts["deselected"]
        parsed.summary = Summary.from_counts(counts, total=event["total"], duration=event["duration"])
