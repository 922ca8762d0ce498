"""The session table's admission: the cap, each client's share, the eviction order (issue 45).

No server: the table is driven directly, with fake sessions whose `close` records the order.
"""

from __future__ import annotations

import anyio
import pytest

from pytest_mcp.adapters.mcp.http_limits import HttpLimits, SessionTable, client_of_scope

pytestmark = pytest.mark.anyio


class Table:
    def __init__(self, max_sessions: int, per_client: int | None = None) -> None:
        self.table = SessionTable(HttpLimits(max_sessions=max_sessions, max_sessions_per_client=per_client))
        self.closed: list[str] = []
        self.ended: list[str] = []
        self.table.on_end = self.ended.append
        self.count = 0

    async def open(self, client: str) -> str | None:
        """A new session of `client`, or the refusal's reason prefixed with `refused: `."""
        refusal = await self.table.admit(client)
        if refusal is not None:
            return f"refused: {refusal}"
        self.count += 1
        session_id = f"{client}{self.count}"

        async def close() -> None:
            self.closed.append(session_id)

        self.table.opened(client, session_id, close)
        return session_id


async def test_a_client_at_its_share_gives_up_its_own_least_recently_used_idle_session():
    sessions = Table(max_sessions=8)  # share: 4
    flood = [await sessions.open("a") for _ in range(4)]
    theirs = await sessions.open("b")
    with sessions.table.request(flood[0]):  # the oldest is now the most recently used
        pass

    assert await sessions.open("a") == "a6"
    assert sessions.closed == [flood[1]], "a's own least recently used, not b's older session"
    assert sessions.table.held("a") == 4
    assert theirs not in sessions.closed


async def test_a_flood_of_one_client_never_evicts_the_others():
    sessions = Table(max_sessions=256)
    others = [await sessions.open(client) for client in ("b", "c", "d")]
    for _ in range(1000):
        assert not str(await sessions.open("a")).startswith("refused")

    assert not set(others) & set(sessions.closed)
    assert sessions.table.held("a") == 128
    assert len(sessions.table) == 131
    assert sessions.ended == sessions.closed, "each evicted session's runs are released"


async def test_at_the_cap_the_client_holding_the_most_gives_up_its_least_recently_used_idle_session():
    sessions = Table(max_sessions=6, per_client=4)
    a = [await sessions.open("a") for _ in range(2)]
    b = [await sessions.open("b") for _ in range(4)]
    with sessions.table.request(b[0]):
        pass

    assert await sessions.open("c") == "c7"
    assert sessions.closed == [b[1]], (a, b)


async def test_busy_sessions_are_never_evicted_and_the_refusal_names_our_limit():
    sessions = Table(max_sessions=2)  # share: 1
    mine = await sessions.open("a")
    with sessions.table.request(mine):
        refusal = await sessions.open("a")
        theirs = await sessions.open("b")
        with sessions.table.request(theirs):
            full = await sessions.open("c")

    assert refusal == "refused: this client holds 1 sessions, its share of 1, each with a request in flight"
    assert full == "refused: 2 sessions are open, each with a request in flight"
    assert sessions.closed == []


async def test_opens_in_progress_hold_their_slots_so_concurrent_opens_cannot_overshoot_the_cap():
    """50 opens at once each saw room for one and went past the cap, where the SDK refused them."""
    sessions = Table(max_sessions=10, per_client=10)
    admitted: list[str | None] = []

    async def admit() -> None:
        admitted.append(await sessions.table.admit("a"))

    for _ in range(8):
        await sessions.open("a")
    async with anyio.create_task_group() as group:
        for _ in range(50):
            group.start_soon(admit)

    assert admitted.count(None) == 10, "eight idle sessions evicted, two free slots: ten opens in progress"
    assert len(sessions.table) == 0
    assert sessions.table.held("a") == 10


async def test_an_abandoned_open_gives_its_slot_back():
    sessions = Table(max_sessions=1)
    assert await sessions.table.admit("a") is None
    assert (await sessions.table.admit("b") or "").endswith("each with a request in flight")
    sessions.table.abandoned("a")

    assert await sessions.open("b") == "b1"


def test_the_share_defaults_to_half_the_sessions_and_never_exceeds_them():
    assert HttpLimits().client_share == 128
    assert HttpLimits(max_sessions=1).client_share == 1
    assert HttpLimits(max_sessions=10, max_sessions_per_client=3).client_share == 3
    assert HttpLimits(max_sessions=10, max_sessions_per_client=30).client_share == 10


def test_a_client_is_its_credentials_and_its_address_and_the_token_is_not_kept():
    def scope(token: str, host: str) -> dict[str, object]:
        return {"headers": [(b"authorization", f"Bearer {token}".encode())], "client": (host, 50000)}

    one = client_of_scope(scope("secret-token", "127.0.0.1"))

    assert one == client_of_scope(scope("secret-token", "127.0.0.1"))
    assert one != client_of_scope(scope("secret-token", "127.0.0.2"))
    assert one != client_of_scope(scope("other-token", "127.0.0.1"))
    assert "secret" not in one
