"""A run as every instance sees it in a shared run store (ADR 0016): its state, never its processes."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import Field

from pytest_mcp.domain.models import _Value

StoredStatus = Literal["running", "finished", "cancelled", "lost"]


class StoredRun(_Value):
    """What an instance publishes of a run it executes, for the others to answer `get_test_run`.

    `answer` is the tool's answer as JSON: the 'running' one while it goes on, then the final or
    the 'cancelled' one; a run whose call ended in a JSON-RPC error has `error` instead. A store
    reads `status` 'lost' for a run still 'running' whose instance stopped sending heartbeats.
    """

    run_id: str
    owner: str = Field(description="A digest of the owner, never the owner itself (a session id, credentials).")
    instance: str
    status: StoredStatus
    done: int = 0
    total: int = 0
    failed: int = 0
    answer: dict[str, Any] = Field(default_factory=dict)
    error: dict[str, Any] | None = None


def run_key(run_id: str) -> str:
    """What a shared store knows a run by: a digest of its id, which cannot be turned back into the id
    (192 random bits), so whoever reads the store cannot read, page through or cancel the run."""
    return hashlib.sha256(run_id.encode()).hexdigest()[:32]
