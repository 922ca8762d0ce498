"""Fixtures for the packaging tests: what users install, built and installed as they do."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
