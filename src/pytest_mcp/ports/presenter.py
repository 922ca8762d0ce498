"""The presenter port."""

from __future__ import annotations

from typing import Protocol, TypeVar

from pytest_mcp.domain.models import DiscoveryResult, RunResult

T_co = TypeVar("T_co", covariant=True)


class ResultPresenter(Protocol[T_co]):
    """Turns a use case's successful result into what a transport sends.

    Promises: pure and deterministic; never raises on a valid result; never drops a
    failure that fits the response. Errors are not presented: use cases raise them and
    transports map them.
    """

    def present_run(self, result: RunResult) -> T_co: ...

    def present_discovery(self, result: DiscoveryResult) -> T_co: ...

    def discovery_capacity(self) -> int | None:
        """The most collected tests one discovery answer could ever list; None for no limit.

        An upper bound, never an estimate: describing more tests than this cannot change the
        answer, so the runner describes only the first ones and counts the rest.
        """
        ...
