"""The run-history port: a project's recent failures, for one owner (ADR 0020)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pytest_mcp.domain.history import History


class RunHistory(Protocol):
    """The history of one project for one owner (an MCP session, or a credential's digest).

    Promises:
    - `recall` gives what the last `remember` kept, or an empty History when there is none (never
      raises for a missing or unreadable record: a history is a hint, not a result);
    - `remember` replaces it; it may fail silently (logged) when the store cannot be reached;
    - nothing is ever written into the project's tree.
    """

    async def recall(self) -> History: ...

    async def remember(self, history: History) -> None: ...
