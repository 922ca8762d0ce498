"""What holds up the event loop: runs the server with every slow loop callback timed and sampled (issue 46).

    .venv/bin/python bench/loop_stalls.py OUT.json -- pytest-mcp's arguments

A launcher, not a measurement of its own: it starts `pytest_mcp.cli.main` in this process after
wrapping `asyncio.Handle._run` (every callback the loop runs, task steps included) with a clock,
and starting a thread that, while one callback has been running for more than 5 ms, samples the
loop thread's stack every 2 ms. OUT.json gets every callback that took more than 20 ms (its
duration, when it ended by time.time(), what it was, and the stacks most often sampled during
it) and every sampled stack, innermost frame first, then the calling frames of our code and
the standard library, with how often each was seen: what runs on the loop, and for how long.
`loop_latency.py --stalls` uses it.
A garbage collection holds the GIL, so no sample is taken during one: `gc_ms` gives the longest
collections of each generation (wall), `gc_cpu_ms` the same by the collecting thread's CPU (what load does
not stretch), `gc_count` how many ran, `gc_over_slow` each collection over 20 ms (wall):
when it ended (time.time(), to set beside the windows `loop_latency.py --stalls` writes), wall ms, CPU ms, generation.
Samples need the GIL: a callback that holds it is seen every switch interval (5 ms) at worst.
"""

from __future__ import annotations

import asyncio.events
import atexit
import collections
import gc
import json
import sys
import threading
import time
import traceback

SLOW = 0.020
SAMPLE_AFTER = 0.005
SAMPLE_EVERY = 0.002


def main() -> None:
    out, _, arguments = sys.argv[1], sys.argv[2], sys.argv[3:]
    running: dict[str, object] = {"since": None}
    seen: list[str] = []  # the stacks sampled during the callback running now
    slow: list[tuple[float, float, str, list[tuple[str, int]]]] = []  # (ms, time.time() at the end, what, stacks)
    stacks: collections.Counter[str] = collections.Counter()
    loop_thread = threading.get_ident()
    original = asyncio.events.Handle._run

    def timed(self: asyncio.events.Handle) -> None:
        started = time.perf_counter()
        running["since"] = started
        seen.clear()
        try:
            original(self)
        finally:
            running["since"] = None
            took = time.perf_counter() - started
            if took > SLOW:
                during = collections.Counter(seen).most_common(3)
                slow.append((round(took * 1000, 1), round(time.time(), 3), repr(self)[:300], during))

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]

    collections_ms: list[tuple[float, int, int]] = []  # (ms, generation, objects collected)
    long_collections: list[tuple[float, float, float, int]] = []  # (time.time() at the end, ms, CPU ms, generation)
    gc_started = [0.0, 0.0]  # perf_counter, thread_time
    gc_cpu_ms: list[tuple[float, int]] = []  # (CPU ms of the collecting thread, generation)

    def collecting(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc_started[:] = [time.perf_counter(), time.thread_time()]
        else:
            cpu = round((time.thread_time() - gc_started[1]) * 1000, 2)
            gc_cpu_ms.append((cpu, info["generation"]))
            took = time.perf_counter() - gc_started[0]
            collections_ms.append((round(took * 1000, 2), info["generation"], info["collected"]))
            if took > SLOW:
                long_collections.append((round(time.time(), 2), round(took * 1000, 1), cpu, info["generation"]))

    gc.callbacks.append(collecting)

    def sample() -> None:
        while True:
            time.sleep(SAMPLE_EVERY)
            since = running["since"]
            if since is None or time.perf_counter() - since < SAMPLE_AFTER:  # type: ignore[operator]
                continue
            frame = sys._current_frames().get(loop_thread)
            if frame is None:
                continue
            frames = traceback.extract_stack(frame)
            ours = [f for f in frames if "pytest_mcp" in f.filename or "/site-packages/" not in f.filename]
            innermost = frames[-1]
            key = " <- ".join(
                [f"{innermost.filename.rsplit('/', 2)[-1]}:{innermost.name}"]
                + [f"{f.filename.rsplit('/', 1)[-1]}:{f.name}" for f in reversed(ours[-6:])]
            )
            stacks[key] += 1
            seen.append(key)

    def dump() -> None:
        data = {
            "slow_callbacks_ms": sorted(slow, reverse=True),
            "sample_every_ms": SAMPLE_EVERY * 1000,
            "stacks": stacks.most_common(60),
            "gc_ms": {
                str(generation): sorted((ms for ms, g, _ in collections_ms if g == generation), reverse=True)[:20]
                for generation in (0, 1, 2)
            },
            "gc_count": collections.Counter(str(g) for _, g, _ in collections_ms),
            "gc_cpu_ms": {
                str(generation): sorted((ms for ms, g in gc_cpu_ms if g == generation), reverse=True)[:20]
                for generation in (0, 1, 2)
            },
            "gc_over_slow": long_collections,
        }
        with open(out, "w") as handle:
            json.dump(data, handle, indent=1)

    threading.Thread(target=sample, daemon=True).start()
    atexit.register(dump)
    sys.argv = ["pytest-mcp", *arguments]
    from pytest_mcp.cli import main as serve

    try:
        serve()
    finally:
        dump()


if __name__ == "__main__":
    main()
