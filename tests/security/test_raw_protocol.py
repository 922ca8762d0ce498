"""Lines the SDK cannot parse are answered, never left hanging, and never start anything."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from trapped_project import TrappedProject, server_parameters

LONE_SURROGATE_CALL = (
    '{"jsonrpc":"2.0","id":2,"method":"tools/call",'
    '"params":{"name":"execute_tests","arguments":{"node_ids":["test_ok\\ud800.py"]}}}'
)


def converse(trapped: TrappedProject, lines: list[str], expect: int) -> list[dict[str, Any]]:
    """Send the lines, keep stdin open until `expect` replies (besides initialize) arrive."""
    parameters = server_parameters(trapped)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    script = [json.dumps(initialize), '{"jsonrpc":"2.0","method":"notifications/initialized"}', *lines]
    process = subprocess.Popen(
        [parameters.command, *parameters.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=parameters.env,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write("\n".join(script) + "\n")
        process.stdin.flush()
        replies = [json.loads(process.stdout.readline()) for _ in range(expect + 1)]
    finally:
        process.stdin.close()
        process.wait(timeout=10)
    return replies[1:]


def test_a_lone_surrogate_is_invalid_params_naming_the_field(trapped: TrappedProject) -> None:
    trapped.reset()

    replies = {reply["id"]: reply for reply in converse(trapped, [LONE_SURROGATE_CALL], expect=1)}

    error = replies[2]["error"]
    assert error["code"] == -32602
    assert error["message"].startswith("node_ids[0]: contains a lone surrogate")
    assert trapped.tripped() == []


def test_unparseable_lines_are_answered_and_the_session_keeps_serving(trapped: TrappedProject) -> None:
    trapped.reset()
    lines = [
        "this is not json",
        '{"jsonrpc":"2.0","id":7,"method":42}',
        '{"jsonrpc":"2.0","id":8,"method":"tools/list"}',
    ]

    replies = converse(trapped, lines, expect=3)

    by_id: dict[Any, dict[str, Any]] = {reply.get("id"): reply for reply in replies}
    assert by_id[None]["error"]["code"] == -32700
    assert by_id[7]["error"]["code"] == -32600
    assert {tool["name"] for tool in by_id[8]["result"]["tools"]} == {
        "execute_tests",
        "discover_tests",
        "check_environment",
    }
    assert trapped.tripped() == []


@pytest.fixture(scope="module")
def trapped(tmp_path_factory: pytest.TempPathFactory) -> TrappedProject:
    from trapped_project import build_trapped_project

    return build_trapped_project(tmp_path_factory.mktemp("raw"))
