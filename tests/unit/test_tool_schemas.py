"""The published tool contract: the shipped schemas are exactly what the models generate."""

from __future__ import annotations

import pytest
from mcp import Client
from pydantic import BaseModel

from pytest_mcp.adapters.mcp.tool_server import TOOL_REQUESTS, generated_schemas, shipped_schemas
from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings


def test_the_shipped_tool_schemas_are_the_ones_the_models_generate() -> None:
    assert shipped_schemas() == generated_schemas(), (
        "a request or result model changed what agents see: run `.venv/bin/python scripts/write-tool-schemas` "
        "and review the diff of src/pytest_mcp/adapters/mcp/tool_schemas.json"
    )
    assert list(shipped_schemas()) == list(TOOL_REQUESTS)


@pytest.mark.anyio
async def test_listing_the_tools_generates_no_schema(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a schema was generated at start-up")

    monkeypatch.setattr(BaseModel, "model_json_schema", classmethod(refuse))
    container = create_container(Settings(root=tmp_path, runner="fake"))
    async with Client(container.tool_server().server) as client:
        tools = (await client.list_tools()).tools

    assert [tool.name for tool in tools] == list(TOOL_REQUESTS)
    execute = tools[0].input_schema
    assert execute["properties"]["timeout"]["anyOf"][0]["maximum"] == container.policy().max_timeout
