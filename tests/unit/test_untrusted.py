"""What a run leaves is untrusted input (issue 42): a FIFO, a link or an endless file there is that run's
error, read within a bound, and never what the server blocks on, follows or creates."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import anyio
import pytest

from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
from pytest_mcp.adapters.pytest_subprocess.containment import read_warden
from pytest_mcp.adapters.pytest_subprocess.environment import _read_facts
from pytest_mcp.adapters.pytest_subprocess.report import read_coverage, read_report
from pytest_mcp.adapters.pytest_subprocess.spectrum import read_spectrum
from pytest_mcp.adapters.pytest_subprocess.testmon_data import lock_file, taking_turns
from pytest_mcp.adapters.pytest_subprocess.untrusted import UntrustedFileRefused, read_untrusted


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def test_a_fifo_is_refused_at_once_naming_what_it_is(tmp_path: Path) -> None:
    with pytest.raises(UntrustedFileRefused, match=r"report.jsonl is not a regular file \(a FIFO\)"):
        read_untrusted(fifo(tmp_path / "report.jsonl"), 100)


def test_a_link_is_never_followed_even_to_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("key")
    os.symlink(tmp_path / "secret", tmp_path / "warden.json")

    with pytest.raises(UntrustedFileRefused, match=r"warden\.json is a symbolic link"):
        read_untrusted(tmp_path / "warden.json", 100)


def test_a_file_over_its_bound_is_refused(tmp_path: Path) -> None:
    (tmp_path / "facts.json").write_bytes(b"x" * 101)

    assert read_untrusted(tmp_path / "facts.json", 101) == b"x" * 101
    with pytest.raises(UntrustedFileRefused, match=r"facts\.json is larger than 100 bytes"):
        read_untrusted(tmp_path / "facts.json", 100)


@pytest.mark.parametrize("make", ["fifo", "dev-zero", "directory"])
def test_every_reader_of_a_runs_files_refuses_what_is_not_a_regular_file(tmp_path: Path, make: str) -> None:
    names = ["report.jsonl", "spectrum.jsonl", "warden.json", "environment.json", "coverage.json"]
    for name in names:
        path = tmp_path / name
        if make == "fifo":
            fifo(path)
        elif make == "dev-zero":
            os.symlink("/dev/zero", path)
        else:
            path.mkdir()

    with pytest.raises(UntrustedFileRefused):
        read_report(tmp_path / "report.jsonl", 1024)
    with pytest.raises(UntrustedFileRefused):
        read_spectrum(tmp_path / "spectrum.jsonl", 1024)
    assert read_warden(tmp_path).containment == "process_group"  # read as: no warden's report
    assert _read_facts(tmp_path / "environment.json") is None
    assert read_coverage(tmp_path / "coverage.json", tmp_path) is None


def test_a_report_past_its_budget_still_gives_its_last_lines_without_reading_the_middle(tmp_path: Path) -> None:
    counts = {"passed": 1, "failed": 0, "deselected": 0}
    summary = json.dumps({protocol.EVENT: protocol.SUMMARY, "counts": counts, "total": 1, "duration": 0.1})
    with (tmp_path / "report.jsonl").open("wb") as report:
        report.write(b"x" * 10_000)  # one line far past the budget, with no end
        report.write(b"\n" + summary.encode() + b"\n")

    parsed = read_report(tmp_path / "report.jsonl", 1000)

    assert parsed.summary is not None
    assert parsed.summary.passed == 1


def run_turns(directory: Path) -> threading.Thread:
    async def take() -> None:
        async with taking_turns(directory):
            pass

    thread = threading.Thread(target=lambda: anyio.run(take), daemon=True)
    thread.start()
    thread.join(20)
    return thread


@pytest.mark.parametrize("planted", ["symlink", "fifo"])
def test_testmons_lock_is_beside_its_data_where_no_test_writes_and_a_planted_one_is_ignored(
    tmp_path: Path, planted: str
) -> None:
    data = tmp_path / "testmon" / "digest"
    data.mkdir(parents=True)
    target = tmp_path / "created-by-the-server"
    if planted == "symlink":
        os.symlink(target, data / "lock")  # what a sandboxed test could write in the data directory
    else:
        fifo(data / "lock")

    thread = run_turns(data)

    if thread.is_alive():  # the old code blocked in open(): let it go, then fail
        os.close(os.open(data / "lock", os.O_RDONLY | os.O_NONBLOCK))
        thread.join(5)
    assert not thread.is_alive(), "taking turns blocked on a FIFO"
    assert not target.exists()
    assert lock_file(data) == tmp_path / "testmon" / "digest.lock"
    assert lock_file(data).is_file()


@pytest.mark.parametrize("planted", ["symlink", "fifo"])
def test_a_lock_that_is_not_a_regular_file_is_refused_not_followed(tmp_path: Path, planted: str) -> None:
    data = tmp_path / "testmon" / "digest"
    data.mkdir(parents=True)
    if planted == "symlink":
        os.symlink(tmp_path / "elsewhere", lock_file(data))
    else:
        fifo(lock_file(data))

    async def take() -> None:
        async with taking_turns(data):
            pass

    with pytest.raises(UntrustedFileRefused):
        anyio.run(take)
    assert not (tmp_path / "elsewhere").exists()


def test_the_project_code_read_for_digests_never_leaves_the_root(tmp_path: Path) -> None:
    from pytest_mcp.adapters.pytest_subprocess.spectrum import ProjectCode

    root = tmp_path / "project"
    root.mkdir()
    (root / "inside.py").write_text("def kept():\n    return 1 + 1\n")
    (tmp_path / "secret.py").write_text("def leaked():\n    return 2 + 2\n")
    (root / "link.py").symlink_to(tmp_path / "secret.py")

    state = ProjectCode(root).state(["inside.py", "../secret.py", "link.py"])

    assert list(state.digests) == ["inside.py::kept", "inside.py::<module>"], "a run's imported list is the tests'"
