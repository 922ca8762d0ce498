"""Errors the use cases raise; transports map each class to its wire form.

PytestMcpError
├── InvalidArguments   the request itself is wrong (a field and a reason per problem)
└── ExecutionFailed    pytest could not give a trustworthy result (interrupted, usage
                       error, internal error, timeout, crash, pytest unavailable), the
                       server was too busy to start it within the call's timeout, or (with
                       a shared run store) the run's instance stopped or the store is gone
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from pytest_mcp.domain.text import keep_arguments, keep_head, printable

MAX_MESSAGE_CHARS = 8000
"""An error's message, whatever a run printed: the essentials come first, then a cut."""
MAX_COMMAND_CHARS = 4000
"""The command echoed in an answer or an error: 500 node ids of 2,000 characters would be 1 MB."""
MAX_LISTED_ERRORS = 20
"""Field errors, or collection errors, listed in one error; the rest are counted."""

FailureReason = Literal[
    "interrupted",
    "internal_error",
    "usage_error",
    "timeout",
    "crashed",
    "pytest_unavailable",
    "busy",
    "run_lost",
    "store_unavailable",
]


class PytestMcpError(Exception):
    """Base class of every error pytest-mcp raises on purpose."""


@dataclass(frozen=True)
class FieldError:
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


def field_errors(
    exc: ValidationError, *, prefix: str = "", fields: Sequence[str] = (), show_input: bool = False
) -> list[FieldError]:
    """pydantic's errors in our words: each field by its path (`node_ids[2]`, `tests[0].outcome`),
    each reason without pydantic's prefixes. Field names from a caller are cut at 64 characters.

    `fields` lists the known fields, named when an unknown one is refused; `show_input` adds the
    value that was refused (for scripts, where it helps; never for tool arguments, which may be huge).
    """
    problems = []
    for error in exc.errors():
        location = "".join(f"[{part}]" if isinstance(part, int) else f".{str(part)[:64]}" for part in error["loc"])
        name = (prefix + location if location.startswith("[") or not prefix else f"{prefix}{location}").lstrip(".")
        if error["type"] == "extra_forbidden":
            reason = "unknown field" + (f"; the fields are {', '.join(fields)}" if fields else "")
        else:
            message = error["msg"].removeprefix("Value error, ")
            reason = message[:1].lower() + message[1:]
            if show_input and error["type"] != "missing" and "input" in error:
                reason += f" (got {keep_head(repr(error['input']), 100)})"
        problems.append(FieldError(name or "value", reason))
    return problems


class InvalidArguments(PytestMcpError):
    """The arguments do not satisfy the tool's contract. Nothing was run.

    At most MAX_LISTED_ERRORS problems are listed (200,000 unknown keys once made an 80 MB
    answer); `omitted` counts the rest, and the message says so.
    """

    def __init__(self, errors: list[FieldError], omitted: int = 0) -> None:
        self.errors = tuple(errors[:MAX_LISTED_ERRORS])
        self.omitted = omitted + max(len(errors) - MAX_LISTED_ERRORS, 0)
        super().__init__(f"invalid arguments: {self.problems()}")

    def problems(self) -> str:
        """The listed problems in one line, `field: reason; ...`, and how many more there were."""
        more = f"; and {self.omitted:,} more problems" if self.omitted else ""
        return "; ".join(map(str, self.errors)) + more

    def message_for(self, tool: str) -> str:
        """The message as the named tool's caller reads it; the tool's name is the adapter's to give."""
        return f"invalid arguments for {tool}: {self.problems()}"


@dataclass(frozen=True)
class FailureDetails:
    """Structure that travels with an ExecutionFailed, for clients that read error data."""

    exit_code: int | None
    command: tuple[str, ...]
    duration: float
    stdout_tail: str = ""
    stderr_tail: str = ""
    collection_errors: tuple[dict[str, Any], ...] = ()
    signal: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "exit_code": self.exit_code,
            "command": list(keep_arguments(self.command, MAX_COMMAND_CHARS)),
            "duration": round(self.duration, 3),
            "stdout_tail": self.stdout_tail,
            "stderr_tail": self.stderr_tail,
        }
        if self.collection_errors:
            data["collection_errors"] = list(self.collection_errors[:MAX_LISTED_ERRORS])
            if len(self.collection_errors) > MAX_LISTED_ERRORS:
                data["collection_errors_omitted"] = len(self.collection_errors) - MAX_LISTED_ERRORS
        if self.signal:
            data["signal"] = self.signal
        data.update(self.extra)
        return data


class ExecutionFailed(PytestMcpError):
    """pytest did not produce a result that can be trusted; the message carries the essentials."""

    def __init__(self, reason: FailureReason, message: str, details: FailureDetails) -> None:
        self.reason = reason
        # It quotes pytest's output, the project's: its lines, never a control character or a bidi override.
        self.message = printable(keep_head(message, MAX_MESSAGE_CHARS))
        self.details = details
        super().__init__(self.message)
