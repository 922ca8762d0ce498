"""Fixtures for the security suite; the trapped project itself lives in trapped_project.py."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from mcp import Client

from tests.security.trapped_project import TrappedProject, build_trapped_project, server_parameters


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def trapped(tmp_path_factory: pytest.TempPathFactory) -> TrappedProject:
    return build_trapped_project(tmp_path_factory.mktemp("trapped"))


@pytest.fixture(scope="module")
async def session(trapped: TrappedProject) -> AsyncIterator[Client]:
    async with Client(server_parameters(trapped), mode="legacy") as client:
        yield client
