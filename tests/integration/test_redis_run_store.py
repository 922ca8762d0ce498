"""RedisRunStore against a real redis-server: keys under the configured prefix, Redis expiry, a
run read as lost once its instance's heartbeat is gone, cancels over pub/sub, and TLS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from pytest_mcp.adapters.run_store.redis import RedisRunStore
from pytest_mcp.domain.stored_runs import StoredRun, run_key
from tests.e2e.multi_instance import RedisServer

pytestmark = pytest.mark.anyio

PASSWORD = "integration-redis-passw0rd"


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"), PASSWORD)
    server.start()
    yield server
    server.stop()


def record(run_id: str, instance: str, status: str = "running") -> StoredRun:
    return StoredRun.model_validate(
        {"run_id": run_id, "owner": "digest", "instance": instance, "status": status, "answer": {"content": []}}
    )


async def test_keys_live_under_the_prefix_and_another_prefix_sees_none_of_them(redis_server: RedisServer) -> None:
    import redis

    ours, theirs = RedisRunStore(redis_server.url, "team-a:"), RedisRunStore(redis_server.url, "team-b:")
    async with ours.attached("i1", lambda run_id: None), theirs.attached("i2", lambda run_id: None):
        await ours.put(record("run-1", "i1", "finished"), ttl=60)
        assert (await ours.get("run-1")) == record("run-1", "i1", "finished")
        assert await theirs.get("run-1") is None
        keys = {key.decode() for key in redis.Redis.from_url(redis_server.url).keys("*")}
        assert keys
        assert all(key.startswith(("team-a:", "team-b:")) for key in keys), keys
        assert not any("run-1" in key for key in keys)  # the key is a digest of the run id


async def test_redis_expiry_forgets_a_run_ttl_seconds_after_its_last_put(redis_server: RedisServer) -> None:
    store = RedisRunStore(redis_server.url, "expiry:")
    async with store.attached("i1", lambda run_id: None):
        await store.put(record("run-2", "i1", "finished"), ttl=0.3)
        assert await store.get("run-2") is not None
        await anyio.sleep(0.6)
        assert await store.get("run-2") is None


async def test_a_running_run_is_lost_once_its_instance_has_left_and_cancels_reach_the_instance_running_it(
    redis_server: RedisServer,
) -> None:
    runner, asker = RedisRunStore(redis_server.url, "lost:"), RedisRunStore(redis_server.url, "lost:")
    cancels: list[str] = []
    async with asker.attached("asker", lambda run_id: None):
        async with runner.attached("runner", cancels.append):
            await runner.put(record("run-3", "runner"), ttl=60)
            assert (await asker.get("run-3")).status == "running"  # type: ignore[union-attr]
            await asker.cancel("run-3", "runner")
            with anyio.fail_after(5):
                while not cancels:
                    await anyio.sleep(0.02)
            assert cancels == [run_key("run-3")]  # the run's key: no run id crosses Redis
        assert (await asker.get("run-3")).status == "lost"  # type: ignore[union-attr]


async def test_a_rediss_url_connects_with_tls(tmp_path: Path) -> None:
    server = RedisServer(tmp_path, PASSWORD, tls=True)
    server.start()
    try:
        store = RedisRunStore(server.url, "tls:")
        assert store.where.startswith("rediss://:****@127.0.0.1:")
        async with store.attached("i1", lambda run_id: None):
            await store.put(record("run-4", "i1", "finished"), ttl=60)
            assert await store.get("run-4") == record("run-4", "i1", "finished")
    finally:
        server.stop()


async def test_a_projects_history_is_kept_under_the_prefix_shared_by_instances_and_expires(
    redis_server: RedisServer,
) -> None:
    import redis

    from pytest_mcp.adapters.mcp.history import StoredHistory
    from pytest_mcp.domain.history import History

    one, other = RedisRunStore(redis_server.url, "hist:"), RedisRunStore(redis_server.url, "hist:")
    history = History(failing={"tests/test_a.py::test_x": "g0123456789"}, digests={"a.py::f": "d"})
    async with one.attached("i1", lambda run_id: None), other.attached("i2", lambda run_id: None):
        await StoredHistory(one, "client:abc", Path("/srv/project")).remember(history)
        # Another instance reads the same owner's history of the same project, and nobody else's.
        recalled = await StoredHistory(other, "client:abc", Path("/srv/project")).recall()
        assert recalled.model_copy(update={"last_run": 0.0}) == history
        assert recalled.last_run > 0  # every run stamps when it ended
        assert await StoredHistory(other, "client:xyz", Path("/srv/project")).recall() == History()
        assert await StoredHistory(other, "client:abc", Path("/srv/other")).recall() == History()
        keys = [key.decode() for key in redis.Redis.from_url(redis_server.url).keys("hist:history:*")]
        assert len(keys) == 1
        assert "abc" not in keys[0]
        assert "srv" not in keys[0]
        redis.Redis.from_url(redis_server.url).set(keys[0], b"not a history")
        assert await StoredHistory(other, "client:abc", Path("/srv/project")).recall() == History()
        await one.keep_history("short", history, ttl=0.3)
        assert await one.history("short") == history
        await anyio.sleep(0.6)
        assert await one.history("short") is None
