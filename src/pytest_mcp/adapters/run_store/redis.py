"""The Redis run store: the runs of every instance behind a load balancer (ADR 0016).

Keys, each under the configured prefix:
- `run:<sha256 of the run id>`, a hash: `run` (the StoredRun as JSON), `instance`, and once
  the run finished with reports to page, `kept` (its RunResult as JSON); Redis expires it
  `ttl` seconds after its last put, which is all the forgetting there is;
- `instance:<id>`, this instance's heartbeat, set every HEARTBEAT_EVERY seconds to expire after
  HEARTBEAT_TTL: a run whose instance's heartbeat is gone is 'lost';
- the channel `cancel:<instance>`, where other instances publish the keys of the runs to cancel.

No run id is written or published: the key is a digest of it, and wherever the id appears in what
is stored (the record, its answers' text and structured content, the kept result) it is replaced
by RUN_ID_MARK, and put back by whoever reads the run, knowing its id.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from pytest_mcp.adapters.structlog_logging import routed_logger
from pytest_mcp.domain.history import History
from pytest_mcp.domain.models import RunResult
from pytest_mcp.domain.stored_runs import StoredRun, run_key
from pytest_mcp.domain.text import MASK, masked_url, url_secrets
from pytest_mcp.ports.run_store import RunStore, RunStoreUnavailable

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.typing import EncodableT, FieldT

_log = routed_logger("pytest_mcp.run_store")

HEARTBEAT_EVERY = 1.0
HEARTBEAT_TTL = 4.0
"""Seconds without a heartbeat after which an instance's running runs are 'lost'."""
CONNECT_TIMEOUT = 5.0


# The run's hash, and whether its instance's heartbeat key exists. That key is named from the hash, so it
# is not declared in KEYS: a standalone Redis allows it; Redis Cluster is not supported.
_GET_RUN = """
local found = redis.call('HMGET', KEYS[1], 'run', 'instance')
if not found[1] then return nil end
return {found[1], redis.call('EXISTS', ARGV[1] .. found[2])}
"""


_RUN_KEY = re.compile(r"[0-9a-f]{32}")
"""What the cancel channel carries: a run's key (`run_key`), nothing else."""
RUN_ID_MARK = "\x00"
"""Stands for the run id in the stored JSON. JSON escapes every control character inside its strings,
so the raw character never occurs in a serialised value: putting the id back replaces nothing else."""


def _without(run_id: str, value: StoredRun | RunResult) -> str:
    """`value` as JSON with every occurrence of the run id replaced by RUN_ID_MARK."""
    return value.model_dump_json().replace(run_id, RUN_ID_MARK)


