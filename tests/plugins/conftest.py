"""Fixtures of the plugin matrix (issue 19): its target environments, built once and cached."""

from __future__ import annotations

import pytest

from tests.plugins.support import Environment, environments, ready


@pytest.fixture(scope="session")
def plugin_envs() -> dict[str, Environment]:
    """Every environment of environments.toml, built in parallel (or found in .cache/plugins/)."""
    return ready()


@pytest.fixture(params=list(environments()))
def env(request: pytest.FixtureRequest, plugin_envs: dict[str, Environment]) -> Environment:
    return plugin_envs[request.param]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
