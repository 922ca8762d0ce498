"""A project's history for the owner of a call, kept in the run store (ADR 0020)."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_mcp.adapters.mcp.sessions import Owner
from pytest_mcp.adapters.structlog_logging import routed_logger
from pytest_mcp.ports.history import RunHistory
from pytest_mcp.ports.run_store import RunStore, RunStoreUnavailable

if TYPE_CHECKING:
    from pytest_mcp.domain.history import History

_log = routed_logger("pytest_mcp.runs")
HISTORY_TTL = 7 * 24 * 3600.0
"""Seconds a project's history is kept after its last run: a week of an agent's work."""


class StoredHistory(RunHistory):
    """One owner's history of one project. The store's key is a digest: a reader of the store learns
    neither the owner (a session id, a credential's digest) nor the project's path."""

    def __init__(self, store: RunStore, owner: Owner, root: Path) -> None:
        self._store = store
        self._key = hashlib.sha256(f"{owner}\x1f{root}".encode()).hexdigest()[:32]

    async def recall(self) -> History:
        from pytest_mcp.domain.history import History

        try:
            return await self._store.history(self._key) or History()
        except RunStoreUnavailable as exc:
            _log.warning("history_unavailable", error=str(exc))
            return History()

    async def remember(self, history: History) -> None:
        stamped = history.model_copy(update={"last_run": time.time()})  # what a file edited since is newer than
        try:
            await self._store.keep_history(self._key, stamped, HISTORY_TTL)
        except RunStoreUnavailable as exc:
            _log.warning("history_not_kept", error=str(exc))
