"""What idle HTTP sessions put in front of the garbage collector, and what a full collection costs then (issue 46).

    .venv/bin/python bench/gc_census.py                    # this tree
    .venv/bin/python bench/gc_census.py --baseline 9878c25 # and the tree at that commit

A server (`--transport http --max-sessions 1024 --max-connections 2048`, a share of 1,024) runs
under this script's `--serve` launcher, which answers commands on a pipe from a thread of the
server's process: a *census* (a full collection first, then every object the collector tracks,
counted by type, and how many are frozen), and a *timed collection* (`gc.collect()` five times,
each timed by `time.thread_time`, the CPU of the thread that collects: a collection holds the
GIL, so this is how long the event loop would wait, less any time the thread had no core).
Both are taken with no session, and with 1,000 (each `initialize` + `notifications/initialized`,
as `bench/sessions.py` opens them), without and with the GET stream the SDK client keeps open.
The server's own collections are counted too (`gc.callbacks`), by generation, with the CPU of
the longest, from its start to the end of the census. The launcher also takes `freeze` and
`unfreeze` (collected after), which showed what a closed session leaves frozen: 32 objects that
die in cycles, 40 with its GET stream. Writes bench/results/gc_census.md (and .json).
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
import baseline
from harness import free_port, healthy, server_env, stopped
from sessions import SESSIONS, client, concurrently, open_session

BENCH = Path(__file__).resolve().parent
TIMED = 5
TOP = 25


def serve(arguments: list[str]) -> None:
    """The launcher: pytest-mcp's `main` in this process, and a thread answering commands on stdin."""
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever the server prints goes to stderr, never into the answers
    collections_seen: list[tuple[int, float]] = []  # (generation, thread CPU seconds)
    started: list[float] = [0.0]

    def collecting(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.thread_time()
        else:
            collections_seen.append((info["generation"], time.thread_time() - started[0]))

    gc.callbacks.append(collecting)

    def census() -> dict[str, Any]:
        gc.callbacks.remove(collecting)  # ours, not the server's
        try:
            gc.collect()
        finally:
            gc.callbacks.append(collecting)
        objects = gc.get_objects()
        by_type = collections.Counter(type(o).__name__ for o in objects)
        total = len(objects)
        del objects
        return {"tracked": total, "frozen": gc.get_freeze_count(), "by_type": dict(by_type)}

    def timed() -> dict[str, Any]:
        gc.callbacks.remove(collecting)  # ours, not the server's
        try:
            seconds = []
            for _ in range(TIMED):
                before = time.thread_time()
                gc.collect()
                seconds.append(time.thread_time() - before)
        finally:
            gc.callbacks.append(collecting)
        return {"full_collection_ms": sorted(round(s * 1000, 1) for s in seconds)}

    def collected() -> dict[str, Any]:
        seen = list(collections_seen)
        return {
            "server_collections": collections.Counter(str(g) for g, _ in seen),
            "server_longest_ms": {
                str(g): sorted((round(s * 1000, 1) for gen, s in seen if gen == g), reverse=True)[:5] for g in (0, 1, 2)
            },
            "threshold": gc.get_threshold(),
        }

    def freeze() -> dict[str, Any]:
        gc.collect()
        gc.freeze()
        return {"frozen": gc.get_freeze_count()}

    def unfreeze() -> dict[str, Any]:
        frozen = gc.get_freeze_count()
        gc.unfreeze()
        return {"frozen": frozen, "collected": gc.collect(), "tracked": len(gc.get_objects())}

    def answer() -> None:
        for line in sys.stdin:
            command = line.strip()
            commands = {"census": census, "timed": timed, "collected": collected}
            commands |= {"freeze": freeze, "unfreeze": unfreeze}
            result = commands[command]()
            answers.write(json.dumps(result) + "\n")

    threading.Thread(target=answer, daemon=True).start()
    sys.argv = ["pytest-mcp", *arguments]
    from pytest_mcp.cli import main as run

    run()


class Launched:
    def __init__(self, pythonpath: Path | None, root: Path) -> None:
        self.port = free_port()
        env = server_env(pythonpath)
        argv = [sys.executable, __file__, "--serve", "--", "--python", sys.executable, "--root", str(root)]
        argv += ["--transport", "http", "--port", str(self.port), "--log-level", "warning"]
        # One client opens them all: its share must be every session (the default is half).
        argv += ["--max-sessions", "1024", "--max-connections", "2048", "--max-sessions-per-client", "1024"]
        self.process = subprocess.Popen(
            argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def ask(self, command: str) -> dict[str, Any]:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())  # type: ignore[no-any-return]

    async def started(self) -> None:
        await healthy(self.url, 600)

    def stop(self) -> None:
        stopped(self.process)


async def measure(pythonpath: Path | None, root: Path, with_streams: bool) -> dict[str, Any]:
    server = Launched(pythonpath, root)
    try:
        await server.started()
        await anyio.sleep(0.5)
        at_zero = server.ask("census")
        timed_zero = server.ask("timed")
        refusals: collections.Counter[str] = collections.Counter()
        async with client() as http, anyio.create_task_group() as streams:
            held = streams if with_streams else None
            await concurrently(SESSIONS, lambda: open_session(http, server.url, held, refusals))
            await anyio.sleep(1.0)
            at_full = await anyio.to_thread.run_sync(server.ask, "census")
            timed_full = await anyio.to_thread.run_sync(server.ask, "timed")
            seen = await anyio.to_thread.run_sync(server.ask, "collected")
            streams.cancel_scope.cancel()
        grown = collections.Counter(at_full["by_type"])
        grown.subtract(at_zero["by_type"])
        return {
            "streams": with_streams,
            "tracked_0": at_zero["tracked"],
            "tracked_1000": at_full["tracked"],
            "frozen": at_full["frozen"],
            "per_session": (at_full["tracked"] - at_zero["tracked"]) / SESSIONS,
            "full_collection_ms_0": timed_zero["full_collection_ms"],
            "full_collection_ms_1000": timed_full["full_collection_ms"],
            "top_at_0": collections.Counter(at_zero["by_type"]).most_common(TOP),
            "top_per_session": [(name, count / SESSIONS) for name, count in grown.most_common(TOP)],
            "refused": sum(refusals.values()),
            **seen,
        }
    finally:
        server.stop()


def render(results: dict[str, list[dict[str, Any]]]) -> str:
    lines = [
        "# What idle sessions cost the garbage collector (issue 46)",
        "",
        "`bench/gc_census.py`; see its docstring. Objects are those the collector tracks; a full collection's "
        f"time is the CPU of the thread doing it (`time.thread_time`), min / median / max of {TIMED}.",
        "",
        "| tree | GET streams | tracked at 0 | at 1,000 sessions | per session | frozen | full collection at 0, ms "
        "| at 1,000, ms | refused |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def spread(values: list[float]) -> str:
        return f"{values[0]} / {values[len(values) // 2]} / {values[-1]}"

    for label, rows in results.items():
        for row in rows:
            lines.append(
                f"| {label} | {'yes' if row['streams'] else 'no'} | {row['tracked_0']:,} | {row['tracked_1000']:,} "
                f"| {row['per_session']:.0f} | {row['frozen']:,} | {spread(row['full_collection_ms_0'])} "
                f"| {spread(row['full_collection_ms_1000'])} | {row['refused']} |"
            )
    for label, rows in results.items():
        for row in rows:
            if not row["top_per_session"] or row["tracked_1000"] == 0:
                continue  # everything frozen: nothing by type to show
            per = ", ".join(f"{name} {count:.1f}" for name, count in row["top_per_session"][:15])
            lines += ["", f"Per session, {label}, {'with' if row['streams'] else 'without'} GET streams: {per}."]
            at_zero = ", ".join(f"{name} {count:,}" for name, count in row["top_at_0"][:12])
            lines += ["", f"At 0 sessions: {at_zero}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", help="also measure the tree at this commit")
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "gc_census.md")
    args = parser.parse_args()
    versions: list[tuple[str, Path | None]] = []
    if args.baseline:
        short, copy = baseline.build(args.baseline)
        versions.append((f"@{short}", copy))
    versions.append(("this tree", None))
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pytest.ini").write_text("[pytest]\n")
        (root / "test_ok.py").write_text("def test_ok():\n    pass\n")
        for label, pythonpath in versions:
            results[label] = [anyio.run(measure, pythonpath, root, streams) for streams in (False, True)]
    args.out.write_text(render(results))
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
    print(render(results))


if __name__ == "__main__":
    main()
