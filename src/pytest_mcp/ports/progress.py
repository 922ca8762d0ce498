"""The progress port."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pytest_mcp.domain.models import ReportedTest


class ProgressSink(Protocol):
    """Receives progress while tests run: how many finished, out of how many, how many failed,
    and each listed test report (a failure, a skip, ...) as soon as it is known.

    Promises: cheap and non-blocking from the caller's point of view; never raises on a
    vanished client (a progress update is best-effort); never changes the run's result.
    """

    async def update(self, done: int, total: int, failed: int) -> None: ...

    async def reported(self, test: ReportedTest) -> None: ...
