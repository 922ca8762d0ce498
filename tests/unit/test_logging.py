"""Log lines are bounded: repeated warnings are held back and counted, long values are cut."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import structlog

from pytest_mcp.adapters.structlog_logging import MAX_VALUE_CHARS, REPEATS, RepeatLimiter, configure_logging


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_limiter_lets_a_burst_through_then_counts_what_it_held_back() -> None:
    clock = Clock()
    limiter = RepeatLimiter(repeats=3, window=10, clock=clock)

    burst = [limiter.admit("k") for _ in range(8)]
    other = limiter.admit("other")
    clock.now = 10.0
    after_window = limiter.admit("k")

    assert burst == [(True, 0)] * 3 + [(False, 0)] * 5
    assert other == (True, 0)
    assert after_window == (True, 5)


@pytest.fixture
def stderr(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """configure_logging writing to a buffer, undone afterwards."""
    buffer = io.StringIO()
    monkeypatch.setattr(sys, "stderr", buffer)
    next(configure_logging("info", "json"))
    yield buffer
    structlog.reset_defaults()
    logging.getLogger().handlers.clear()


def lines(stderr: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stderr.getvalue().splitlines() if line.startswith("{")]


def test_a_flood_of_one_warning_comes_out_as_a_few_lines_and_a_count(stderr: io.StringIO) -> None:
    log = structlog.get_logger("pytest_mcp.audit")

    for _ in range(500):
        log.warning("tool_call", outcome="invalid")
    log.info("tool_call", outcome="ok")

    written = lines(stderr)
    assert len(written) == REPEATS + 1
    assert written[-1]["outcome"] == "ok", "information is never held back"


def test_the_standard_librarys_repeated_errors_are_bounded_too(stderr: io.StringIO) -> None:
    accept = logging.getLogger("asyncio")

    for fd in range(1000):
        accept.error("socket.accept() out of system resource\nsocket: <fd=%d>", fd)

    assert stderr.getvalue().count("out of system resource") == REPEATS


def test_long_values_and_long_lists_are_cut_and_say_so(stderr: io.StringIO) -> None:
    structlog.get_logger("x").info("event", huge="Z" * 1_000_000, many=list(range(1000)), name="n" * 100_000)

    line = lines(stderr)[0]
    assert len(json.dumps(line)) < 3 * MAX_VALUE_CHARS + 2000
    assert line["huge"].endswith(f"[... {1_000_000 - MAX_VALUE_CHARS:,} characters cut by pytest-mcp]")
    assert line["many"][-1] == "[... 980 more]"
