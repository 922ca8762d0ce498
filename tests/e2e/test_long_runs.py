"""Detached runs through the installed server and a real pytest (ADR 0012): the answers, and no process left behind."""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.answers import call_error, signature_row
from tests.e2e.e2e_support import (
    MARKER_ENV,
    SLEEPER_TEST,
    assert_all_gone,
    connect,
    http_server,
    pytest_oracle,
    sleeper_file,
    start_server,
    wait_until_running,
    write_project,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

# A project whose slow test waits for a file, so a test decides when the run ends.
GATED = {
    "test_a_first.py": """
        def test_fails_early():
            assert 6 * 7 == 41

        def test_passes_early():
            pass
    """,
    "test_b_gate.py": """
        import os
        import time

        def test_waits_for_the_gate():
            open(os.path.join(os.path.dirname(__file__), "waiting"), "w").close()
            gate = os.path.join(os.path.dirname(__file__), "gate")
            deadline = time.monotonic() + 60
            while not os.path.exists(gate) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert os.path.exists(gate)
    """,
    "test_c_after.py": """
        import pytest

        def test_fails_late():
            raise ValueError("late")

        @pytest.mark.skip(reason="not today")
        def test_skipped():
            pass
    """,
}


def comparable(result: Any) -> dict[str, Any]:
    """An answer with its timings and its run id (which no two runs share) set to placeholders."""
    structured: dict[str, Any] = json.loads(json.dumps(result.structured_content))
    structured["summary"]["duration"] = 0
    if "run_id" in structured:
        structured["run_id"] = "RUN"
    for test in [*structured["tests"], *(group["representative"] for group in structured["groups"])]:
        test["duration"] = 0
    if "text_output" in structured:
        structured["text_output"] = re.sub(r" in [\d.]+s", " in Xs", structured["text_output"])
    # What a second pass found in its time, and whether a failure is new or was already failing (the
    # second of two runs reads the first in the project's history), are the run's, not its answer's shape.
    structured.pop("localization", None)
    structured.pop("culprits", None)
    for group in structured["groups"]:
        group.pop("since", None)
    text = re.sub(r" in [\d.]+s", " in Xs", result.content[0].text)
    text = re.sub(r'"run_id": "[^"]+"', '"run_id": "RUN"', text)
    text = re.sub(r"^(no culprit named|likely cause|also likely|culprits): .*\n", "", text, flags=re.MULTILINE)
    text = re.sub(r"; [^;\n]*(newly fails?|already failing|flaky)$", "", text, flags=re.MULTILINE)
    return {"structured": structured, "text": text, "is_error": result.is_error}


async def until_finished(client: Client, run_id: str) -> Any:
    with anyio.fail_after(60):
        while True:
            result = await client.call_tool("get_test_run", {"run_id": run_id, "wait": 1})
            if (result.structured_content or {}).get("status") != "running":
                return result


@pytest.mark.parametrize("detail", ["failures", "all"])
async def test_a_detached_run_lists_the_failures_so_far_and_ends_as_an_undetached_one(
    tmp_path: Path, detail: str
) -> None:
    root = write_project(tmp_path / "proj", GATED)
    (root / "gate").touch()
    async with start_server(root, tmp_path, "--detach-after", "0").client() as client:
        undetached = await client.call_tool("execute_tests", {"detail": detail})
    (root / "gate").unlink()

    async with start_server(root, tmp_path, "--detach-after", "1").client() as client:
        running = await client.call_tool("execute_tests", {"detail": detail})
        answer = running.structured_content
        assert answer is not None
        assert answer["status"] == "running"
        # On a loaded machine pytest may not have reached the gate when the call detaches: ask again
        # until it has (the two tests before the gate are done), as an agent would.
        with anyio.fail_after(30):
            while answer["progress"]["done"] < 2:
                running = await client.call_tool("get_test_run", {"run_id": answer["run_id"], "wait": 0.2})
                answer = running.structured_content
                assert answer is not None
                assert answer["status"] == "running"
        assert answer["progress"]["total"] == 5
        assert answer["progress"]["done"] == 2
        assert (answer["summary"]["failed"], answer["summary"]["passed"]) == (1, 1)
        listed = [(m, row[1]) for row in map(signature_row, answer["groups"]) for m in row[-1]]
        listed += [(t["node_id"], t["outcome"]) for t in answer["tests"] if t["outcome"] == "passed"]
        expected = [("test_a_first.py::test_fails_early", "failed")]
        if detail == "all":
            expected.append(("test_a_first.py::test_passes_early", "passed"))
        assert listed == expected
        assert "assert (6 * 7) == 41" in running.content[0].text  # type: ignore[union-attr]
        (root / "gate").touch()
        final = await until_finished(client, answer["run_id"])

    assert comparable(final) == comparable(undetached)
    assert final.structured_content["summary"]["failed"] == 2  # type: ignore[index]


async def start_detached_sleeper(client: Client, marker: str) -> str:
    running = await client.call_tool("execute_tests", {"node_ids": [sleeper_file(marker)]})
    assert running.structured_content is not None
    assert running.structured_content["status"] == "running", running.content
    return str(running.structured_content["run_id"])


def sleeper_project(tmp_path: Path, marker: str) -> Path:
    return write_project(tmp_path / "proj", {sleeper_file(marker): SLEEPER_TEST})


async def test_cancelling_a_detached_run_leaves_no_process_behind(tmp_path: Path, marker: str) -> None:
    root = sleeper_project(tmp_path, marker)
    server = start_server(root, tmp_path, "--detach-after", "0.5", env={MARKER_ENV: marker})
    async with server.client() as client:
        run_id = await start_detached_sleeper(client, marker)
        await wait_until_running(marker)
        cancelled = await client.call_tool("get_test_run", {"run_id": run_id, "cancel": True})
        assert cancelled.structured_content["status"] == "cancelled"  # type: ignore[index]
        await assert_all_gone(marker, within=0.5)  # gone when the confirmation came; a moment's slack
        after = await client.call_tool("get_test_run", {"run_id": run_id})
    assert after.structured_content["status"] == "cancelled"  # type: ignore[index]  # known as such for the TTL


async def test_closing_stdio_stops_the_sessions_detached_runs(tmp_path: Path, marker: str) -> None:
    root = sleeper_project(tmp_path, marker)
    server = start_server(root, tmp_path, "--detach-after", "0.5", env={MARKER_ENV: marker})
    async with server.client() as client:
        await start_detached_sleeper(client, marker)
        await wait_until_running(marker)
    await assert_all_gone(marker, within=3.0)


async def test_sigterm_stops_detached_runs(tmp_path: Path, marker: str) -> None:
    root = sleeper_project(tmp_path, marker)
    with http_server(
        root, tmp_path, "--transport", "http", "--detach-after", "0.5", env={MARKER_ENV: marker}
    ) as server:
        async with connect(server, "legacy") as client:
            await start_detached_sleeper(client, marker)
            await wait_until_running(marker)
            server.process.send_signal(signal.SIGTERM)
            with anyio.fail_after(10):
                while server.process.poll() is None:
                    await anyio.sleep(0.05)
        assert server.process.returncode == 128 + signal.SIGTERM
    await assert_all_gone(marker, within=1.0)


async def test_an_http_session_reads_only_its_own_runs_and_ending_it_stops_them(tmp_path: Path, marker: str) -> None:
    root = sleeper_project(tmp_path, marker)
    with http_server(
        root, tmp_path, "--transport", "http", "--detach-after", "0.5", env={MARKER_ENV: marker}
    ) as server:
        async with connect(server, "legacy") as other:
            async with connect(server, "legacy") as owner:
                run_id = await start_detached_sleeper(owner, marker)
                await wait_until_running(marker)
                foreign = await call_error(other, "get_test_run", {"run_id": run_id, "cancel": True})
                assert "unknown or expired run id" in foreign.message
                still = await owner.call_tool("get_test_run", {"run_id": run_id, "wait": 0})
                assert still.structured_content["status"] == "running"  # type: ignore[index]
            # The owner's client closed its session (DELETE): its run goes with it.
            await assert_all_gone(marker, within=3.0)


async def test_a_run_cancelled_through_another_connection_of_its_owner_answers_cancelled_to_every_later_call(
    tmp_path: Path, marker: str
) -> None:
    """Over --stateless HTTP, two clients with the same token are one owner (ADR 0012)."""
    root = sleeper_project(tmp_path, marker)
    token = "t" * 40
    environment = {MARKER_ENV: marker, "PYTEST_MCP_AUTH_TOKEN": token}
    arguments = ("--transport", "http", "--stateless", "--detach-after", "0.5")
    with http_server(root, tmp_path, *arguments, env=environment) as server:
        async with connect(server, "legacy", token=token) as first:
            run_id = await start_detached_sleeper(first, marker)
            await wait_until_running(marker)
            async with connect(server, "legacy", token=token) as second:
                cancelled = await second.call_tool("get_test_run", {"run_id": run_id, "cancel": True})
            await assert_all_gone(marker, within=0.5)
            later = [await first.call_tool("get_test_run", {"run_id": run_id}) for _ in range(2)]
    assert cancelled.structured_content["status"] == "cancelled"  # type: ignore[index]
    assert [answer.structured_content["status"] for answer in later] == ["cancelled", "cancelled"]  # type: ignore[index]


async def test_stateless_says_the_run_may_be_on_another_instance(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {"test_ok.py": "def test_ok():\n    pass\n"})
    with http_server(root, tmp_path, "--transport", "http", "--stateless") as server:
        async with connect(server, "legacy") as client:
            error = await call_error(client, "get_test_run", {"run_id": "A" * 32})
    assert "the run may be on another instance" in error.message


CLIENTS = Path(__file__).resolve().parents[2] / ".clients"
TS_SDK = CLIENTS / "ts-1.32.2"
NODE = Path(__file__).resolve().parents[2] / ".node" / "node_modules" / ".bin" / "node"

# The gated project plus a grandchild canary: the slow test starts a process that outlives pytest unless
# the run's process group is killed.
CANARY_TEST = f"""
import os
import subprocess
import sys

def test_starts_a_grandchild():
    if "{MARKER_ENV}" in os.environ:  # not when the oracle runs it
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", os.environ["{MARKER_ENV}"]])
"""


async def test_the_typescript_sdk_gets_a_run_longer_than_its_request_timeout(tmp_path: Path, marker: str) -> None:
    if not (TS_SDK / "node_modules" / "@modelcontextprotocol" / "sdk").exists():
        if os.environ.get("PYTEST_MCP_THIRD_PARTY") == "required":
            pytest.fail(f"{TS_SDK} is missing but third-party client tests are required")
        pytest.skip("the TypeScript SDK is not installed; bash scripts/setup-clients (run by scripts/test)")
    root = write_project(tmp_path / "proj", {**GATED, "test_0_canary.py": CANARY_TEST})
    oracle_root = write_project(tmp_path / "oracle", {**GATED, "test_0_canary.py": CANARY_TEST})
    (oracle_root / "gate").touch()
    _, expected = pytest_oracle(oracle_root)
    server = start_server(root, tmp_path, "--detach-after", "1", env={MARKER_ENV: marker})
    argv = [str(NODE if NODE.exists() else "node"), str(Path(__file__).parent / "drivers" / "ts_long_run.cjs")]
    # The request timeout (2 s) is far shorter than the run (the gate opens at 4 s), as the SDK's 60 s
    # default is for a real suite; without detaching, the first call would fail with -32001.
    argv += [str(TS_SDK), "2000", *server.argv]
    async with await anyio.open_process(argv, env=server.env) as driver:
        # The gate opens 3 s after the run reached it, however long the client and server took to start.
        with anyio.fail_after(60):
            while not (root / "waiting").exists():
                await anyio.sleep(0.05)
        await anyio.sleep(3)
        (root / "gate").touch()
        with anyio.fail_after(60):
            output = (await driver.stdout.receive(1 << 20)).decode()  # type: ignore[union-attr]
            await driver.wait()
    seen = json.loads(output)
    assert "raised" not in seen, seen
    statuses = [answer["status"] for answer in seen["answers"]]
    assert statuses[0] == "running"
    assert statuses[-1] == "finished"
    assert seen["answers"][-1]["ms"] > 2000, seen  # the run outlasted the request timeout
    assert all(b["ms"] - a["ms"] < 2000 for a, b in zip([{"ms": 0}, *seen["answers"]], seen["answers"], strict=False))
    final = seen["final"]
    counts = {key: final["summary"][key] for key in expected}
    assert counts == expected
    assert final["exit_code"] == 1
    await assert_all_gone(marker, within=1.0)


async def test_a_cancel_after_the_run_finished_keeps_its_answer_and_says_it_had_finished(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", GATED)
    async with start_server(root, tmp_path, "--detach-after", "1").client() as client:
        running = await client.call_tool("execute_tests", {})
        run_id = running.structured_content["run_id"]  # type: ignore[index]
        (root / "gate").touch()
        final = await until_finished(client, run_id)  # detached, then finished by itself
        late = await client.call_tool("get_test_run", {"run_id": run_id, "cancel": True})
        again = await client.call_tool("get_test_run", {"run_id": run_id})

    text = late.content[0].text  # type: ignore[union-attr]
    assert "Cancelled" not in text
    assert late.structured_content is not None
    assert "status" not in late.structured_content, late.structured_content  # a finished answer
    assert late.structured_content["summary"] == final.structured_content["summary"]  # type: ignore[index]
    assert late.structured_content["notes"] == [
        "the run had already finished when the cancel came: nothing was stopped, and this is its answer"
    ]
    assert text.startswith(final.content[0].text)  # type: ignore[union-attr]
    assert text.endswith(
        "\nNOTE: the run had already finished when the cancel came: nothing was stopped, and this is its answer"
    )
    assert comparable(again) == comparable(final)  # and it stays finished, not cancelled
