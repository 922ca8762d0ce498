"""Record and replay: `pytest-mcp record` saves a real run that FakeTestRunner answers for identically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from pytest_mcp.cli import main
from pytest_mcp.testing import FakeTestRunner, connect
from tests.answers import tool_error
from tests.contract.conftest import normalized, plain_pytest_environment

pytestmark = pytest.mark.anyio

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(autouse=True)
def _plain_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    plain_pytest_environment(monkeypatch)


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("record") / "run.json"
    with pytest.MonkeyPatch.context() as monkeypatch:
        plain_pytest_environment(monkeypatch)
        with pytest.raises(SystemExit) as exited:
            main(["record", "--root", str(FIXTURES / "contract"), "--out", str(out)])
    assert exited.value.code == 0
    return out


def test_the_recording_is_versioned_json_with_one_entry_per_test_and_no_absolute_root(recording: Path) -> None:
    document = json.loads(recording.read_text())

    assert (document["format"], document["version"]) == ("pytest-mcp-recording", 3)
    assert set(document) == {"format", "version", "tests", "collection_errors", "functions"}
    assert document["functions"] == {}  # a recording holds no second pass's spectrum
    assert str(FIXTURES) not in recording.read_text()
    assert len(document["tests"]) == 17
    assert document["collection_errors"] == []
    teardown = next(t for t in document["tests"] if t["node_id"].endswith("::test_teardown_errors"))
    assert (teardown["outcome"], teardown["phase"], teardown["message"]) == (
        "error",
        "teardown",
        "RuntimeError: teardown exploded",
    )
    assert set(teardown) == {
        "node_id",
        "outcome",
        "phase",
        "message",
        "traceback",
        "duration",
        "markers",
        "stdout",
        "stderr",
        "line",
        "runs",
        "flaky",
        "starts_process",
    }
    assert (teardown["runs"], teardown["flaky"], teardown["starts_process"]) == ([], False, False)


async def answers(client: Client) -> list[object]:
    run = await client.call_tool("execute_tests", {"detail": "all"})
    slow = await client.call_tool("discover_tests", {"markers": "slow"})
    assert run.structured_content is not None
    assert slow.structured_content is not None
    summary = {k: v for k, v in run.structured_content["summary"].items() if k != "duration"}
    reports = [{k: v for k, v in t.items() if k != "duration"} for t in run.structured_content["tests"]]
    return [run.structured_content["exit_code"], summary, reports, slow.structured_content["tests"]]


async def test_replaying_gives_the_real_runs_answers(recording: Path) -> None:
    async with connect(root=FIXTURES / "contract", mode="auto") as real:
        expected = await answers(real)
    async with connect(FakeTestRunner.from_recording(recording), root=FIXTURES / "contract", mode="auto") as replay:
        replayed = await answers(replay)

    assert replayed == expected


@pytest.fixture(scope="module")
def broken_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("record") / "broken.json"
    with pytest.MonkeyPatch.context() as monkeypatch:
        plain_pytest_environment(monkeypatch)
        with pytest.raises(SystemExit) as exited:
            main(["record", "--root", str(BROKEN_PROJECT), "--out", str(out)])
    assert exited.value.code == 0
    return out


BROKEN_PROJECT = FIXTURES / "collection_error"


def test_a_project_with_a_collection_error_is_recorded_with_it(broken_recording: Path) -> None:
    document = json.loads(broken_recording.read_text())

    assert [test["node_id"] for test in document["tests"]] == [
        "test_fine.py::test_fine",
        "test_fine.py::test_also_fine",
    ]
    [error] = document["collection_errors"]
    assert (error["node_id"], error["message"]) == (
        "test_broken_import.py",
        "ModuleNotFoundError: No module named 'module_that_does_not_exist_pytest_mcp'",
    )
    # The module's absolute path is written relative to whatever root replays it.
    assert error["traceback"].startswith("ImportError while importing test module '<root>/test_broken_import.py'.\n")
    assert str(BROKEN_PROJECT) not in broken_recording.read_text()


async def broken_answers(client: Client) -> list[object]:
    run = tool_error(await client.call_tool("execute_tests", {}))
    fine = await client.call_tool("execute_tests", {"node_ids": ["test_fine.py"], "detail": "all"})
    discovery = await client.call_tool("discover_tests", {})
    assert fine.structured_content is not None
    assert discovery.structured_content is not None
    return [
        (run.code, run.reason, run.message),
        run.data["collection_errors"],
        [normalized(line) for line in run.data["stdout_tail"].splitlines()],
        fine.structured_content["summary"]["passed"],
        [test["node_id"] for test in fine.structured_content["tests"]],
        [test["node_id"] for test in discovery.structured_content["tests"]],
        discovery.structured_content["collection_errors"],
    ]


async def test_replaying_a_collection_error_gives_the_same_error_and_spares_the_other_files(
    broken_recording: Path,
) -> None:
    async with connect(root=BROKEN_PROJECT) as real:
        expected = await broken_answers(real)
    async with connect(FakeTestRunner.from_recording(broken_recording), root=BROKEN_PROJECT) as replay:
        replayed = await broken_answers(replay)

    assert replayed == expected
    assert expected[0][2].startswith("pytest was interrupted: 1 error during collection\n- test_broken_import.py")


def test_a_run_without_a_result_records_nothing_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run.json"

    with pytest.raises(SystemExit) as exited:
        main(["record", "--root", str(FIXTURES / "internal_error"), "--out", str(out)])

    assert exited.value.code == 1
    assert not out.exists()
    assert "nothing recorded: pytest hit an internal error: RuntimeError: boom-internal" in capsys.readouterr().err
