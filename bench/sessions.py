"""What HTTP sessions cost the server, and what one client's flood of them does (issue 45).

    .venv/bin/python bench/sessions.py                    # this tree
    .venv/bin/python bench/sessions.py --baseline 316114f # and the tree at that commit, side by side

- `memory`: a server with `--max-sessions 1024 --max-connections 2048` (and a share of 1024); RSS (VmRSS) with no
  session, after 1,000 sessions (each `initialize` + `notifications/initialized`, as a client
  does, with or without the GET stream the SDK client keeps), after closing them all (DELETE),
  and after opening 1,000 again; the cost of a session is (RSS at 1,000 - RSS at 0) / 1,000.
- `flood`: a server with the defaults (256 sessions, 512 connections); one client opens 1,000
  sessions, 50 at a time, each with its GET stream; then how many opens were refused (and by
  which message), the server's CPU seconds for the flood, and whether a second client (from
  127.0.0.2) then opens a session and is answered.

Raw HTTP over httpx2 (the SDK's HTTP client), on loopback. Writes bench/results/sessions.md.
CPU seconds are the server's own (utime + stime), which other load on the machine disturbs less
than wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))
import baseline
from harness import free_port, healthy, server_env, stopped

REPO = Path(__file__).resolve().parent.parent
VERSION = "2025-11-25"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
SESSIONS = 1_000
BATCH = 50


class Server:
    def __init__(self, pythonpath: Path | None, root: Path, *args: str) -> None:
        self.port = free_port()
        env = server_env(pythonpath)
        argv = [sys.executable, *baseline.server_args(), "--python", sys.executable, "--root", str(root)]
        argv += ["--transport", "http", "--port", str(self.port), "--log-level", "warning", *args]
        self.process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def rss_kib(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    async def started(self) -> None:
        await healthy(self.url, 400)

    def stop(self) -> None:
        stopped(self.process)


def client(local_address: str = "127.0.0.1") -> httpx2.AsyncClient:
    # Idle connections expire before the server's keep-alive (5 s) closes them under a request.
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=4 * BATCH, keepalive_expiry=1.0)
    transport = httpx2.AsyncHTTPTransport(local_address=local_address, limits=limits)
    return httpx2.AsyncClient(transport=transport, headers=HEADERS, timeout=60)


def session_headers(session_id: str) -> dict[str, str]:
    return {"mcp-session-id": session_id, "mcp-protocol-version": VERSION}


async def open_session(http: httpx2.AsyncClient, url: str, streams: Any, refusals: Counter[str]) -> str | None:
    try:
        response = await http.post(url, json=INIT)
    except httpx2.TransportError as error:
        refusals[f"initialize: {type(error).__name__}"] += 1
        return None
    if response.status_code != 200:
        refusals[f"{response.status_code} {response.text[:120]}"] += 1
        return None
    session_id = response.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    try:
        await http.post(url, json=initialized, headers=session_headers(session_id))
    except httpx2.TransportError as error:
        refusals[f"initialized: {type(error).__name__}"] += 1
    if streams is not None:

        async def hold() -> None:
            try:
                async with http.stream("GET", url, headers=session_headers(session_id)) as stream:
                    async for _ in stream.aiter_bytes():
                        pass
            except httpx2.TransportError as error:
                refusals[f"GET stream: {type(error).__name__}"] += 1

        streams.start_soon(hold)
    return session_id


async def delete(http: httpx2.AsyncClient, url: str, session_id: str, refusals: Counter[str]) -> None:
    try:
        response = await http.delete(url, headers=session_headers(session_id))
    except httpx2.TransportError as error:
        refusals[f"DELETE: {type(error).__name__}"] += 1
        return
    if response.status_code != 200:
        refusals[f"DELETE: {response.status_code} {response.text[:120]}"] += 1


async def concurrently(count: int, one: Any) -> list[Any]:
    """`one()` called `count` times, at most `BATCH` at once; the results in order."""
    limiter = anyio.CapacityLimiter(BATCH)
    results: list[Any] = [None] * count

    async def call(index: int) -> None:
        async with limiter:
            results[index] = await one()

    async with anyio.create_task_group() as group:
        for index in range(count):
            group.start_soon(call, index)
    return results


async def settled(server: Server) -> int:
    await anyio.sleep(1.0)
    return server.rss_kib()


async def memory(pythonpath: Path | None, root: Path, with_streams: bool) -> dict[str, Any]:
    limits = ("--max-sessions", "1024", "--max-connections", "2048")
    # One client opens them all: its share must be every session (a baseline before issue 45 has no share).
    share = ("--max-sessions-per-client", "1024") if pythonpath is None else ()
    server = Server(pythonpath, root, *limits, *share)
    try:
        await server.started()
        refusals: Counter[str] = Counter()
        async with client() as http, anyio.create_task_group() as streams:
            at_zero = await settled(server)
            held = streams if with_streams else None
            opened = await concurrently(SESSIONS, lambda: open_session(http, server.url, held, refusals))
            at_full = await settled(server)
            ids = iter([session_id for session_id in opened if session_id])
            closing = len(opened) - opened.count(None)
            await concurrently(closing, lambda: delete(http, server.url, next(ids), refusals))
            streams.cancel_scope.cancel()
        async with client() as http, anyio.create_task_group() as streams:
            after_close = await settled(server)
            held = streams if with_streams else None
            await concurrently(SESSIONS, lambda: open_session(http, server.url, held, refusals))
            again = await settled(server)
            streams.cancel_scope.cancel()
        return {
            "streams": with_streams,
            "rss_0": at_zero,
            "rss_1000": at_full,
            "rss_closed": after_close,
            "rss_again": again,
            "per_session_kib": (at_full - at_zero) / SESSIONS,
            "refused": sum(refusals.values()),
            "refusals": dict(refusals.most_common(5)),
        }
    finally:
        server.stop()


async def flood(pythonpath: Path | None, root: Path) -> dict[str, Any]:
    server = Server(pythonpath, root)
    try:
        await server.started()
        refusals: Counter[str] = Counter()
        async with client() as http, client("127.0.0.2") as other, anyio.create_task_group() as streams:
            cpu = server.cpu_seconds()
            started = time.monotonic()
            await concurrently(SESSIONS, lambda: open_session(http, server.url, streams, refusals))
            wall = time.monotonic() - started
            cpu = server.cpu_seconds() - cpu
            theirs: Counter[str] = Counter()
            session_id = await open_session(other, server.url, None, theirs)
            answered = False
            if session_id:
                body = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
                ping = await other.post(server.url, json=body, headers=session_headers(session_id))
                answered = ping.status_code == 200
            streams.cancel_scope.cancel()
        return {
            "refused": sum(refusals.values()),
            "refusals": dict(refusals.most_common(3)),
            "cpu_seconds": round(cpu, 2),
            "wall_seconds": round(wall, 1),
            "other_client_answered": answered,
        }
    finally:
        server.stop()


async def measure(pythonpath: Path | None, with_memory: bool = True) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pytest.ini").write_text("[pytest]\n")
        (root / "test_ok.py").write_text("def test_ok():\n    pass\n")
        return {
            "memory": [await memory(pythonpath, root, False), await memory(pythonpath, root, True)]
            if with_memory
            else [],
            "flood": await flood(pythonpath, root),
        }


def render(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# Sessions: what one costs, and one client's flood (issue 45)",
        "",
        "`.venv/bin/python bench/sessions.py" + "`; see its docstring for what is measured.",
        "",
        "| tree | GET streams | RSS at 0 | at 1,000 sessions | per session | after closing all | 1,000 again "
        "| refused or failed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, result in results.items():
        for row in result["memory"]:
            lines.append(
                f"| {label} | {'yes' if row['streams'] else 'no'} | {row['rss_0'] / 1024:.0f} MiB | "
                f"{row['rss_1000'] / 1024:.0f} MiB | {row['per_session_kib']:.0f} KiB | "
                f"{row['rss_closed'] / 1024:.0f} MiB | {row['rss_again'] / 1024:.0f} MiB | {row['refused']} |"
            )
    lines += [
        "",
        "Flood with the defaults (256 sessions, 512 connections): 1,000 sessions from one client, 50 at a time, "
        "each with its GET stream, then a second client opens one and pings it.",
        "",
        "| tree | opens refused | refusals (count) | server CPU s | wall s | second client answered |",
        "|---|---|---|---|---|---|",
    ]
    for label, result in results.items():
        row = result["flood"]
        refusals = "; ".join(f"{text} ({count})" for text, count in row["refusals"].items()) or "none"
        lines.append(
            f"| {label} | {row['refused']} | {refusals} | {row['cpu_seconds']} | {row['wall_seconds']} | "
            f"{'yes' if row['other_client_answered'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", help="also measure the tree at this commit")
    parser.add_argument("--baseline-memory", action="store_true", help="measure the baseline's memory too")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "sessions.md")
    args = parser.parse_args()
    results: dict[str, dict[str, Any]] = {}
    if args.baseline:
        short, copy = baseline.build(args.baseline)
        results[f"@{short}"] = anyio.run(measure, copy, args.baseline_memory)
    results["this tree"] = anyio.run(measure, None)
    args.out.write_text(render(results))
    (args.out.with_suffix(".json")).write_text(json.dumps(results, indent=2) + "\n")
    print(render(results))


if __name__ == "__main__":
    main()
