"""structlog configured to write to stderr only: stdout belongs to the stdio transport.

Every line is bounded, whoever sends what: long values are cut with a note of how much, and a
warning or error repeated in a burst (a client flooding the server, a descriptor shortage in
the accept loop) is let through at most REPEATS times per WINDOW seconds, then summed up.
"""

from __future__ import annotations

import logging
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

import structlog

REPEATS = 10
WINDOW = 10.0
MAX_VALUE_CHARS = 2000
MAX_TRACEBACK_CHARS = 16_000
MAX_ITEMS = 20
_KEYS = 1000  # distinct repeated messages remembered at once


class RepeatLimiter:
    """Lets at most `repeats` records with the same key through per `window` seconds.

    `admit` says whether a record may go out and how many like it were held back since the
    last one that went out, so the line that goes out can say so.
    """

    def __init__(
        self, repeats: int = REPEATS, window: float = WINDOW, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._repeats = repeats
        self._window = window
        self._clock = clock
        self._seen: OrderedDict[Any, list[float]] = OrderedDict()  # key -> [window start, sent, held back]

    def admit(self, key: Any) -> tuple[bool, int]:
        now = self._clock()
        entry = self._seen.get(key)
        if entry is None or now - entry[0] >= self._window:
            held_back = int(entry[2]) if entry is not None else 0
            self._seen[key] = [now, 1, 0]
            self._seen.move_to_end(key)
            while len(self._seen) > _KEYS:
                self._seen.popitem(last=False)
            return True, held_back
        if entry[1] < self._repeats:
            entry[1] += 1
            return True, 0
        entry[2] += 1
        return False, 0


class _StdlibRepeats(logging.Filter):
    """RepeatLimiter for the standard library's records (the SDK, uvicorn, asyncio)."""

    def __init__(self, limiter: RepeatLimiter) -> None:
        super().__init__()
        self._limiter = limiter

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        # The first line says what happened; asyncio adds lines naming the socket and the like.
        what = str(record.msg).split("\n", 1)[0][:200]
        admitted, held_back = self._limiter.admit((record.name, record.levelno, what))
        if admitted and held_back:
            record.msg = f"{record.msg} [{held_back} more like this in the last {WINDOW:g} s were left out]"
        if admitted and isinstance(record.msg, str) and len(record.msg) > MAX_VALUE_CHARS:
            record.msg = _cut(record.msg, MAX_VALUE_CHARS)
        return admitted


def _cut(text: str, limit: int) -> str:
    return f"{text[:limit]}[... {len(text) - limit:,} characters cut by pytest-mcp]"


def bounded(limiter: RepeatLimiter) -> structlog.types.Processor:
    """A structlog processor: repeated warnings limited, every value's size bounded."""

    def process(_logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        if method in ("warning", "error", "critical", "exception"):
            key = (method, event.get("event"), event.get("outcome"), event.get("reason"))
            admitted, held_back = limiter.admit(key)
            if not admitted:
                raise structlog.DropEvent
            if held_back:
                event["left_out_like_this"] = held_back
        for name, value in event.items():
            event[name] = _bound(value, MAX_TRACEBACK_CHARS if name == "exception" else MAX_VALUE_CHARS)
        return event

    return process


def _bound(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return _cut(value, limit) if len(value) > limit else value
    if isinstance(value, list | tuple):
        kept = [_bound(item, limit) for item in value[:MAX_ITEMS]]
        return [*kept, f"[... {len(value) - MAX_ITEMS} more]"] if len(value) > MAX_ITEMS else kept
    if isinstance(value, dict):
        return {str(key)[:64]: _bound(item, limit) for key, item in list(value.items())[:MAX_ITEMS]}
    return value


def _processors(fmt: Literal["console", "json"], limiter: RepeatLimiter) -> list[structlog.types.Processor]:
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer(colors=False)
    )
    return [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        bounded(limiter),
        renderer,
    ]


def configure_logging(level: str, fmt: Literal["console", "json"]) -> Iterator[None]:
    """A dependency-injector Resource: configure on init, flush on shutdown."""
    numeric = logging.getLevelNamesMapping()[level.upper()]
    limiter = RepeatLimiter()
    structlog.configure(
        processors=_processors(fmt, limiter),
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    # The MCP SDK, uvicorn and asyncio log through the standard library; keep them on stderr, at
    # our level, and as bounded as our own lines.
    logging.basicConfig(stream=sys.stderr, level=max(numeric, logging.WARNING), force=True)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_StdlibRepeats(limiter))
    yield
    sys.stderr.flush()


# -- in-process servers (pytest_mcp.testing.connect) ------------------------------------------------
#
# A server built inside someone else's process must not configure structlog or the standard
# library's logging for that process: they belong to its owner. Our own loggers are `routed`: while
# an in-process server runs (in the context it was started from, which its tasks inherit), they
# write through a private logger of its own; otherwise through structlog's configuration, as the
# `pytest-mcp` command sets it up.

_IN_PROCESS: ContextVar[Any] = ContextVar("pytest_mcp_in_process_logger", default=None)


class _Stderr:
    """structlog's PrintLogger, but looking up `sys.stderr` at each line (pytest swaps it per test)."""

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log = debug = info = warn = warning = error = err = fatal = exception = critical = msg


class _Routed:
    """A logger that writes through the in-process server's logger when there is one, else structlog's."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._configured = structlog.get_logger(name)

    def __getattr__(self, attribute: str) -> Any:
        private = _IN_PROCESS.get()
        return getattr(private if private is not None else self._configured, attribute)


def routed_logger(name: str) -> Any:
    """The logger our modules log through (see the note above `_IN_PROCESS`)."""
    return _Routed(name)


@contextmanager
def in_process_logging(level: str, fmt: Literal["console", "json"]) -> Iterator[None]:
    """Within this block (and the tasks started in it), our loggers write to stderr at `level` and above,
    without touching the process's structlog or logging configuration."""
    numeric = logging.getLevelNamesMapping()[level.upper()]
    logger = structlog.wrap_logger(
        _Stderr(),
        processors=_processors(fmt, RepeatLimiter()),
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        cache_logger_on_first_use=False,
    )
    previous = _IN_PROCESS.get()
    _IN_PROCESS.set(logger)
    try:
        yield
    finally:
        _IN_PROCESS.set(previous)  # not reset(token): an async fixture may end in another context
