"""More than one instance (ADR 0016): two servers behind HAProxy (examples/multi_instance/haproxy.cfg as
written, round robin), their runs in a real redis-server with a password; each test starts from its own
test file, and the servers, Redis and HAProxy are started and stopped here."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from pytest_mcp.adapters.run_store.redis import HEARTBEAT_TTL
from tests.answers import call_error, tool_error
from tests.e2e.e2e_support import (
    HttpServer,
    assert_all_gone,
    console_script,
    free_port,
    http_server,
    new_marker,
    processes_with,
    wait_until_running,
    write_project,
)
from tests.e2e.multi_instance import LoadBalancer, RedisServer, client, compose_instance_flags, gated_test

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

PASSWORD = "s3cret-redis-passw0rd"
EXTRA = ["--detach-after", "1", "--max-concurrent-runs", "1"]
"""Besides compose.yaml's flags: detach at once, and one run slot, so a slot not freed shows as 'busy'."""


@dataclass
class Cluster:
    root: Path
    logs: Path
    redis: RedisServer
    a: HttpServer
    b: HttpServer
    lb: LoadBalancer
    markers: list[str] = field(default_factory=list)

    def instance_args(self) -> list[str]:
        return ["--run-store", self.redis.url, *compose_instance_flags(), *EXTRA]

    def start(self, marker: str, *, canary: bool = False) -> str:
        """A gated test file for this test; its node id."""
        self.markers.append(marker)
        (self.root / f"test_{marker}.py").write_text(gated_test(marker, canary=canary), encoding="utf-8")
        return f"test_{marker}.py"

    def open_gate(self, marker: str) -> None:
        (self.root / f"{marker}.gate").touch()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    base = tmp_path_factory.mktemp("cluster")
    root = write_project(base / "proj", {"test_quick.py": "def test_quick():\n    pass\n"})
    redis = RedisServer(base / "redis", PASSWORD)
    redis.start()
    args = ["--run-store", redis.url, *compose_instance_flags(), *EXTRA]
    try:
        with http_server(root, base, *args) as a, http_server(root, base, *args) as b:
            lb = LoadBalancer(base, [a.port, b.port])
            try:
                yield Cluster(root, base, redis, a, b, lb)
            finally:
                lb.stop()
    finally:
        redis.stop()
        for log in [*base.glob("*.log"), *(base / "redis").glob("*.log")]:
            assert PASSWORD not in log.read_text(errors="replace"), f"{log.name} holds the Redis password"


@pytest.fixture(autouse=True)
def gates_opened_after_each_test(cluster: Cluster) -> Iterator[None]:
    """Whatever a test asserted, its runs end after it: one held run slot would starve the next test."""
    yield
    for marker in cluster.markers:
        cluster.open_gate(marker)


