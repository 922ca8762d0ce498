"""Random JSON at the tools: every answer is a result, a -32602 or a -32000; never -32603, never a crash.

Besides random values, two strategies build the paths pytest reads otherwise than it looks:
response files (`@...`, read by pytest 8.2+ as more arguments) and a symlink followed by `..`
(`deep -> a/b/c`; Path.resolve() and pytest disagree on where `deep/../..` is). Every one of
them must be refused, naming the field.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError

from pytest_mcp.adapters.fake.runner import FakeTestRunner
from pytest_mcp.container import create_container
from pytest_mcp.domain.requests import CheckEnvironmentRequest, DiscoverTestsRequest, ExecuteTestsRequest
from pytest_mcp.settings import Settings
from tests.answers import TOOLS, tool_error
from tests.security.trapped_project import build_trapped_project, server_parameters

EXAMPLES = int(os.environ.get("PYTEST_MCP_FUZZ_EXAMPLES", "1500"))
# Every parameter any tool accepts, from the request models themselves.
KNOWN_KEYS = sorted(
    {*ExecuteTestsRequest.model_fields, *DiscoverTestsRequest.model_fields, *CheckEnvironmentRequest.model_fields}
)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
    | st.sampled_from(["", "-p", "--version", "tests", "test_ok.py", "../x", "/etc", "slow", "not slow", "all"])
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=20,
)
arguments = st.dictionaries(st.sampled_from(KNOWN_KEYS) | st.text(max_size=12), json_values, max_size=6)
tools = st.sampled_from(sorted(TOOLS))

path_text = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=20)
response_files = st.builds(
    "@{}{}".format,
    st.sampled_from(["", "/", "/proc/self/environ", "/dev/zero", "fifo", "list.txt", "../", "@"]),
    path_text,
)
symlink_then_dotdot = st.builds(
    lambda climbs, rest, node: "deep/" + "../" * climbs + rest + node,
    st.integers(min_value=3, max_value=8),
    st.sampled_from(["outside/test_outside.py", "outside", "", "etc/passwd", "proc/self/environ"]),
    st.sampled_from(["", "::test_outside", "::t[x]"]),
)
escapes = response_files | symlink_then_dotdot


def outcome_of(portal: BlockingPortal, client: Client, tool: str, args: dict[str, Any]) -> str:
    try:
        result = portal.call(client.call_tool, tool, args)
    except MCPError as error:  # a protocol error: an unknown tool
        code, message = error.code, error.message
    else:
        if result.is_error:
            refused = tool_error(result)
            code, message = refused.code, refused.message
        else:
            assert result.structured_content is not None
            assert "exit_code" in result.structured_content or "ready" in result.structured_content
            return "result"
    assert code in (-32602, -32000), f"{tool}({args!r}) answered {code}: {message}"
    return str(code)


def fuzz(portal: BlockingPortal, client: Client, examples: int) -> set[str]:
    seen: set[str] = set()

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(tool=tools, args=arguments)
    def one_call(tool: str, args: dict[str, Any]) -> None:
        seen.add(outcome_of(portal, client, tool, args))

    one_call()
    return seen


def refuse_escapes(portal: BlockingPortal, client: Client, examples: int) -> int:
    """Every response file and symlink-then-`..` path is refused naming its field; how many were tried."""
    tried = 0

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(escape=escapes, as_path=st.booleans(), before=st.sampled_from([[], ["test_ok.py"]]))
    def one_call(escape: str, as_path: bool, before: list[str]) -> None:
        nonlocal tried
        tool, field, args = (
            ("discover_tests", "path", {"path": escape})
            if as_path
            else ("execute_tests", "node_ids", {"node_ids": [*before, escape]})
        )
        refused = tool_error(portal.call(client.call_tool, tool, args))
        assert refused.code == -32602, f"{tool}({args!r}): {refused.message}"
        assert [error["field"] for error in refused.data["errors"]] == [field]
        tried += 1

    one_call()
    return tried


@pytest.fixture
def portal() -> Iterator[BlockingPortal]:
    with start_blocking_portal(backend="asyncio") as portal:
        yield portal


def scripted_runner() -> FakeTestRunner:
    return (
        FakeTestRunner()
        .script("test_ok.py::test_ok", markers=["slow"])
        .script("tests/test_b.py::test_fails", "failed", message="assert 1 == 2")
    )


def test_random_arguments_in_process_never_produce_an_internal_error(tmp_path: Path, portal: BlockingPortal) -> None:
    container = create_container(Settings(root=tmp_path, runner="fake", max_timeout=60))
    container.fake_runner.override(scripted_runner())

    with portal.wrap_async_context_manager(Client(container.tool_server().server)) as client:
        seen = fuzz(portal, client, EXAMPLES)
        refused = refuse_escapes(portal, client, EXAMPLES // 3)
        still_serving = portal.call(client.list_tools)

    assert "-32602" in seen
    assert refused == EXAMPLES // 3
    assert {tool.name for tool in still_serving.tools} == TOOLS


def test_random_arguments_over_stdio_never_produce_an_internal_error(tmp_path: Path, portal: BlockingPortal) -> None:
    trapped = build_trapped_project(tmp_path)
    parameters = server_parameters(trapped, env={"PYTEST_MCP_RUNNER": "fake"})

    with portal.wrap_async_context_manager(Client(parameters, mode="legacy")) as client:
        seen = fuzz(portal, client, max(EXAMPLES // 5, 50))
        refused = refuse_escapes(portal, client, max(EXAMPLES // 10, 50))
        still_serving = portal.call(client.list_tools)

    assert "-32602" in seen
    assert refused == max(EXAMPLES // 10, 50)
    assert {tool.name for tool in still_serving.tools} == TOOLS
    assert trapped.tripped() == [], "the fake runner must not start pytest"
