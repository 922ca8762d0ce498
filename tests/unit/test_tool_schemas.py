"""The published tool contract: the shipped schemas are exactly what the models generate."""

from __future__ import annotations

import pytest
from mcp import Client
from pydantic import BaseModel

from pytest_mcp.adapters.mcp.schemas import TOOL_REQUESTS, generated_schemas, shipped_schemas
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


def _walk(node: object) -> list[tuple[str, object]]:
    """Every (key, value) pair in a JSON document, at any depth."""
    if isinstance(node, dict):
        return [(key, value) for key, value in node.items()] + [
            pair for value in node.values() for pair in _walk(value)
        ]
    if isinstance(node, list):
        return [pair for item in node for pair in _walk(item)]
    return []


def test_the_published_schemas_hold_no_reference_and_no_format_of_pydantics_own() -> None:
    """TypeScript SDK 1.22.0 drops $defs, then fails on every $ref; 1.21+ warns about "format": "path"."""
    import jsonschema

    for name, schemas in shipped_schemas().items():
        for kind, schema in schemas.items():
            keys = {key for key, _ in _walk(schema)}
            assert "$ref" not in keys, f"{name} {kind}"
            assert "$defs" not in keys, f"{name} {kind}"
            formats = {value for key, value in _walk(schema) if key == "format"}
            assert formats <= {"date-time", "uri", "email", "uuid"}, f"{name} {kind}: {formats}"
            jsonschema.Draft202012Validator.check_schema(schema)


def test_what_answers_always_carry_is_required_by_the_output_schemas() -> None:
    from pytest_mcp.domain.models import DiscoveryResult, RunResult, Summary

    run = shipped_schemas()["execute_tests"]["output"]
    discovery = shipped_schemas()["discover_tests"]["output"]

    assert set(RunResult.always_present) <= set(run["required"])
    assert set(Summary.always_present) <= set(run["properties"]["summary"]["required"])
    assert set(DiscoveryResult.always_present) <= set(discovery["required"])
