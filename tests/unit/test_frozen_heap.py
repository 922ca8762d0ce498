"""The serving process's collection policy (ADR 0022): full collections walk only what is new.

These tests change this process's collector while they run, and give it back afterwards
(`heap` unfreezes everything and restores CPython's thresholds). No timing: what a collection
walks is counted in objects (`gc.get_objects()` lists exactly the objects it would walk).
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers

from pytest_mcp.adapters.frozen_heap import OLDEST_THRESHOLD, FrozenHeap
from pytest_mcp.cli import _serve
from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings


@pytest.fixture
def heap() -> Iterator[FrozenHeap]:
    thresholds = gc.get_threshold()
    made = FrozenHeap(growth=1.25, limit=2.0, quiet_seconds=60)
    try:
        yield made
    finally:
        made.stop()
        gc.unfreeze()
        gc.set_threshold(*thresholds)


class Node:
    """Tracked, weakly referable, and able to sit in a cycle."""

    def __init__(self) -> None:
        self.other: Node | None = None


def test_a_full_collection_walks_only_what_has_not_lived_through_one(heap: FrozenHeap) -> None:
    heap.start()
    alive = [Node() for _ in range(20_000)]  # a thousand idle sessions' worth of objects, in kind

    gc.collect()

    # Without the policy, every object of this process is walked again (over 100,000 here).
    assert len(gc.get_objects()) < 1_000
    assert gc.get_freeze_count() > len(alive)


def test_a_thaw_frees_what_died_in_a_cycle_while_frozen(heap: FrozenHeap) -> None:
    heap.start()
    first, second = Node(), Node()
    first.other, second.other = second, first
    gone = weakref.ref(first)
    gc.collect()  # both survive it: frozen
    del first, second

    gc.collect()
    assert gone() is not None, "a frozen cycle is not walked, so not freed"

    heap.thaw()
    assert gone() is None


def test_a_thaw_is_due_at_a_quarter_more_when_quiet_and_at_as_much_again_otherwise(heap: FrozenHeap) -> None:
    heap.start()
    kept = gc.get_freeze_count()
    assert not heap.due(idle_seconds=3600)

    more = [Node() for _ in range(kept // 4 + 1_000)]
    gc.collect()
    assert heap.due(idle_seconds=60)
    assert not heap.due(idle_seconds=59)
    assert not heap.due(idle_seconds=0)

    more += [Node() for _ in range(kept)]
    gc.collect()
    assert heap.due(idle_seconds=0)

    heap.thaw()
    assert not heap.due(idle_seconds=3600)
    assert len(more) > kept


def test_stopping_gives_the_collector_back(heap: FrozenHeap) -> None:
    before = gc.get_threshold()
    heap.start()
    assert gc.get_threshold() == (*before[:2], OLDEST_THRESHOLD)

    heap.stop()

    assert gc.get_threshold() == before
    assert not any(getattr(callback, "__self__", None) is heap for callback in gc.callbacks)


def test_growth_must_be_above_one_and_at_most_the_limit() -> None:
    with pytest.raises(ValueError, match="growth must be above 1"):
        FrozenHeap(growth=1.0)
    with pytest.raises(ValueError, match="at most the limit"):
        FrozenHeap(growth=3.0, limit=2.0)


def test_the_server_serves_with_its_heap_frozen_and_gives_it_back(tmp_path: Path) -> None:
    thresholds = gc.get_threshold()
    container = create_container(Settings(root=tmp_path, runner="fake"))
    seen: dict[str, Any] = {}

    class Transport:
        async def serve(self, tool_server: Any) -> int:
            gc.collect()
            seen["frozen"] = gc.get_freeze_count()
            seen["walked"] = len(gc.get_objects())
            seen["threshold"] = gc.get_threshold()
            return 0

    container.transport.override(providers.Object(Transport()))
    try:
        assert _serve(container) == 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)

    # Before the policy, nothing was frozen and every collection walked the whole process.
    assert seen["frozen"] > 50_000
    assert seen["walked"] < 1_000
    assert seen["threshold"][2] == OLDEST_THRESHOLD
    assert gc.get_threshold() == thresholds
