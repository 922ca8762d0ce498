"""Fixtures for the security suite; the trapped project itself lives in trapped_project.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from tests.linked_venvs import PYTEST_AND_ITS_DEPENDENCIES, venv_with
from tests.security.trapped_project import TrappedProject, build_trapped_project, server_parameters


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A target venv of pytest alone, linked (tests/linked_venvs.py), for tests whose runs need nothing else.

    The dev venv's hypothesis, anyio, trio and xdist entry points cost every start of pytest there about
    1.6 s of CPU; what these tests check (what an answer carries) does not depend on those plugins.
    """
    return venv_with(tmp_path_factory.mktemp("bare-venv"), PYTEST_AND_ITS_DEPENDENCIES)


@pytest.fixture(scope="module")
def trapped(tmp_path_factory: pytest.TempPathFactory) -> TrappedProject:
    return build_trapped_project(tmp_path_factory.mktemp("trapped"))


@pytest.fixture(scope="module")
async def session(trapped: TrappedProject) -> AsyncIterator[Client]:
    async with Client(server_parameters(trapped), mode="legacy") as client:
        yield client
