"""A client that did not negotiate MCP Apps gets the answers it got before the report view, byte for byte.

The golden transcript (golden/without_apps.jsonl) was captured from the server as it was before
the view existed (commit 760cd42): the raw stdio lines of tools/list and of tools/call answers
(discover_tests, execute_tests with a failure and its diff, get_test_run's and execute_tests'
invalid-argument errors). Only what a machine or a clock decides is replaced before comparing:
the project root, the interpreter, run ids, durations (a test report's own is on every report, 0 included,
since issue 36), and the count of characters cut from text_output (which holds
pytest's header). Everything else must be the same: each key and value, each item in its
place, written the same way.

Regenerate (only when a tool's answer is meant to change for every client):
    .venv/bin/python -m tests.e2e.test_without_apps
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "outcomes"
GOLDEN = Path(__file__).resolve().parent / "golden" / "without_apps.jsonl"
SERVER = Path(sys.executable).with_name("pytest-mcp")

# Neither client negotiated the extension: the second names it but lists no MIME type it renders.
CLIENTS = {
    "no extensions": {},
    "extension without the app MIME type": {"extensions": {"io.modelcontextprotocol/ui": {}}},
}

REQUESTS: list[dict[str, Any]] = [
    {"method": "tools/list"},
    {"method": "tools/call", "params": {"name": "discover_tests", "arguments": {}}},
    {
        "method": "tools/call",
        "params": {
            "name": "execute_tests",
            "arguments": {"node_ids": ["test_outcomes.py::test_fails_with_diff", "test_outcomes.py::test_passes"]},
        },
    },
    {"method": "tools/call", "params": {"name": "get_test_run", "arguments": {"run_id": "no-such-run"}}},
    {"method": "tools/call", "params": {"name": "execute_tests", "arguments": {"node_ids": "not a list"}}},
]

_MACHINE_FIGURES = [
    (re.compile(r"\bin \d+\.\d+s\b"), "in <S>s"),
    (re.compile(r'"duration":\d+(\.\d+)?'), '"duration":"<S>"'),
    (re.compile(r"\[\.\.\. [\d,]+ characters cut \.\.\.\]"), "[... <N> characters cut ...]"),
    (re.compile(r'"run_id":"[A-Za-z0-9_-]+"'), '"run_id":"<RUN>"'),  # 192 random bits, new for each run
    (re.compile(r'\\"run_id\\": \\"[A-Za-z0-9_-]+\\"'), '\\"run_id\\": \\"<RUN>\\"'),  # and in the text
]


def transcript(root: Path, capabilities: dict[str, Any]) -> list[str]:
    """The raw answer lines of REQUESTS, as a stdio client with `capabilities` reads them, normalised."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "raw"}},
    }
    lines = [initialize, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": number, **request} for number, request in enumerate(REQUESTS, start=1)]
    # No second pass: what it finds in time is this machine's load's to decide (ADR 0020; tests/e2e/test_causes.py).
    command = [str(SERVER), "--root", str(root), "--python", sys.executable, "--log-level", "error", "--localize", "0"]
    # One request at a time, as a client waits for each answer: at end of input the server stops its calls.
    # pytest writes fuller assertion diffs on CI (CI or BUILD_NUMBER set): the golden is of a plain shell's.
    environment = {key: value for key, value in os.environ.items() if key not in ("CI", "BUILD_NUMBER")}
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment
    ) as server:
        assert server.stdin is not None
        assert server.stdout is not None
        answers = []
        for line in lines:
            server.stdin.write(json.dumps(line).encode() + b"\n")
            server.stdin.flush()
            if "id" in line:
                answers.append(server.stdout.readline().decode().rstrip("\n"))
        server.stdin.close()
        assert server.wait(timeout=60) == 0, server.stderr.read().decode()[-2000:] if server.stderr else ""
    normalised = []
    for answer in answers[1:]:  # the initialize answer now advertises the extension (ADR 0015)
        answer = answer.replace(json.dumps(str(root))[1:-1], "<ROOT>").replace(json.dumps(sys.executable)[1:-1], "<PY>")
        for pattern, replacement in _MACHINE_FIGURES:
            answer = pattern.sub(replacement, answer)
        normalised.append(answer)
    return normalised


def _project(base: Path) -> Path:
    root = base / "project"
    shutil.copytree(FIXTURE, root)
    return root


@pytest.mark.parametrize("capabilities", CLIENTS.values(), ids=CLIENTS.keys())
def test_a_client_without_apps_gets_todays_answers_byte_for_byte(tmp_path: Path, capabilities: dict[str, Any]) -> None:
    expected = GOLDEN.read_text(encoding="utf-8").splitlines()
    got = transcript(_project(tmp_path), capabilities)
    for request, want, have in zip(REQUESTS, expected, got, strict=True):
        # Byte for byte once the machine's values are replaced: every key in its place (answers keep the
        # models' field order, whatever the hash seed), every value and item, written the same way.
        assert have == want, f"{request}: the answer changed for a client without MCP Apps"


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as base:
        lines = transcript(_project(Path(base)), {})
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"wrote {len(lines)} answers to {GOLDEN}")
