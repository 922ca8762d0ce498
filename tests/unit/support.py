"""Helpers shared by the unit tests."""

from __future__ import annotations

from pytest_mcp.domain.environment import EnvironmentResult
from pytest_mcp.domain.models import DiscoveryResult, RunResult


class KeepResult:
    """A presenter that hands the domain result straight back, so tests can read it."""

    def present_run(self, result: RunResult) -> RunResult:
        return result

    def present_discovery(self, result: DiscoveryResult) -> DiscoveryResult:
        return result

    def discovery_capacity(self) -> int | None:
        return None

    def present_environment(self, result: EnvironmentResult) -> EnvironmentResult:
        return result
