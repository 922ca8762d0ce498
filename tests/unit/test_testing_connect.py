"""`connect()`: the production-wired server in process, in both client modes, with any runner."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest
import structlog
from mcp import MCPError

from pytest_mcp.testing import FailureGroup, FakeTestRunner, RunSpec, ScriptError, SkipReason, connect
from tests.answers import TOOLS, call_error

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["legacy", "auto"])
def mode(request: pytest.FixtureRequest) -> Any:
    return request.param


async def test_ten_calls_reach_the_scripted_runner_in_either_client_mode(tmp_path: Path, mode: Any) -> None:
    runner = FakeTestRunner().script("tests/test_a.py::test_ok").script("tests/test_a.py::test_bad", "failed")

    async with connect(runner, root=tmp_path, mode=mode) as client:
        tools = await client.list_tools()
        results = [await client.call_tool("execute_tests", {"node_ids": ["tests/test_a.py"]}) for _ in range(5)]
        discoveries = [await client.call_tool("discover_tests", {}) for _ in range(4)]

    assert {tool.name for tool in tools.tools} == TOOLS
    assert [r.structured_content["summary"]["failed"] for r in results] == [1] * 5  # type: ignore[index]
    assert [d.structured_content["total"] for d in discoveries] == [2] * 4  # type: ignore[index]
    assert len(runner.calls) == 9


async def test_validation_is_the_servers_own_and_nothing_invalid_reaches_the_runner(tmp_path: Path) -> None:
    runner = FakeTestRunner().script("tests/test_a.py::test_ok")

    async with connect(runner, root=tmp_path) as client:
        error = await call_error(client, "execute_tests", {"node_ids": ["../outside.py"], "extra": 1})

    assert error.code == -32602
    assert "node_ids: [0] leads outside the project root" in error.message
    assert "extra: unknown parameter" in error.message
    assert runner.calls == []


async def test_error_mode_jsonrpc_gives_json_rpc_errors_as_the_server_would(tmp_path: Path) -> None:
    runner = FakeTestRunner().script("tests/test_a.py::test_ok").fail_with("usage_error")

    async with connect(runner, root=tmp_path, error_mode="jsonrpc") as client:
        with pytest.raises(MCPError) as invalid:
            await client.call_tool("execute_tests", {"maxfail": 0})
        with pytest.raises(MCPError) as failed:
            await client.call_tool("execute_tests", {})

    assert invalid.value.code == -32602
    assert invalid.value.error.data == {
        "errors": [{"field": "maxfail", "reason": "input should be greater than or equal to 1"}]
    }
    assert failed.value.code == -32000
    assert failed.value.error.data["reason"] == "usage_error"


async def test_server_settings_apply_to_the_calls(tmp_path: Path) -> None:
    runner = FakeTestRunner().script("tests/test_a.py::test_ok")

    async with connect(runner, root=tmp_path, timeout=7, max_timeout=20) as client:
        await client.call_tool("execute_tests", {})
        refused = await call_error(client, "execute_tests", {"timeout": 30})
    assert "timeout: is 30s; the configured maximum is 20s" in refused.message

    assert isinstance(runner.calls[0], RunSpec)
    assert runner.calls[0].timeout == pytest.approx(7, abs=0.01)


# -- logs: stderr only, quiet unless asked (issue 20, finding 4) ------------------------------------


async def test_calls_log_nothing_by_default_and_never_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = FakeTestRunner().script("tests/test_a.py::test_ok").fail_with("usage_error")

    async with connect(runner, root=tmp_path) as client:
        await client.call_tool("execute_tests", {})
        await client.call_tool("execute_tests", {})
    quiet = capsys.readouterr()
    async with connect(runner, root=tmp_path, log_level="info") as client:
        await client.call_tool("execute_tests", {})
    told = capsys.readouterr()

    assert (quiet.out, quiet.err) == ("", "")
    assert told.out == ""
    assert "tool_call" in told.err
    assert "outcome=ok" in told.err


async def test_the_log_level_can_come_from_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_MCP_LOG_LEVEL", "warning")
    runner = FakeTestRunner().script("tests/test_a.py::test_ok")

    async with connect(runner, root=tmp_path) as client:
        await client.call_tool("execute_tests", {})
        await client.call_tool("execute_tests", {"maxfail": 0})
    seen = capsys.readouterr()

    assert seen.out == ""
    assert seen.err.count("tool_call") == 1
    assert "outcome=invalid" in seen.err


async def test_connect_leaves_this_processs_logging_configuration_alone(tmp_path: Path) -> None:
    before = (structlog.is_configured(), structlog.get_config(), logging.getLogger().handlers[:])

    async with connect(FakeTestRunner().script("tests/test_a.py::test_ok"), root=tmp_path, log_level="debug") as c:
        await c.call_tool("execute_tests", {})

    assert (structlog.is_configured(), structlog.get_config(), logging.getLogger().handlers) == before


# -- one root, one interpreter, scripted environment (finding 7) -------------------------------------


async def test_a_runner_without_a_root_takes_the_servers_and_shows_it_where_pytest_shows_absolute_paths(
    tmp_path: Path,
) -> None:
    runner = FakeTestRunner().script("tests/test_a.py::test_ok")

    async with connect(runner, root=tmp_path) as client:
        error = await call_error(client, "execute_tests", {"node_ids": ["tests/test_a.py::test_nope"]})

    assert runner.root == tmp_path.resolve()
    assert (
        error.message
        == f"pytest reported a usage error: ERROR: not found: {tmp_path.resolve()}/tests/test_a.py::test_nope"
    )


async def test_a_runner_with_a_root_gives_it_to_the_server_and_refuses_another(tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    runner = FakeTestRunner(root=tmp_path).script("tests/test_a.py::test_ok")

    async with connect(runner) as client:
        environment = await client.call_tool("check_environment", {})
    with pytest.raises(ScriptError, match=r"root: the runner's root is .*, and the server's would be .*other"):
        async with connect(runner, root=tmp_path / "other"):
            pass

    assert environment.structured_content is not None
    assert environment.structured_content["rootdir"] == str(tmp_path.resolve())


async def test_check_environment_reports_the_scripted_environment(tmp_path: Path) -> None:
    runner = (
        FakeTestRunner()
        .script_environment(python_version="3.9.18", pytest_version="7.4.0", config_error="ERROR: bad ini")
        .install("pytest-randomly==3.15.0")
    )

    async with connect(runner, root=tmp_path, python=sys.executable) as client:
        result = await client.call_tool("check_environment", {})

    answer = result.structured_content
    assert answer is not None
    assert (answer["ready"], answer["python"]["version"], answer["pytest"]["version"]) == (False, "3.9.18", "7.4.0")
    assert answer["interpreter"]["path"] == sys.executable
    assert any("pytest cannot start in this project: ERROR: bad ini" in problem for problem in answer["problems"])
    assert [(p["name"], p["version"]) for p in answer["plugins"]] == [("pytest-randomly", "3.15.0")]
    assert answer["plugins"][0]["changes"].startswith("shuffles the test order")


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"root": "/nonexistent"}, r"root: /nonexistent is not an existing directory"),
        ({"timeout": 0}, r"timeout: input should be greater than or equal to 1"),
        ({"error_mode": "loud"}, r"error_mode: input should be 'result' or 'jsonrpc'"),
        ({"mode": "new"}, r"mode: 'new' is not 'legacy' or 'auto'"),
        ({"runner": "fake"}, r"runner: must be a FakeTestRunner or None"),
    ],
    ids=["root", "timeout", "error-mode", "mode", "runner"],
)
async def test_a_wrong_argument_to_connect_names_it_before_anything_starts(arguments: Any, problem: str) -> None:
    with pytest.raises(ScriptError, match=problem):
        async with connect(**arguments):
            pass


async def test_a_discovery_with_one_collection_error_says_so_in_the_singular(tmp_path: Path) -> None:
    runner = (
        FakeTestRunner().script("tests/test_a.py::test_ok").fail_with("collection_error", node_id="tests/test_b.py")
    )

    async with connect(runner, root=tmp_path) as client:
        result = await client.call_tool("discover_tests", {})

    assert result.content[0].text.splitlines()[0] == "1 test collected, 1 collection error"  # type: ignore[union-attr]


async def test_processes_the_tests_left_running_are_scripted_and_answered_as_the_real_runner_answers(
    tmp_path: Path,
) -> None:
    long = "python -m http.server --bind 127.0.0.1 " + "x" * 100
    runner = FakeTestRunner().script("tests/test_a.py::test_ok").script("tests/test_a.py::test_server")
    runner.leave_running("redis-server *:6379").leave_running(long, node_id="tests/test_a.py::test_server")

    async with connect(runner, root=tmp_path) as client:
        leaky = await client.call_tool("execute_tests", {})
        runner.leave_running()
        only_ok = await client.call_tool("execute_tests", {"node_ids": ["tests/test_a.py::test_ok"]})
        runner.leave_running(node_id="tests/test_a.py::test_server")
        clean = await client.call_tool("execute_tests", {})
        environment = await client.call_tool("check_environment", {})

    stopped = leaky.structured_content["stopped_processes"]  # type: ignore[index]
    assert stopped == {"count": 2, "commands": ["redis-server *:6379", long[:77] + "..."]}
    text = leaky.content[0].text  # type: ignore[union-attr]
    assert text.splitlines()[-1] == (
        f'STOPPED 2 processes the tests left running when pytest ended: "redis-server *:6379"; "{long[:77]}..."'
    )
    assert "stopped_processes" not in only_ok.structured_content  # type: ignore[operator]
    assert "stopped_processes" not in clean.structured_content  # type: ignore[operator]
    assert "STOPPED" not in clean.content[0].text  # type: ignore[union-attr]
    assert environment.structured_content["process_containment"] == "subreaper"  # type: ignore[index]
    with pytest.raises(ScriptError, match="leave_running: each command must be a non-empty string"):
        runner.leave_running("")
    with pytest.raises(ScriptError, match="node_id: 'tests/test_b\\.py::test_x' is not a scripted test"):
        runner.leave_running("sleep 1", node_id="tests/test_b.py::test_x")
    with pytest.raises(ScriptError, match="containment: must be one of subreaper, process_group"):
        runner.script_environment(containment="cgroup")  # type: ignore[arg-type]


async def test_scripted_failures_are_answered_by_group_as_real_ones_are(tmp_path: Path) -> None:
    runner = FakeTestRunner()
    for i in range(30):
        runner.script(f"tests/test_price.py::test_vat[{i}]", "failed", message=f"assert {i + 1} == {i}", line=8)
    runner.script("tests/test_price.py::test_rate", "failed", message="KeyError: 'GBP'", line=20)
    runner.script("tests/test_price.py::test_net", "skipped", message="Skipped: needs network")
    async with connect(runner, root=tmp_path) as client:
        answer = (await client.call_tool("execute_tests", {})).structured_content or {}

    vat, rate = (FailureGroup.model_validate(group) for group in answer["groups"])
    assert (vat.count, vat.exception, vat.crash, vat.members) == (
        30,
        "AssertionError",
        "tests/test_price.py:8",
        ("tests/test_price.py::test_vat[{0-29}]",),
    )
    # A group of one is its report under an id.
    assert (rate.count, rate.representative.node_id, rate.representative.message) == (
        1,
        "tests/test_price.py::test_rate",
        "KeyError: 'GBP'",
    )
    assert [SkipReason.model_validate(reason).count for reason in answer["reasons"]] == [1]
    assert answer["tests"] == []
