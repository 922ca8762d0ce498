"""The tools' published schemas: generated from their models, shipped in tool_schemas.json."""

from __future__ import annotations

import json
import typing
from importlib import resources
from typing import Any

from pydantic import BaseModel

from pytest_mcp.adapters.mcp.tools import TOOLS, ToolRequest

SCHEMAS_FILE = "tool_schemas.json"

TOOL_REQUESTS: dict[str, type[ToolRequest]] = {tool.name: tool.request_type for tool in TOOLS}
"""Each tool's request model, in the order the tools are listed."""


def generated_schemas() -> dict[str, dict[str, Any]]:
    """Each tool's input schema (before the policy's limits) and output schema, from its models.

    Written for every client, not only ours: every `$ref` is inlined (TypeScript SDK 1.22.0
    drops `$defs`, then cannot list the tools at all), only JSON Schema's own formats are kept
    (pydantic's `"format": "path"` makes the TypeScript SDK warn, or skip validating), and the
    fields an answer always carries are `required`.
    """
    schemas: dict[str, dict[str, Any]] = {}
    for tool in TOOLS:
        output = _portable(_requiring_always_present(tool.answer_type()))
        output.pop("title", None)
        schemas[tool.name] = {"input": _portable(tool.request_type.base_schema()), "output": output}
    return schemas


def shipped_schemas() -> dict[str, dict[str, Any]]:
    """`generated_schemas()` as shipped in tool_schemas.json, the published tool contract.

    Generating them takes about 7 ms of every start-up; reading them, well under 1 ms. The file
    is also the contract under review: a model change that alters what agents see shows up in
    its diff. `tests/unit/test_tool_schemas.py` fails when the file and the models disagree, and
    `scripts/write-tool-schemas` rewrites it.
    """
    text = resources.files(__package__).joinpath(SCHEMAS_FILE).read_text(encoding="utf-8")
    schemas: dict[str, dict[str, Any]] = json.loads(text)
    return schemas


# JSON Schema's own formats (draft 2020-12); a validator may reject or warn on any other.
_STANDARD_FORMATS = frozenset(
    {
        *("date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname"),
        *("ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template"),
        *("json-pointer", "relative-json-pointer", "regex"),
    }
)


def _requiring_always_present(model: type[BaseModel]) -> dict[str, Any]:
    """The model's schema, with each model's `always_present` fields added to its `required`."""
    schema = model.model_json_schema()
    models = {model.__name__: model}
    pending = list(models.values())
    while pending:  # every model the schema mentions, by the name pydantic gives its definition
        for field in pending.pop().model_fields.values():
            for candidate in _models_in(field.annotation):
                if candidate.__name__ not in models:
                    models[candidate.__name__] = candidate
                    pending.append(candidate)
    for name, candidate in models.items():
        definition = schema if candidate is model else schema.get("$defs", {}).get(name)
        always = sorted(getattr(candidate, "always_present", ()))
        if definition is not None and always:
            definition["required"] = [
                *definition.get("required", []),
                *(f for f in always if f not in definition.get("required", [])),
            ]
    return schema


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for argument in typing.get_args(annotation) for model in _models_in(argument)]


def _portable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every `$ref` replaced by its definition, and only JSON Schema's own formats."""
    definitions = schema.get("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                name = node["$ref"].removeprefix("#/$defs/")
                return resolve({**definitions[name], **{k: v for k, v in node.items() if k != "$ref"}})
            return {
                key: resolve(value)
                for key, value in node.items()
                if key != "$defs" and not (key == "format" and value not in _STANDARD_FORMATS)
            }
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved
