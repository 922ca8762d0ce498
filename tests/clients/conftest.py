"""Fixtures of the client matrix: one project and one set of HTTP servers per module, one driver run per combination."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# The checks live in matrix.py, which is no test module: have pytest explain its failed asserts too.
pytest.register_assert_rewrite("tests.clients.matrix")

from tests.clients.matrix import PROJECT, Combo, Servers, run_calls, target  # noqa: E402
from tests.e2e.e2e_support import new_marker, processes_with, write_project  # noqa: E402


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each test of a ClientMatrix subclass runs once per combination in its COMBOS."""
    if "combo" in metafunc.fixturenames and metafunc.cls is not None:
        metafunc.parametrize("combo", metafunc.cls.COMBOS, scope="module")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("project"), PROJECT)


@pytest.fixture(scope="module")
def servers(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    with contextlib.ExitStack() as stack:
        yield Servers(root, tmp_path_factory.mktemp("server-logs"), stack)


@pytest.fixture(scope="module")
def where(combo: Combo, root: Path, servers: Servers) -> dict[str, Any]:
    """The driver's TARGET: the stdio command, or the URL of this module's server for the transport."""
    return target(combo, root, servers)


@pytest.fixture(scope="module")
def answers(combo: Combo, where: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What the client saw in the `calls` scenario, shared by the checks of one combination."""
    return run_calls(combo, where, tmp_path_factory.mktemp("driver") / f"{combo.id}.log")


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique string in the sleeping test's file name and its grandchild's argv; leftovers are killed after."""
    marker = new_marker()
    yield marker
    for pid in processes_with(marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
