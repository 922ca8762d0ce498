"""Errors the use cases raise; transports map each class to its wire form.

PytestMcpError
├── InvalidArguments   the request itself is wrong (a field and a reason per problem)
└── ExecutionFailed    pytest could not give a trustworthy result (interrupted, usage
                       error, internal error, timeout, crash, pytest unavailable), or the
                       server was too busy to start it within the call's timeout
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

FailureReason = Literal[
    "interrupted",
    "internal_error",
    "usage_error",
    "timeout",
    "crashed",
    "pytest_unavailable",
    "busy",
]


class PytestMcpError(Exception):
    """Base class of every error pytest-mcp raises on purpose."""


@dataclass(frozen=True)
class FieldError:
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


class InvalidArguments(PytestMcpError):
    """The arguments do not satisfy the tool's contract. Nothing was run."""

    def __init__(self, tool: str, errors: list[FieldError]) -> None:
        self.tool = tool
        self.errors = tuple(errors)
        super().__init__(f"invalid arguments for {tool}: " + "; ".join(map(str, self.errors)))


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
            "command": list(self.command),
            "duration": round(self.duration, 3),
            "stdout_tail": self.stdout_tail,
            "stderr_tail": self.stderr_tail,
        }
        if self.collection_errors:
            data["collection_errors"] = list(self.collection_errors)
        if self.signal:
            data["signal"] = self.signal
        data.update(self.extra)
        return data


class ExecutionFailed(PytestMcpError):
    """pytest did not produce a result that can be trusted; the message carries the essentials."""

    def __init__(self, reason: FailureReason, message: str, details: FailureDetails) -> None:
        self.reason = reason
        self.message = message
        self.details = details
        super().__init__(message)
