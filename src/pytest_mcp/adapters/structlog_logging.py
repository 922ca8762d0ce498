"""structlog configured to write to stderr only: stdout belongs to the stdio transport."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from typing import Literal

import structlog


def configure_logging(level: str, fmt: Literal["console", "json"]) -> Iterator[None]:
    """A dependency-injector Resource: configure on init, flush on shutdown."""
    numeric = logging.getLevelNamesMapping()[level.upper()]
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    # The MCP SDK logs through the standard library; keep it on stderr and at our level.
    logging.basicConfig(stream=sys.stderr, level=max(numeric, logging.WARNING), force=True)
    yield
    sys.stderr.flush()
