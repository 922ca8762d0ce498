"""Rejections are audited without the raw argument; errors leak no server paths or environment."""

from __future__ import annotations

import json
import os
import venv
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.client.stdio import stdio_client

import pytest_mcp
from tests.answers import call_error, tool_error
from tests.security.trapped_project import build_trapped_project, server_parameters

pytestmark = pytest.mark.anyio

SECRET = "hunter2-do-not-leak-4f1c"


async def test_a_rejected_huge_argument_is_audited_once_without_its_raw_value(tmp_path: Path) -> None:
    trapped = build_trapped_project(tmp_path)
    log_path = tmp_path / "server.log"
    huge = "Z" * 500_000
    parameters = server_parameters(trapped, "--log-format", "json")

    with log_path.open("w") as errlog:
        async with Client(stdio_client(parameters, errlog=errlog), mode="legacy") as client:  # type: ignore[arg-type]
            refused = await call_error(client, "execute_tests", {"keywords": huge, "Y" * 100_000: 1})

    assert refused.code == -32602
    log = log_path.read_text()
    events = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    rejections = [event for event in events if event.get("event") == "tool_call"]
    assert len(rejections) == 1
    event = rejections[0]
    assert event["tool"] == "execute_tests"
    assert event["outcome"] == "invalid"
    assert {error["field"] for error in event["errors"]} == {"keywords", "Y" * 64}
    assert "limit is 1000" in next(e["reason"] for e in event["errors"] if e["field"] == "keywords")
    assert len(event["args_digest"]) == 16
    assert "Z" * 100 not in log
    assert "Y" * 100 not in log
    assert len(log) < 5000


async def test_two_hundred_thousand_unknown_keys_give_a_bounded_answer_and_log_line(tmp_path: Path) -> None:
    """2.6 MB of unknown keys once produced a 79.6 MB error answer and a 42.7 MB log line.

    Short keys, so the request stays under the 4 MiB message limit and reaches the tool.
    """
    trapped = build_trapped_project(tmp_path)
    log_path = tmp_path / "server.log"
    parameters = server_parameters(trapped, "--log-format", "json")
    arguments = {f"k{index}": 0 for index in range(200_000)}

    with log_path.open("w") as errlog:
        async with Client(stdio_client(parameters, errlog=errlog), mode="legacy") as client:  # type: ignore[arg-type]
            answer = await client.call_tool("execute_tests", arguments)
            with pytest.raises(MCPError) as unknown_tool:
                await client.call_tool("t" * 100_000, {})

    error = tool_error(answer)
    assert error.code == -32602
    assert len(answer.model_dump_json(by_alias=True)) < 16_000, "the whole answer, text and _meta, is bounded"
    assert len(error.message) < 5000
    assert error.message.endswith("; and 199,980 more problems")
    assert len(error.data["errors"]) == 20
    assert error.data["omitted"] == 199_980
    assert len(unknown_tool.value.message) < 500
    log = log_path.read_text()
    assert max(len(line) for line in log.splitlines()) < 10_000
    assert "t" * 200 not in log


def failing_project(base: Path) -> Path:
    root = base / "proj"
    root.mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_ok.py").write_text("def test_ok():\n    pass\n")
    (root / "test_broken.py").write_text("import module_missing_for_leak_test\n")
    (root / "test_slow.py").write_text("import time\n\ndef test_slow():\n    time.sleep(30)\n")
    (root / "test_crash.py").write_text("import ctypes\n\ndef test_crash():\n    ctypes.string_at(0)\n")
    return root


LEAK_CASES: list[tuple[str, dict[str, Any]]] = [
    ("usage-error", {"node_ids": ["missing_file.py"]}),
    ("collection-error", {"node_ids": ["test_broken.py"]}),
    ("timeout", {"node_ids": ["test_slow.py"], "timeout": 1}),
    ("crash", {"node_ids": ["test_crash.py"]}),
]


async def test_execution_errors_leak_no_server_paths_or_environment(tmp_path: Path, bare_python: Path) -> None:
    root = failing_project(tmp_path)
    no_pytest = tmp_path / "no-pytest-venv"
    venv.EnvBuilder(with_pip=False).create(no_pytest)
    trapped = build_trapped_project(tmp_path / "unused")
    server_package = str(Path(pytest_mcp.__file__).parent)
    answers: list[str] = []

    # A venv of pytest alone (tests/security/conftest.py), where the dev venv's plugins would load at each start.
    for python in (str(bare_python), str(no_pytest / "bin" / "python")):
        parameters = server_parameters(trapped, env={"AUDIT_SECRET_FOR_TEST": SECRET})
        parameters.args[parameters.args.index("--root") + 1] = str(root)
        parameters.args[parameters.args.index("--python") + 1] = python
        async with Client(parameters, mode="legacy") as client:
            cases = LEAK_CASES if python == str(bare_python) else LEAK_CASES[:1]
            for _, arguments in cases:
                answer = await client.call_tool("execute_tests", arguments)
                assert tool_error(answer).code == -32000
                answers.append(answer.model_dump_json(by_alias=True))

    assert len(answers) == len(LEAK_CASES) + 1
    for answer in answers:
        assert SECRET not in answer
        assert server_package not in answer
        assert f"{os.sep}pytest-mcp-" not in answer, "a private temporary path leaked"
        assert "Traceback (most recent call last)" not in answer.split('"stderr_tail"')[0]
