"""The environment-presenter port."""

from __future__ import annotations

from typing import Protocol, TypeVar

from pytest_mcp.domain.environment import EnvironmentResult

T_co = TypeVar("T_co", covariant=True)


class EnvironmentPresenter(Protocol[T_co]):
    """Turns check_environment's result into what a transport sends.

    Promises: pure and deterministic; never raises on a valid result; never drops a problem.
    It is a port of its own, beside ResultPresenter, so presenters that only ever see runs
    (the recorder's, say) need not pretend to present environments.
    """

    def present_environment(self, result: EnvironmentResult) -> T_co: ...
