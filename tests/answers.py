"""Answers as a client reads them: structured content with the output schema's defaults filled in.

The server leaves every field at its default out of `structuredContent` (a missing count is 0).
Tests that read a count or a list through this helper see every field, and since the result
models forbid unknown fields, they also prove the wire form is a valid answer.
"""

from __future__ import annotations

from typing import Any, Union

from pydantic import TypeAdapter

from pytest_mcp.domain.models import DiscoveryResult, EnvironmentResult, RunResult

_ANSWER: TypeAdapter[RunResult | DiscoveryResult | EnvironmentResult] = TypeAdapter(
    Union[RunResult, DiscoveryResult, EnvironmentResult]  # noqa: UP007 - a runtime value, not an annotation
)


def complete(structured: dict[str, Any]) -> dict[str, Any]:
    """Every field of the answer, defaults included; fails when the content is not a valid answer."""
    answer: dict[str, Any] = _ANSWER.dump_python(_ANSWER.validate_python(structured, strict=False), mode="json")
    return answer
