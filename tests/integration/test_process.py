from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from pytest_mcp.adapters.pytest_subprocess import process
from pytest_mcp.adapters.pytest_subprocess.process import (
    BoundedBuffer,
    OutputLimits,
    ProcessOutcome,
    run_in_process_group,
)


def test_a_bounded_buffer_keeps_head_and_tail_and_marks_the_cut() -> None:
    buffer = BoundedBuffer(head=10, tail=20)
    for _ in range(10_000):
        buffer.feed(b"0123456789")

    text = buffer.text()

    assert buffer.total == 100_000
    assert text.startswith("0123456789\n[... 99,970 bytes of output cut by pytest-mcp ...]\n")
    assert text.endswith("01234567890123456789")
    assert len(text) < 200


def test_a_short_stream_is_kept_whole() -> None:
    buffer = BoundedBuffer(head=10, tail=20)
    buffer.feed("héllo wörld".encode())

    assert buffer.text() == "héllo wörld"


# --- reading pytest's output: ticks for a trickle, as it comes for a flood, nothing lost -------------


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


async def _run(code: str, limits: OutputLimits | None = None, timeout: float = 30) -> ProcessOutcome:
    return await run_in_process_group(_python(code), cwd=Path.cwd(), timeout=timeout, limits=limits or OutputLimits())


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pipe of each read the runner makes, in order."""
    seen: list[int] = []
    read_available = process._read_available

    def counting(fd: int, buffer: BoundedBuffer) -> tuple[int, bool]:
        seen.append(fd)
        return read_available(fd, buffer)

    monkeypatch.setattr(process, "_read_available", counting)
    return seen


@pytest.mark.anyio
async def test_a_trickle_of_flushed_characters_is_read_in_ticks_not_one_wake_up_each(reads: list[int]) -> None:
    # pytest -q flushes one character per test; 2,000 of them over about a second.
    code = "import sys,time\nfor _ in range(2000):\n sys.stdout.write('.');sys.stdout.flush();time.sleep(0.0005)\n"

    outcome = await _run(code)

    assert outcome.stdout == "." * 2000
    # Two pipes, at most one read each per 50 ms tick (plus the last ones): about 20 a second per
    # pipe, whatever the run's duration, where reading as it comes took one per character.
    assert len(reads) <= 2 * (20 * outcome.duration + 3), (len(reads), outcome.duration)


@pytest.mark.anyio
async def test_a_trickle_that_goes_on_is_read_less_and_less_often(reads: list[int]) -> None:
    # A long run's dots: 20 a second for 3 s. Ticks that stay at 50 ms read each pipe 20 times a
    # second (about 120 reads); ticks that lengthen while the trickle lasts, a dozen or so.
    code = "import sys,time\nfor _ in range(60):\n sys.stdout.write('.');sys.stdout.flush();time.sleep(0.05)\n"

    outcome = await _run(code)

    assert outcome.stdout == "." * 60
    assert len(reads) <= 4 * outcome.duration + 10, (len(reads), outcome.duration)


@pytest.mark.anyio
async def test_a_silent_pipe_is_never_read_until_something_comes(reads: list[int]) -> None:
    # A run that writes nothing for a second (stderr, most runs; stdout between two slow tests)
    # must not wake the event loop: 20 runs at once, each ticking on two pipes, were 800 wake-ups
    # a second, most of the loop's work while they ran (issue 46).

    outcome = await _run("import time\ntime.sleep(1)\nprint('done')\n")

    assert outcome.stdout == "done\n"
    # Each pipe: one read at the start, one when its writer is done (or the drain after the exit).
    assert len(reads) <= 6, (len(reads), outcome.duration)


@pytest.mark.anyio
async def test_a_flood_is_read_as_it_comes_and_counted_to_the_byte() -> None:
    code = "import sys\nfor _ in range(320):\n sys.stdout.buffer.write(b'x' * 65536)\nsys.stdout.write('THE END')\n"
    limits = OutputLimits(stdout_head=100, stdout_tail=100)

    outcome = await _run(code, limits)

    flood = 320 * 65536 + len("THE END")
    assert outcome.returncode == 0
    assert f"[... {flood - 200:,} bytes of output cut by pytest-mcp ...]" in outcome.stdout
    assert outcome.stdout.endswith("THE END")
    # 20 MiB: if a flood were read once a tick, 64 KiB per 50 ms, this would take 16 s.
    assert outcome.duration < 5


@pytest.mark.anyio
@pytest.mark.skipif(not hasattr(process.fcntl, "F_SETPIPE_SZ"), reason="pipe capacity is fixed on this platform")
async def test_a_burst_smaller_than_a_megabyte_never_waits_for_a_tick() -> None:
    # `pytest --collect-only -q` at 10,000 tests: 600 KB of node ids in about 0.1 s, 8 KiB at a
    # time. Each 8 KiB write, read as it came, dropped the reader back to ticks, and a 64 KiB pipe
    # then made the writer wait for the next tick every 64 KiB: about 0.7 s for these 900 KiB.
    code = (
        "import os,sys,time\nstarted=time.perf_counter()\n"
        "for _ in range(112):\n os.write(1, b'n' * 8192);time.sleep(0.0005)\n"
        "sys.stderr.write('%.3f' % (time.perf_counter() - started))\n"
    )

    outcome = await _run(code, OutputLimits(stdout_head=0, stdout_tail=10))

    assert outcome.returncode == 0
    assert float(outcome.stderr) < 0.3, f"the writer took {outcome.stderr} s"


@pytest.mark.anyio
async def test_what_is_written_just_before_exit_is_kept_on_both_streams() -> None:
    code = "import sys\nsys.stdout.write('o' * 50000 + 'LAST')\nsys.stderr.write('e' * 30000 + 'ERR')\n"

    outcome = await _run(code)

    assert outcome.stdout == "o" * 50000 + "LAST"
    assert outcome.stderr == "e" * 30000 + "ERR"


@pytest.mark.anyio
async def test_a_process_outside_the_group_holding_the_pipe_open_does_not_hold_the_call(tmp_path: Path) -> None:
    # A grandchild in its own session (out of our reach, see architecture/security.md) keeps stdout open.
    pid_file = tmp_path / "escaped.pid"
    code = (
        "import subprocess,sys\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "print('parent done')\n"
    )
    try:
        with anyio.fail_after(10):
            outcome = await _run(code)
    finally:
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)

    assert outcome.returncode == 0
    assert outcome.stdout == "parent done\n"
    assert outcome.duration < 5


@pytest.mark.anyio
@pytest.mark.parametrize("dump", [True, False])
async def test_an_overrun_is_sent_the_dump_signal_before_its_group_is_killed(dump: bool) -> None:
    code = (
        "import os, signal, sys, time\n"
        "signal.signal(signal.SIGUSR1, lambda *_: os.write(2, b'where I am\\n'))\n"
        "print('ready', flush=True)\n"
        "while True: time.sleep(0.01)\n"
    )
    outcome = await run_in_process_group(
        _python(code),
        cwd=Path.cwd(),
        timeout=1.0,
        limits=OutputLimits(),
        dump_signal=signal.SIGUSR1 if dump else None,
    )

    assert (outcome.timed_out, outcome.stdout) == (True, "ready\n")
    assert outcome.stderr == ("where I am\n" if dump else "")
    assert outcome.duration < 5


@pytest.mark.anyio
async def test_a_command_the_os_would_refuse_is_refused_before_anything_starts(tmp_path: Path) -> None:
    """E2BIG used to come back as 'pytest cannot be run... install pytest'."""
    marker = tmp_path / "started"
    argv = [sys.executable, "-c", f"open({str(marker)!r}, 'w')", *(["x" * 2000] * 1100)]

    with pytest.raises(process.CommandTooLong) as caught:
        await run_in_process_group(argv, cwd=tmp_path, timeout=10, limits=OutputLimits())

    assert f"the system passes at most {os.sysconf('SC_ARG_MAX'):,}" in str(caught.value)
    assert not marker.exists()


def test_one_string_longer_than_linux_takes_is_named() -> None:
    with pytest.raises(process.CommandTooLong, match="one of its strings is 200,000 bytes"):
        process.check_command_size(["python", "y" * 200_000], {})


@pytest.mark.anyio
async def test_no_process_inherits_the_servers_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_MCP_AUTH_TOKEN", "token-that-must-stay-in-the-server-0123456789")
    monkeypatch.setenv("SOMETHING_ELSE", "kept")
    argv = [
        sys.executable,
        "-c",
        "import os; print(sorted(k for k in os.environ if k in ('PYTEST_MCP_AUTH_TOKEN', 'SOMETHING_ELSE')))",
    ]

    outcome = await run_in_process_group(argv, cwd=tmp_path, timeout=30, limits=OutputLimits())

    assert outcome.stdout.strip() == "['SOMETHING_ELSE']"
