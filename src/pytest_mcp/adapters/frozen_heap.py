"""The serving process's garbage-collection policy: collections walk only what is new (ADR 0022, issue 46).

CPython's cyclic collector walks every object it tracks in a full (generation 2) collection,
and holds the GIL while it does: the event loop waits for it, whichever thread set it off.
With 1,000 idle HTTP sessions the server tracks about 300,000 objects (95,000 from start-up,
about 200 per session, 585 with the GET stream the SDK client keeps); a full collection then
took 350 ms of CPU (890 ms with the streams), and 20 runs ending together set off seven of them
(`bench/gc_census.py`, `bench/loop_stalls.py`).

Most of those objects live as long as the server or a session. `gc.freeze()` moves every
tracked object into a permanent generation that no collection walks. A frozen object is still
freed as soon as nothing refers to it; only one that dies in a reference cycle stays until it
is unfrozen (a closed session leaves about 32 such objects: timers, contexts, their cells).
So `FrozenHeap`:

- freezes the start-up heap (modules, classes, schemas) before serving;
- freezes the survivors of every full collection, from the collector's own `stop` callback:
  the next full collection walks only what has lived through one since (0.1 ms of CPU at
  1,000 idle sessions, against 350 ms), and full collections come five times as often
  (`OLDEST_THRESHOLD`), so that each walks less;
- *thaws* (unfreezes, collects everything, freezes again) once what it froze since the last
  thaw is a quarter of what that thaw kept, and no call or run has been in flight for a minute;
  whatever the calls, once it is as much again. A thaw is one full collection, as long as one
  of those it replaces, but rare, and at a moment when no call waits on the loop; it frees what
  died frozen, so that the memory of closed sessions is reused as before (issue 45).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import anyio

GROWTH = 1.25
"""Thaw, at a quiet moment, once the objects frozen since the last thaw are a quarter of what it kept."""
LIMIT = 2.0
"""Thaw whatever the runs once they are as many as it kept: what died frozen stays below the live heap."""
QUIET_SECONDS = 60.0
"""A moment is quiet when no call or run has been in flight for this long. 5 s was too short on a
loaded machine: 20 answers were still reaching their clients 9 s after the last call had returned."""
CHECK_EVERY = 1.0
OLDEST_THRESHOLD = 1
"""A full collection after every second collection of the middle generation, not every eleventh
(CPython's 10): each then walks up to 14,000 new survivors during 20 runs, not 30,000 to 50,000."""


class FrozenHeap:
    """`start()` once the server is built, `keep()` while it serves, `stop()` after."""

    def __init__(self, growth: float = GROWTH, limit: float = LIMIT, quiet_seconds: float = QUIET_SECONDS) -> None:
        if not 1 < growth <= limit:
            raise ValueError(f"growth must be above 1 and at most the limit ({limit}), not {growth}")
        self._growth = growth
        self._limit = limit
        self._quiet_seconds = quiet_seconds
        self._kept = 0  # objects frozen by the last thaw (or start-up): growth is measured against it
        self._frozen = 0  # objects frozen since, as counted when frozen: what died by its count is still in
        self._thawing = False
        self._thresholds: tuple[int, int, int] | None = None  # CPython's, while started
        self.thaws = 0

    def start(self) -> None:
        self._thresholds = gc.get_threshold()
        young, middle, _ = self._thresholds
        gc.set_threshold(young, middle, OLDEST_THRESHOLD)
        self.thaw()
        gc.callbacks.append(self._collected)

    def stop(self) -> None:
        """Collections go back to CPython's rule; what is frozen stays frozen (a process that stops
        serving exits: walking the whole heap once more would only delay that)."""
        if self._collected in gc.callbacks:
            gc.callbacks.remove(self._collected)
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None

    def due(self, idle_seconds: float) -> bool:
        """Whether to thaw now, when no run has been in flight for `idle_seconds` (0 while one is)."""
        quiet = idle_seconds >= self._quiet_seconds
        return self._frozen > self._kept * ((self._growth if quiet else self._limit) - 1)

    def thaw(self) -> None:
        """One full collection of everything, frozen or not, and what survives it frozen again."""
        self._thawing = True
        try:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            # Once more, over nothing: CPython runs a full collection only when a quarter as many
            # objects as the last one kept have reached the oldest generation since, and that
            # one kept everything. Left so, the next would wait for 50,000 objects at 1,000
            # sessions, and walk them all at once (150 ms on the loaded machine).
            gc.collect()
        finally:
            self._thawing = False
        self._kept = gc.get_freeze_count()  # walks the frozen list: cheap next to the collection
        self._frozen = 0
        self.thaws += 1

    async def keep(self, idle_seconds: Callable[[], float]) -> None:
        """Thaw when `due`, checked every second on the loop, until cancelled."""
        while True:
            await anyio.sleep(CHECK_EVERY)
            if self.due(idle_seconds()):
                self.thaw()

    def _collected(self, phase: str, info: dict[str, Any]) -> None:
        # Called by the collector, with the GIL, in whichever thread set it off: it must not
        # collect. After a full collection the younger generations are empty, so freezing now
        # freezes its survivors only. They are counted before (gc.get_freeze_count() would walk
        # every frozen object: 55 ms at 1,000 sessions); survivors that later die by their count
        # are not subtracted, so a thaw may come early, never late.
        if phase != "stop" or info["generation"] != 2 or self._thawing:
            return
        self._frozen += len(gc.get_objects(generation=2))
        gc.freeze()
