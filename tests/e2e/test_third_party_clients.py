"""Clients we did not write: the MCP Inspector CLI (stdio and HTTP) and the MCP conformance suite.

`scripts/test` installs both, pinned, under `.node/` and sets PYTEST_MCP_THIRD_PARTY=required, so
in CI a missing tool is a failure; elsewhere these tests skip with the command that installs them.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp.server.apps import APP_MIME_TYPE
from test_http import PROJECT, http_server

from pytest_mcp.adapters.mcp.report_view import VIEW_URI
from tests.answers import TOOLS
from tests.e2e.e2e_support import clean_env, console_script, write_project

pytestmark = pytest.mark.e2e

NODE_BIN = Path(__file__).resolve().parents[2] / ".node" / "node_modules" / ".bin"
INSTALL_HINT = "bash scripts/setup-node (run by scripts/test)"
# The server scenarios of @modelcontextprotocol/conformance that apply to a tools-only server. The
# tools-call-* scenarios need the suite's own fixture tools; resources, prompts, completion, logging,
# sampling and elicitation are capabilities we do not offer. server-sse-polling passes with two
# SHOULD-level warnings (resumability needs an event store) and reports no checks, so it is not listed.
CONFORMANCE_SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
]


def tool(name: str) -> Path:
    path = NODE_BIN / name
    if not path.exists():
        if os.environ.get("PYTEST_MCP_THIRD_PARTY") == "required":
            pytest.fail(f"{path} is missing but third-party client tests are required")
        pytest.skip(f"{name} is not installed; {INSTALL_HINT}")
    return path


def node_env(tmp_path: Path) -> dict[str, str]:
    env = clean_env()
    env["PATH"] = f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["MCP_CATALOG_PATH"] = str(tmp_path / "inspector-catalog.json")
    return env


def inspector(tmp_path: Path, *args: str) -> dict[str, Any]:
    # Its own connect timeout (15 s, from spawning the server to the initialize answer) is off: the
    # server's start-up is the SDK's imports, about 2 s of CPU, which a loaded machine stretched past
    # 15 s. What is checked here is what the Inspector gets; start-up time is bench/startup.py's.
    # The run's own timeout below still ends a server that never answers.
    completed = subprocess.run(
        [str(tool("mcp-inspector")), "--cli", "--connect-timeout", "0", *args],
        capture_output=True,
        text=True,
        env=node_env(tmp_path),
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    answer: dict[str, Any] = json.loads(completed.stdout)
    return answer


def check_session(tmp_path: Path, target: list[str]) -> None:
    listed = inspector(tmp_path, *target, "--method", "tools/list")
    assert {t["name"] for t in listed["tools"]} == TOOLS

    run = inspector(
        tmp_path,
        *target,
        "--method",
        "tools/call",
        "--tool-name",
        "execute_tests",
        "--tool-arg",
        'node_ids=["test_mixed.py"]',
        "detail=all",
    )
    summary = run["structuredContent"]["summary"]
    assert (summary["passed"], summary["failed"], summary["skipped"]) == (1, 1, 1)
    assert run["content"][0]["text"].startswith("1 failed, 1 passed, 1 skipped")

    found = inspector(
        tmp_path, *target, "--method", "tools/call", "--tool-name", "discover_tests", "--tool-arg", "keywords=passes"
    )
    assert [t["node_id"] for t in found["structuredContent"]["tests"]] == ["test_mixed.py::test_passes"]

    # The report view (ADR 0015), as a client we did not write reads it.
    (view,) = inspector(tmp_path, *target, "--method", "resources/read", "--uri", VIEW_URI)["contents"]
    assert (view["uri"], view["mimeType"]) == (VIEW_URI, APP_MIME_TYPE)
    assert view["text"].startswith("<!doctype html>")


def test_the_inspector_cli_drives_the_stdio_server(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", PROJECT)

    check_session(tmp_path, [console_script(), "--root", str(root)])


def test_the_inspector_cli_drives_the_http_server(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", PROJECT)

    with http_server(root, tmp_path, "--transport", "http") as server:
        check_session(tmp_path, [server.url, "--transport", "http"])


@pytest.mark.parametrize("scenario", CONFORMANCE_SCENARIOS)
def test_conformance_server_scenarios_pass_over_streamable_http(tmp_path: Path, scenario: str) -> None:
    root = write_project(tmp_path / "proj", PROJECT)
    conformance = tool("conformance")

    with http_server(root, tmp_path, "--transport", "http") as server:
        completed = subprocess.run(
            [str(conformance), "server", "--url", server.url, "--scenario", scenario],
            capture_output=True,
            text=True,
            env=node_env(tmp_path),
            timeout=180,
        )

    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert " 0 failed" in completed.stdout
    assert "Passed: 0/0" not in completed.stdout, "the scenario checked nothing"