def answer(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    structured: dict[str, Any] = result.structured_content
    return structured


async def start_run(connected: Client, node_id: str) -> str:
    started = answer(await connected.call_tool("execute_tests", {"node_ids": [node_id]}))
    assert started["status"] == "running", started
    run_id: str = started["run_id"]
    return run_id


async def until_finished(connected: Client, run_id: str) -> dict[str, Any]:
    with anyio.fail_after(60):
        while True:
            polled = answer(await connected.call_tool("get_test_run", {"run_id": run_id, "wait": 1}))
            if polled.get("status") != "running":
                return polled


def calls_logged(server: HttpServer, tool: str) -> int:
    return server.stderr.read_text(errors="replace").count(f"tool={tool}")


async def test_a_detached_run_started_through_one_instance_is_finished_and_paged_through_the_other(
    cluster: Cluster,
) -> None:
    marker = new_marker()
    node_id = cluster.start(marker)
    async with client(cluster.a.url) as on_a, client(cluster.b.url) as on_b:
        run_id = await start_run(on_a, node_id)
        with anyio.fail_after(30):  # the failure so far, published by the instance running it
            while True:
                running = answer(await on_b.call_tool("get_test_run", {"run_id": run_id, "wait": 0}))
                assert (running["status"], running["run_id"]) == ("running", run_id)
                if running["summary"]["failed"] == 1:
                    break
                await anyio.sleep(0.2)
        cluster.open_gate(marker)
        final = await until_finished(on_b, run_id)
        assert "status" not in final
        assert (final["summary"]["failed"], final["summary"]["passed"]) == (1, 1)
        assert final["exit_code"] == 1
        page = answer(await on_b.call_tool("get_test_run", {"run_id": run_id, "offset": 0}))
        assert [test["node_id"] for test in page["tests"]] == [f"{node_id}::test_fails_first"]
        assert page["page"]["total"] == 1


async def test_through_the_load_balancer_the_calls_of_one_run_reach_both_instances(cluster: Cluster) -> None:
    marker = new_marker()
    node_id = cluster.start(marker)
    before = {server.port: calls_logged(server, "get_test_run") for server in (cluster.a, cluster.b)}
    async with client(cluster.lb.url) as through_lb:
        run_id = await start_run(through_lb, node_id)
        for _ in range(4):  # round robin: two to each instance
            polled = answer(await through_lb.call_tool("get_test_run", {"run_id": run_id, "wait": 0}))
            assert polled["status"] == "running"
        cluster.open_gate(marker)
        final = await until_finished(through_lb, run_id)
    assert (final["summary"]["failed"], final["summary"]["passed"]) == (1, 1)
    after = {server.port: calls_logged(server, "get_test_run") for server in (cluster.a, cluster.b)}
    assert all(after[port] >= before[port] + 2 for port in after), (before, after)


async def test_a_cancel_through_the_other_instance_stops_the_run_and_its_processes_within_2s(
    cluster: Cluster,
) -> None:
    marker = new_marker()
    node_id = cluster.start(marker, canary=True)
    async with client(cluster.a.url) as on_a, client(cluster.b.url) as on_b:
        run_id = await start_run(on_a, node_id)
        await wait_until_running(marker)
        cancelled = answer(await on_b.call_tool("get_test_run", {"run_id": run_id, "cancel": True}))
        assert cancelled["status"] == "cancelled"
        await assert_all_gone(marker, within=2.0)
        for connected in (on_a, on_b):  # every instance says so for the TTL
            again = answer(await connected.call_tool("get_test_run", {"run_id": run_id}))
            assert again["status"] == "cancelled"


async def test_another_owner_can_neither_see_nor_cancel_the_run_on_any_instance(cluster: Cluster) -> None:
    marker = new_marker()
    node_id = cluster.start(marker, canary=True)
    async with client(cluster.a.url, "alice") as alice, client(cluster.b.url, "alice") as alice_on_b:
        run_id = await start_run(alice, node_id)
        await wait_until_running(marker)
        for url in (cluster.a.url, cluster.b.url, cluster.lb.url):
            async with client(url, "mallory") as mallory:
                for arguments in ({"run_id": run_id}, {"run_id": run_id, "cancel": True}):
                    error = await call_error(mallory, "get_test_run", arguments)
                    assert "unknown or expired run id" in error.message
        assert processes_with(marker), "another owner's cancel stopped the run"
        still = answer(await alice_on_b.call_tool("get_test_run", {"run_id": run_id, "wait": 0}))
        assert still["status"] == "running"
        assert answer(await alice_on_b.call_tool("get_test_run", {"run_id": run_id, "cancel": True}))
    await assert_all_gone(marker, within=2.0)


async def test_a_session_id_a_client_chose_does_not_make_another_token_the_owner(cluster: Cluster) -> None:
    marker = new_marker()
    node_id = cluster.start(marker, canary=True)
    chosen = "the-same-session-id-for-both"
    async with client(cluster.a.url, "alice", session_id=chosen) as alice:
        run_id = await start_run(alice, node_id)
        await wait_until_running(marker)
        for url in (cluster.a.url, cluster.b.url):  # the instance running it, and the one reading Redis
            async with client(url, "mallory", session_id=chosen) as mallory:
                for arguments in ({"run_id": run_id, "wait": 0}, {"run_id": run_id, "cancel": True}):
                    error = await call_error(mallory, "get_test_run", arguments)
                    assert "unknown or expired run id" in error.message
        assert processes_with(marker), "another token's cancel stopped the run"
        async with client(cluster.b.url, "alice") as alice_without_it:  # the owner is the token alone
            still = answer(await alice_without_it.call_tool("get_test_run", {"run_id": run_id, "wait": 0}))
            assert still["status"] == "running"
            assert answer(await alice_without_it.call_tool("get_test_run", {"run_id": run_id, "cancel": True}))
    await assert_all_gone(marker, within=2.0)


def cancel_channels(cluster: Cluster) -> set[bytes]:
    import redis

    return set(redis.Redis.from_url(cluster.redis.url).pubsub_channels("pytest-mcp:cancel:*"))


async def test_a_message_that_is_not_a_run_id_on_a_cancel_channel_is_dropped_and_the_instance_goes_on(
    cluster: Cluster,
) -> None:
    import redis

    marker = new_marker()
    node_id = cluster.start(marker, canary=True)
    before = cancel_channels(cluster)
    with http_server(cluster.root, cluster.logs, *cluster.instance_args()) as lone:
        with anyio.fail_after(10):
            while not (channels := cancel_channels(cluster) - before):
                await anyio.sleep(0.05)
        (channel,) = channels
        publisher = redis.Redis.from_url(cluster.redis.url)
        for stray in (b"\xff\xfe not UTF-8", b"", b"a run id? no", b"\x00" * 100_000):
            assert publisher.publish(channel, stray) == 1  # the instance was listening
        await anyio.sleep(1.5)  # the listener has read them all (it waits at most 1 s per message)
        assert lone.process.poll() is None, lone.stderr.read_text()
        assert lone.request("GET", "/healthz").status == 200
        async with client(lone.url) as on_lone, client(cluster.b.url) as on_b:
            run_id = await start_run(on_lone, node_id)
            await wait_until_running(marker)
            cancelled = answer(await on_b.call_tool("get_test_run", {"run_id": run_id, "cancel": True}))
            assert cancelled["status"] == "cancelled"  # the cancel channel still reaches it
        await assert_all_gone(marker, within=2.0)
        log = lone.stderr.read_text(errors="replace")
        assert log.count("run_store_message_dropped") == 4, log


def everything_in_redis(cluster: Cluster) -> bytes:
    """Every key, and every value of every key, that Redis holds."""
    import redis

    connection = redis.Redis.from_url(cluster.redis.url)
    held = []
    for key in connection.keys("*"):
        held.append(key)
        kind = connection.type(key)
        if kind == b"hash":
            held += [part for item in connection.hgetall(key).items() for part in item]
        elif kind == b"string":
            held.append(connection.get(key) or b"")
        else:
            raise AssertionError(f"{key!r} is a {kind!r}, which this test does not read")
    return b"\n".join(held)


async def test_redis_holds_and_carries_no_run_id_while_running_finished_kept_or_cancelled(cluster: Cluster) -> None:
    import redis

    listener = redis.Redis.from_url(cluster.redis.url).pubsub()
    listener.psubscribe("pytest-mcp:cancel:*")
    kept_marker, cancelled_marker = new_marker(), new_marker()
    kept_node, cancelled_node = cluster.start(kept_marker), cluster.start(cancelled_marker, canary=True)
    async with client(cluster.a.url) as on_a, client(cluster.b.url) as on_b:
        kept_id = await start_run(on_a, kept_node)
        with anyio.fail_after(30):  # published with its failure so far: the id is in its 'running' answer
            while answer(await on_b.call_tool("get_test_run", {"run_id": kept_id, "wait": 0}))["summary"]["failed"] < 1:
                await anyio.sleep(0.2)
        running = everything_in_redis(cluster)
        cluster.open_gate(kept_marker)
        final = await until_finished(on_b, kept_id)
        assert final["run_id"] == kept_id  # its answer, read from Redis, names it
        page = answer(await on_b.call_tool("get_test_run", {"run_id": kept_id, "offset": 0}))
        assert page["run_id"] == kept_id
        finished = everything_in_redis(cluster)
        assert b"kept" in finished

        cancelled_id = await start_run(on_a, cancelled_node)
        await wait_until_running(cancelled_marker)
        assert answer(await on_b.call_tool("get_test_run", {"run_id": cancelled_id, "cancel": True}))["status"] == (
            "cancelled"
        )
        cancelled = everything_in_redis(cluster)
    published = []
    while (message := listener.get_message(timeout=0.5)) is not None:
        if message["type"] == "pmessage":
            published.append(message["data"])
    listener.close()
    assert published, "the cancel went through Redis"
    for run_id in (kept_id, cancelled_id):
        for held in (running, finished, cancelled, *published):
            assert run_id.encode() not in held


async def test_an_instance_killed_mid_run_leaves_a_clear_error_not_a_run_forever_running(
    cluster: Cluster,
) -> None:
    marker = new_marker()
    node_id = cluster.start(marker, canary=True)
    try:
        with http_server(cluster.root, cluster.logs, *cluster.instance_args()) as doomed:
            async with client(doomed.url) as on_doomed:
                run_id = await start_run(on_doomed, node_id)
            await wait_until_running(marker)
            doomed.process.kill()  # SIGKILL: no goodbye, its heartbeat just stops
            doomed.process.wait()
        async with client(cluster.lb.url) as through_lb:
            with anyio.fail_after(HEARTBEAT_TTL + 10):
                while True:
                    result = await through_lb.call_tool("get_test_run", {"run_id": run_id, "wait": 0})
                    if result.is_error:
                        break
                    assert answer(result)["status"] == "running"
                    await anyio.sleep(0.2)
        lost = tool_error(result)
        assert lost.reason == "run_lost"
        assert "the instance running it stopped" in lost.message
    finally:  # the killed instance could not stop its pytest
        for pid in processes_with(marker):
            os.kill(pid, signal.SIGKILL)


async def test_a_redis_outage_is_a_clear_error_for_other_instances_while_local_runs_finish_and_free_their_slot(
    cluster: Cluster,
) -> None:
    marker = new_marker()
    node_id = cluster.start(marker)
    async with client(cluster.a.url) as on_a, client(cluster.b.url) as on_b:
        run_id = await start_run(on_a, node_id)
        cluster.redis.stop()
        try:
            error = await call_error(on_b, "get_test_run", {"run_id": run_id})
            assert error.reason == "store_unavailable"
            assert f"the run store {cluster.redis.masked_url} is unreachable" in error.message
            assert PASSWORD not in str(error)
            assert answer(await on_a.call_tool("get_test_run", {"run_id": run_id, "wait": 0}))["status"] == "running"
            cluster.open_gate(marker)
            final = await until_finished(on_a, run_id)  # its own instance finishes it
            assert (final["summary"]["failed"], final["summary"]["passed"]) == (1, 1)
            # One run slot: had the finished run kept it, this call would be 'busy' when its timeout
            # passed. A timeout of 5 s was also the run's: a loaded machine timed the run out (0 passed).
            quick = answer(await on_a.call_tool("execute_tests", {"node_ids": ["test_quick.py"], "timeout": 60}))
            assert quick["summary"]["passed"] == 1
        finally:
            cluster.redis.start()


async def test_after_a_redis_restart_a_running_run_is_published_again_and_finished_through_the_other(
    cluster: Cluster,
) -> None:
    marker = new_marker()
    node_id = cluster.start(marker)
    async with client(cluster.a.url) as on_a, client(cluster.b.url) as on_b:
        run_id = await start_run(on_a, node_id)
        cluster.redis.restart()  # no persistence: everything it held is gone
        with anyio.fail_after(10):
            while (result := await on_b.call_tool("get_test_run", {"run_id": run_id, "wait": 0})).is_error:
                await anyio.sleep(0.1)  # until the store is reached again and the run published again
        assert answer(result)["status"] == "running"
        cluster.open_gate(marker)
        final = await until_finished(on_b, run_id)
        assert (final["summary"]["failed"], final["summary"]["passed"]) == (1, 1)


def test_an_unreachable_or_refusing_redis_stops_start_up_naming_it_without_the_password(cluster: Cluster) -> None:
    closed = free_port()
    for url, masked in (
        (f"redis://:{PASSWORD}@127.0.0.1:{closed}/0", f"redis://:****@127.0.0.1:{closed}/0"),
        (
            f"redis://:wrong-{PASSWORD}@127.0.0.1:{cluster.redis.port}/0",
            f"redis://:****@127.0.0.1:{cluster.redis.port}/0",
        ),
    ):
        started = time.monotonic()
        completed = subprocess.run(
            [console_script(), "--root", str(cluster.root), "--transport", "http", "--stateless"],
            env={**os.environ, "PYTEST_MCP_RUN_STORE": url, "PYTEST_MCP_PORT": "0"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 1, completed.stderr
        assert f"pytest-mcp: not starting: the run store {masked} is unreachable" in completed.stderr
        assert PASSWORD not in completed.stderr + completed.stdout
        assert time.monotonic() - started < 30
