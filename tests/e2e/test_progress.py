"""Progress notifications end to end: over stdio and streamable HTTP, rate-limited, final one last."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from test_http import connect, http_server

from tests.e2e.e2e_support import start_server, structured, write_project

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SUITE = {
    "test_steps.py": """
        import time, pytest

        @pytest.mark.parametrize("i", range(40))
        def test_step(i):
            time.sleep(0.03)
            assert i % 10 != 3
    """
}


class Progress:
    def __init__(self) -> None:
        self.updates: list[tuple[float, float | None, str | None]] = []
        self.started = time.monotonic()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.updates.append((progress, total, message))


def check(progress: Progress, result: dict[str, Any]) -> None:
    elapsed = time.monotonic() - progress.started
    updates = progress.updates
    assert updates, "no progress notification arrived"
    done = [update[0] for update in updates]
    assert done == sorted(done), "progress went backwards"
    assert updates[-1] == (40, 40, "40/40 \u2014 4 failed")
    assert all(total == 40 for _, total, _ in updates)
    assert len(updates) <= elapsed * 4 + 2, f"{len(updates)} updates in {elapsed:.1f}s is not rate-limited"
    assert result["summary"]["failed"] == 4


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_progress_arrives_over_stdio(tmp_path: Path, mode: str) -> None:
    root = write_project(tmp_path / "proj", SUITE)
    progress = Progress()

    async with start_server(root, tmp_path).client(mode) as client:
        result = structured(await client.call_tool("execute_tests", {}, progress_callback=progress))

    check(progress, result)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_progress_arrives_over_streamable_http(tmp_path: Path, mode: str) -> None:
    root = write_project(tmp_path / "proj", SUITE)
    progress = Progress()

    with http_server(root, tmp_path, "--transport", "http") as server:
        async with connect(server, mode) as client:
            result = structured(await client.call_tool("execute_tests", {}, progress_callback=progress))

    check(progress, result)
