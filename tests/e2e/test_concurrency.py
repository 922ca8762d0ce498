"""Concurrent calls on one session are isolated: each gets its own exact answer; a full server says busy."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings
from tests.answers import call_error
from tests.e2e.e2e_support import (
    MARKER_ENV,
    processes_with,
    pytest_and_grandchild,
    pytest_oracle,
    sleeper_file,
    start_server,
    structured,
    wait_until_running,
    write_project,
    write_sleeper_project,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

PROJECT = {
    "test_a.py": """
        import time, pytest

        @pytest.mark.fast
        def test_a1(): time.sleep(0.3)
        @pytest.mark.slow
        def test_a2(): time.sleep(0.3)
        def test_a3(): time.sleep(0.3)
    """,
    "test_b.py": """
        import time, pytest

        def test_b_passes(): time.sleep(0.3)
        @pytest.mark.slow
        def test_b_fails():
            time.sleep(0.3)
            assert 1 == 2
    """,
    "test_c.py": """
        import time, pytest

        @pytest.mark.parametrize("n", [1, 2, 3, 4])
        def test_param(n):
            time.sleep(0.1)
            assert n != 3
    """,
}

# (arguments, the same selection as pytest command-line arguments)
SELECTIONS: list[tuple[dict[str, Any], list[str]]] = [
    ({"node_ids": ["test_a.py"]}, ["test_a.py"]),
    ({"node_ids": ["test_b.py"]}, ["test_b.py"]),
    ({"keywords": "param"}, ["-k", "param"]),
    ({"markers": "slow"}, ["-m", "slow"]),
    (
        {"node_ids": ["test_a.py::test_a1", "test_b.py::test_b_fails"]},
        ["test_a.py::test_a1", "test_b.py::test_b_fails"],
    ),
    ({"node_ids": ["test_c.py"], "keywords": "not 2"}, ["test_c.py", "-k", "not 2"]),
]
COUNT_KEYS = ("passed", "failed", "skipped", "xfailed", "xpassed", "errors", "deselected")


@asynccontextmanager
async def stdio_session(root: Path, tmp_path: Path) -> AsyncIterator[Client]:
    async with start_server(root, tmp_path, "--max-concurrent-runs", "6").client() as client:
        yield client


@asynccontextmanager
async def in_process_session(root: Path, tmp_path: Path) -> AsyncIterator[Client]:
    container = create_container(Settings(root=root, max_concurrent_runs=6))
    async with Client(container.tool_server().server) as client:
        yield client


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, int]]:
    """What plain pytest counts for each selection, on a copy of the project of its own.

    Once for both sessions, three at a time: run one after another for each session, the six
    oracles were 12 of the test's 17 s under load (pytest's start, and the projects' sleeps).
    """
    root = write_project(tmp_path_factory.mktemp("oracle") / "proj", PROJECT)
    with ThreadPoolExecutor(max_workers=3) as pool:
        return list(pool.map(lambda argv: pytest_oracle(root, *argv)[1], [argv for _, argv in SELECTIONS]))


@pytest.mark.parametrize("session", [stdio_session, in_process_session], ids=["stdio", "in-process"])
async def test_six_simultaneous_calls_get_exact_distinct_answers(
    tmp_path: Path, session: Any, expected: list[dict[str, int]]
) -> None:
    root = write_project(tmp_path / "proj", PROJECT)
    answers: dict[int, dict[str, Any]] = {}

    async with session(root, tmp_path) as client:

        async def call(index: int, arguments: dict[str, Any]) -> None:
            answers[index] = structured(await client.call_tool("execute_tests", {**arguments, "detail": "all"}))

        started = time.monotonic()
        async with anyio.create_task_group() as group:
            for index, (arguments, _) in enumerate(SELECTIONS):
                group.start_soon(call, index, arguments)
        elapsed = time.monotonic() - started

    for index, counts in enumerate(expected):
        summary = answers[index]["summary"]
        assert {key: summary[key] for key in COUNT_KEYS} == {key: counts.get(key, 0) for key in COUNT_KEYS}, SELECTIONS[
            index
        ][0]
    node_id_sets = [frozenset(t["node_id"] for t in answers[i]["tests"]) for i in range(len(SELECTIONS))]
    assert len(set(node_id_sets)) == len(SELECTIONS), "two different selections got the same answer"
    assert answers[4]["tests"][0]["node_id"] == "test_a.py::test_a1"
    serial_floor = sum(a["summary"]["duration"] for a in answers.values())
    assert elapsed < serial_floor + 10  # a generous bound: the calls were not serialised behind one another


async def test_a_call_that_gets_no_run_slot_in_time_is_told_the_server_is_busy(tmp_path: Path, marker: str) -> None:
    root = write_sleeper_project(tmp_path / "proj", marker)
    server = start_server(root, tmp_path, "--max-concurrent-runs", "1", env={MARKER_ENV: marker})
    async with server.client() as client, anyio.create_task_group() as group:
        occupant = anyio.CancelScope()

        async def occupy() -> None:
            with occupant:
                await client.call_tool("execute_tests", {"node_ids": [sleeper_file(marker)], "timeout": 60})

        group.start_soon(occupy)
        await wait_until_running(marker)
        pytest_processes_before = len(pytest_and_grandchild(marker)[0])

        started = time.monotonic()
        error = await call_error(client, "execute_tests", {"node_ids": ["test_quick.py"], "timeout": 2})
        waited = time.monotonic() - started

        assert error.code == -32000
        assert error.data["reason"] == "busy"
        assert "the server is busy: 1 run is already in progress" in error.message
        assert 1.5 < waited < 6
        assert len(pytest_and_grandchild(marker)[0]) == pytest_processes_before
        occupant.cancel()
    assert not processes_with(marker)
