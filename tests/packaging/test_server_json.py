"""server.json, the MCP Registry's entry, is valid against the registry's schema and true of this package."""

from __future__ import annotations

import copy
import json
import typing
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from pytest_mcp import __version__
from pytest_mcp.adapters.mcp.http_transport import DEFAULT_PATHS
from pytest_mcp.cli import build_parser
from pytest_mcp.settings import ENV_PREFIX, Settings
from tests.packaging.packaging_support import README, SCHEMAS, SERVER_JSON, distribution_name

SERVER: dict[str, Any] = json.loads(SERVER_JSON.read_text(encoding="utf-8"))
SCHEMA_FILES = sorted(SCHEMAS.glob("*.json"))
# The registry's name for each of our transports.
REGISTRY_TRANSPORTS = {"stdio": "stdio", "http": "streamable-http", "sse": "sse"}
TOKEN_VARIABLE = f"{ENV_PREFIX}AUTH_TOKEN"


def validator(path: Path) -> Draft7Validator:
    schema = json.loads(path.read_text(encoding="utf-8"))
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)


def problems(document: Any, path: Path) -> list[str]:
    errors = validator(path).iter_errors(document)
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in errors]


@pytest.mark.parametrize("schema", SCHEMA_FILES, ids=lambda path: path.name)
def test_server_json_is_valid_against_the_registry_schema(schema: Path) -> None:
    assert problems(SERVER, schema) == []


def test_server_json_declares_the_schema_release_it_is_checked_against() -> None:
    releases = {json.loads(path.read_text(encoding="utf-8"))["$id"] for path in SCHEMA_FILES}

    assert SERVER["$schema"] in releases, f"vendor {SERVER['$schema']} in {SCHEMAS} (see its README.md)"


def _mutated(change: str) -> dict[str, Any]:
    document = copy.deepcopy(SERVER)
    if change == "long description":
        document["description"] = "x" * 101
    elif change == "version latest":
        document["packages"][0]["version"] = "latest"
    elif change == "name without namespace":
        document["name"] = "mcp-server-pytest"
    elif change == "unknown transport":
        document["packages"][0]["transport"] = {"type": "carrier-pigeon"}
    elif change == "no package identifier":
        del document["packages"][0]["identifier"]
    return document


REJECTED = [
    "long description",
    "version latest",
    "name without namespace",
    "unknown transport",
    "no package identifier",
]


@pytest.mark.parametrize("change", REJECTED)
def test_the_schema_check_rejects_what_the_registry_rejects(change: str) -> None:
    current = next(path for path in SCHEMA_FILES if json.loads(path.read_text())["$id"] == SERVER["$schema"])

    assert problems(_mutated(change), current), f"{change} passed the schema check"


def test_it_describes_this_version_of_this_distribution() -> None:
    assert SERVER["version"] == __version__
    for package in SERVER["packages"]:
        assert (package["registryType"], package["identifier"], package["version"]) == (
            "pypi",
            distribution_name(),
            __version__,
        )
        assert package["registryBaseUrl"] == "https://pypi.org"
        assert package["runtimeHint"] == "uvx"


def test_it_describes_each_transport_the_server_serves() -> None:
    served = typing.get_args(Settings.model_fields["transport"].annotation)
    by_type = {package["transport"]["type"]: package for package in SERVER["packages"]}

    assert sorted(by_type) == sorted(REGISTRY_TRANSPORTS[name] for name in served)
    for name in served:
        package = by_type[REGISTRY_TRANSPORTS[name]]
        chosen = [arg.get("value") for arg in package["packageArguments"] if arg["name"] == "--transport"]
        assert chosen == ([] if name == "stdio" else [name])
        if name != "stdio":
            assert package["transport"]["url"] == f"http://127.0.0.1:{{port}}{DEFAULT_PATHS[name]}"


def test_every_argument_is_a_flag_of_the_command_with_its_real_default() -> None:
    actions = build_parser()._option_string_actions
    for package in SERVER["packages"]:
        for argument in package["packageArguments"]:
            assert argument["type"] == "named"
            action = actions.get(argument["name"])
            assert action is not None, f"{argument['name']} is not a flag of the command"
            field = Settings.model_fields[action.dest]
            if action.choices is not None and "value" in argument:
                assert argument["value"] in action.choices
            if "default" in argument:
                assert float(argument["default"]) == field.default, argument["name"]
            if argument.get("format") == "number":
                assert field.annotation in (int, float), argument["name"]
            if argument.get("format") == "filepath":
                assert Path in typing.get_args(field.annotation) or field.annotation is Path, argument["name"]
        assert any(arg["name"] == "--root" and arg.get("isRequired") for arg in package["packageArguments"])


def test_the_token_is_a_secret_read_from_the_variable_the_server_reads() -> None:
    for package in SERVER["packages"]:
        variables = package.get("environmentVariables", [])
        if package["transport"]["type"] == "stdio":
            assert variables == []  # stdio has no token
            continue
        assert [(v["name"], v.get("isSecret")) for v in variables] == [(TOKEN_VARIABLE, True)]
        (header,) = package["transport"]["headers"]
        assert (header["name"], header["value"], header.get("isSecret")) == (
            "Authorization",
            f"Bearer {{{TOKEN_VARIABLE}}}",
            True,
        )


def test_the_readme_carries_the_registry_name_that_proves_the_package_is_ours() -> None:
    # The registry accepts a PyPI package for a server only if its description (our README) says so.
    assert f"mcp-name: {SERVER['name']}" in README.read_text(encoding="utf-8")