def _with(run_id: str, raw: bytes | str) -> str:
    """Stored JSON with the run id put back where RUN_ID_MARK stands for it."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    return text.replace(RUN_ID_MARK, run_id)


def _size(data: object) -> int | None:
    return len(data) if isinstance(data, bytes) else None


class RedisRunStore(RunStore):
    """Runs in Redis, shared by every instance given the same URL and prefix."""

    shared = True

    def __init__(self, url: str, prefix: str) -> None:
        self.where = masked_url(url)
        self._url = url
        self._secrets = url_secrets(url)
        self._prefix = prefix
        self._client: Redis | None = None

    @asynccontextmanager
    async def attached(self, instance: str, on_cancel: Callable[[str], None]) -> AsyncIterator[None]:
        try:
            from redis.asyncio import Redis
        except ImportError:  # pragma: no cover - the extra is installed wherever the tests run
            raise RunStoreUnavailable(
                f"the run store {self.where} needs the redis package: pip install 'mcp-server-pytest[redis]'"
            ) from None
        client = Redis.from_url(self._url, socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=CONNECT_TIMEOUT)
        try:
            await self._guarded(client.ping())
            await self._guarded(self._beat(client, instance))
            self._client = client
            async with anyio.create_task_group() as group:
                group.start_soon(self._heartbeats, client, instance)
                group.start_soon(self._cancels, client, instance, on_cancel)
                _log.info("run_store_attached", store=self.where, instance=instance)
                try:
                    yield
                finally:
                    group.cancel_scope.cancel()
        finally:
            self._client = None
            with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                with contextlib.suppress(Exception):  # leaving anyway; the key expires by itself
                    await client.delete(self._key("instance", instance))  # its runs are lost at once
                await client.aclose()

    async def put(self, run: StoredRun, ttl: float, kept: RunResult | None = None) -> None:
        fields: dict[FieldT, EncodableT] = {"run": _without(run.run_id, run), "instance": run.instance}
        if kept is not None:
            fields["kept"] = _without(run.run_id, kept)
        key = self._run_key(run.run_id)
        async with self._connected().pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping=fields)
            pipe.pexpire(key, max(1, int(ttl * 1000)))
            await self._guarded(pipe.execute())

    async def get(self, run_id: str) -> StoredRun | None:
        """One round trip: the run, and whether its instance still beats (a poll reads this 20 times a second)."""
        found = await self._guarded(
            self._connected().eval(_GET_RUN, 1, self._run_key(run_id), self._key("instance", ""))
        )
        if found is None:
            return None
        raw, beating = found
        run = StoredRun.model_validate_json(_with(run_id, raw))
        if run.status == "running" and not beating:
            return run.model_copy(update={"status": "lost"})
        return run

    async def kept(self, run_id: str) -> RunResult | None:
        raw = await self._guarded(self._connected().hget(self._run_key(run_id), "kept"))
        return RunResult.model_validate_json(_with(run_id, raw)) if raw is not None else None

    async def drop(self, run_id: str) -> None:
        await self._guarded(self._connected().delete(self._run_key(run_id)))

    async def cancel(self, run_id: str, instance: str) -> None:
        await self._guarded(self._connected().publish(self._key("cancel", instance), run_key(run_id)))

    async def history(self, key: str) -> History | None:
        raw = await self._guarded(self._connected().get(self._key("history", key)))
        if raw is None:
            return None
        try:
            return History.model_validate_json(raw)
        except ValueError:  # a record from another version, or not ours: no history rather than an error
            _log.warning("history_unreadable", store=self.where)
            return None

    async def keep_history(self, key: str, history: History, ttl: float) -> None:
        data = history.model_dump_json()
        await self._guarded(self._connected().set(self._key("history", key), data, px=max(1, int(ttl * 1000))))

    async def _heartbeats(self, client: Redis, instance: str) -> None:
        """Beat every HEARTBEAT_EVERY seconds; an outage is logged once, and so is the return."""
        reachable = True
        while True:
            await anyio.sleep(HEARTBEAT_EVERY)
            try:
                await self._guarded(self._beat(client, instance))
            except RunStoreUnavailable as exc:
                if reachable:
                    _log.warning("run_store_unreachable", store=self.where, error=str(exc))
                reachable = False
            else:
                if not reachable:
                    _log.info("run_store_reachable", store=self.where)
                reachable = True

    async def _beat(self, client: Redis, instance: str) -> None:
        await client.set(self._key("instance", instance), b"1", px=int(HEARTBEAT_TTL * 1000))

    async def _cancels(self, client: Redis, instance: str, on_cancel: Callable[[str], None]) -> None:
        """Listen on this instance's cancel channel, subscribing again after an outage."""
        channel = self._key("cancel", instance)
        while True:
            pubsub = client.pubsub()
            try:
                await self._guarded(pubsub.subscribe(channel))
                while True:
                    message = await self._guarded(pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0))
                    if message is not None and message.get("type") == "message":
                        self._deliver(message.get("data"), on_cancel)
            except RunStoreUnavailable:
                await anyio.sleep(HEARTBEAT_EVERY / 2)  # the heartbeat logs the outage
            finally:
                # A connection that is gone is closed enough.
                with anyio.CancelScope(shield=True), anyio.move_on_after(1.0), contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    def _deliver(self, data: object, on_cancel: Callable[[str], None]) -> None:
        """One message of the cancel channel to `on_cancel`. Anyone who can reach Redis can publish
        there: what does not parse is dropped and logged (repeats are rate-limited by the logger),
        and nothing a message holds can stop the listener, and with it the server."""
        try:
            key = data.decode("ascii") if isinstance(data, bytes) else None
        except UnicodeDecodeError:
            key = None
        if key is None or not _RUN_KEY.fullmatch(key):
            _log.warning("run_store_message_dropped", store=self.where, why="not a run's key", size=_size(data))
            return
        try:
            on_cancel(key)
        except Exception:  # a bug of ours; the channel goes on either way
            _log.exception("run_store_message_dropped", store=self.where, why="its cancel failed")

    async def _guarded(self, pending: Any) -> Any:
        """Await a Redis call; a connection problem is RunStoreUnavailable, naming the store, never its password."""
        from redis.exceptions import RedisError

        try:
            return await pending
        except (RedisError, OSError) as exc:
            reason = f"{type(exc).__name__}: {exc}"
            for secret in self._secrets:
                reason = reason.replace(secret, MASK)
            raise RunStoreUnavailable(f"the run store {self.where} is unreachable: {reason}") from None

    def _connected(self) -> Redis:
        if self._client is None:
            raise RunStoreUnavailable(f"the run store {self.where} is not attached")
        return self._client

    def _run_key(self, run_id: str) -> str:
        return self._key("run", run_key(run_id))

    def _key(self, kind: str, name: str) -> str:
        return f"{self._prefix}{kind}:{name}"
