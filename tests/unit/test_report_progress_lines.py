"""The reporter writes a progress event for every test (100,000 at 100,000 tests): the server parses
only the last of a poll's, and none when it reads the report after pytest exited (ADR 0018)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from pytest_mcp.adapters.pytest_subprocess import report
from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
from pytest_mcp.domain.models import ReportedTest

pytestmark = pytest.mark.anyio

TESTS = 10_000


def event(kind: str, **fields: object) -> str:
    return json.dumps({protocol.EVENT: kind, **fields}) + "\n"


def write_report(path: Path) -> None:
    """What the reporter writes for 10,000 tests, one failing half-way, and the summary."""
    lines = [event(protocol.COLLECTED, total=TESTS)]
    for done in range(1, TESTS + 1):
        if done == TESTS // 2:
            lines.append(event(protocol.TEST, node_id="t.py::test_half", outcome="failed", phase="call"))
        lines.append(protocol.PROGRESS_LINE % (done, int(done >= TESTS // 2)))
    counts = dict.fromkeys(("passed", "failed", "deselected"), 0) | {"passed": TESTS - 1, "failed": 1}
    lines.append(event(protocol.SUMMARY, counts=counts, total=TESTS, duration=1.0, exit_code=1))
    path.write_text("".join(lines))


class Parses:
    """Counts the lines report.py parses as JSON."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        loads = json.loads

        def counted(raw: bytes) -> object:
            self.count += 1
            return loads(raw)

        monkeypatch.setattr(report.json, "loads", counted)


class Sink:
    def __init__(self) -> None:
        self.updates: list[tuple[int, int, int]] = []
        self.tests: list[str] = []

    async def update(self, done: int, total: int, failed: int) -> None:
        self.updates.append((done, total, failed))

    async def reported(self, test: ReportedTest) -> None:
        self.tests.append(test.node_id)


def test_the_progress_line_is_an_event_as_any_other() -> None:
    assert json.loads(protocol.PROGRESS_LINE % (7, 2)) == {protocol.EVENT: protocol.PROGRESS, "done": 7, "failed": 2}
    assert (protocol.PROGRESS_LINE % (7, 2)).encode().startswith(protocol.PROGRESS_START)


def test_reading_the_finished_report_parses_no_progress_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_report(tmp_path / "report.jsonl")
    parses = Parses(monkeypatch)

    parsed = report.read_report(tmp_path / "report.jsonl", max_bytes=64 << 20)

    assert parsed.summary is not None
    assert (parsed.summary.passed, parsed.summary.failed) == (TESTS - 1, 1)
    assert [test.node_id for test in parsed.tests] == ["t.py::test_half"]
    assert parses.count == 3  # collected, the failure and the summary, of 10,003 lines


async def test_a_poll_forwards_every_report_and_the_last_progress_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_report(tmp_path / "report.jsonl")
    parses = Parses(monkeypatch)
    sink = Sink()

    await report.ProgressFollower(tmp_path / "report.jsonl", sink).poll()

    assert sink.tests == ["t.py::test_half"]
    assert sink.updates == [(TESTS, TESTS, 1)]
    assert parses.count == 4  # collected, the failure, the summary, the last progress line


async def test_once_collected_the_total_is_forwarded_before_any_test_is_done(tmp_path: Path) -> None:
    """A run's 'running' answer says "0 of 120" once pytest has collected, and "0 of ?" only before."""
    path = tmp_path / "report.jsonl"
    path.write_text("")
    sink = Sink()
    follower = report.ProgressFollower(path, sink)

    await follower.poll()  # still collecting
    path.write_text(event(protocol.COLLECTED, total=120))
    await follower.poll()

    assert sink.updates == [(0, 120, 0)]


async def test_a_poll_the_runs_end_interrupts_still_forwards_what_it_read(tmp_path: Path) -> None:
    """The follower is cancelled as pytest exits, and a poll may be forwarding then (a client's stream
    is slow to take a notification). What that poll read is no longer in the file for the final
    poll: cancelled there, the last progress was lost, and a client saw 2 of 3 (the client matrix,
    mcp 1.30 over stdio, once in a whole run of the suite). Nor may the cancellation wait for the
    client (a shielded poll would): one that stopped reading would hold the run's end forever."""
    path = tmp_path / "report.jsonl"
    path.write_text(event(protocol.COLLECTED, total=3) + protocol.PROGRESS_LINE % (3, 0))

    class SlowSink(Sink):
        def __init__(self) -> None:
            super().__init__()
            self.entered = anyio.Event()
            self.release = anyio.Event()

        async def update(self, done: int, total: int, failed: int) -> None:
            self.entered.set()
            await self.release.wait()
            await super().update(done, total, failed)

    sink = SlowSink()
    follower = report.ProgressFollower(path, sink)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            following = anyio.CancelScope()

            async def follow() -> None:
                with following:
                    await follower.follow()

            tasks.start_soon(follow)
            await sink.entered.wait()
            following.cancel()  # as run_in_process_group does when the process has ended
        # The follower ended while the client still held the notification: a client that stops
        # reading never holds up the run's end. It reads again before the final poll.
        sink.release.set()
        await follower.poll()  # the runner's final poll

    assert sink.updates[-1:] == [(3, 3, 0)]
