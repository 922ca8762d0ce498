"""Fixtures for the end-to-end suite: the installed `pytest-mcp` driven by the SDK's stdio client."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The helpers live beside this file; make them importable under any import mode.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tests.e2e.e2e_support import new_marker, processes_with


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def marker() -> str:
    """A unique string the sleeping test puts into its own and its grandchild's command line."""
    return new_marker()


@pytest.fixture(autouse=True)
def no_leftovers(tmp_path: Path, marker: str) -> Iterator[None]:
    """Nothing a test started may keep running; report (and then kill) any leftover by pid.

    Servers have the tmp project in their argv; the sleeper's pytest and grandchild carry the marker.
    On failure, every server's stderr is shown in the captured teardown output.
    """
    yield
    for log in sorted(tmp_path.glob("server-stderr-*.log")):
        print(f"--- {log.name} ---\n{log.read_text(errors='replace')}")
    left = {**processes_with(str(tmp_path)), **processes_with(marker)}
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"processes still running after the test: {left}"
