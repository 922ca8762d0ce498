"""Record and replay: `pytest-mcp record` saves a real run that FakeTestRunner answers for identically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from pytest_mcp.cli import main
from pytest_mcp.testing import FakeTestRunner, connect
from tests.contract.conftest import plain_pytest_environment

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


def test_the_recording_is_versioned_json_with_one_entry_per_test(recording: Path) -> None:
    document = json.loads(recording.read_text())

    assert (document["format"], document["version"], document["root"]) == (
        "pytest-mcp-recording",
        1,
        str(FIXTURES / "contract"),
    )
    assert len(document["tests"]) == 17
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
    }


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


def test_a_run_without_a_result_records_nothing_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run.json"

    with pytest.raises(SystemExit) as exited:
        main(["record", "--root", str(FIXTURES / "collection_error"), "--out", str(out)])

    assert exited.value.code == 1
    assert not out.exists()
    assert "nothing recorded: pytest was interrupted: 1 error during collection" in capsys.readouterr().err
