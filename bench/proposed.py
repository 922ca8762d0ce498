"""The fixes this benchmark proposes for src/, applied to a throw-away copy of the package.

    .venv/bin/python bench/proposed.py        # (re)build bench/.cache/proposed-src and list the fixes

`bench/run.py --proposed` starts that copy as one more server ("pytest-mcp + fixes"), so each
figure has a before and an after measured in the same run. Nothing under src/ is touched: the
copy is made fresh from src/ each time, and every fix is a text replacement that must match
exactly, so a fix that no longer applies to the current src/ fails loudly instead of silently.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "src" / "pytest_mcp"
COPY = REPO / "bench" / ".cache" / "proposed-src"

# Fix 2, in src/pytest_mcp/adapters/pytest_subprocess/process.py: pytest's output goes to files, not pipes.
# With a pipe, pytest flushes one progress character per test and the server's event loop wakes up for
# each one (a read, a buffer feed, three loop iterations); with a file nobody wakes up until pytest exits,
# and only the head and the tail of the file are read, so memory stays bounded as before.
PROCESS_FIX = '''

def _bounded_text(handle: Any, head: int, tail: int) -> str:
    """What BoundedBuffer(head, tail).text() gives for the file's bytes, reading only head and tail."""
    size = handle.seek(0, os.SEEK_END)
    handle.seek(0)
    buffer = BoundedBuffer(head, tail)
    buffer.feed(handle.read(min(head, size)))
    rest = size - min(head, size)
    if rest > tail:
        buffer.total += rest - tail  # counted as cut, never read
        handle.seek(size - tail)
    buffer.feed(handle.read())
    return buffer.text()


async def _run_with_output_files(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    limits: OutputLimits,
    while_running: Callable[[], Awaitable[None]] | None = None,
) -> ProcessOutcome:
    """run_in_process_group, with stdout and stderr in unlinked temporary files instead of pipes."""
    import tempfile

    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = await anyio.open_process(
            list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd, start_new_session=True
        )
        pgid = process.pid
        _live_groups.add(pgid)
        timed_out = False
        try:
            async with anyio.create_task_group() as companions:
                companion = anyio.CancelScope()
                if while_running is not None:

                    async def accompany() -> None:
                        with companion:
                            await while_running()

                    companions.start_soon(accompany)
                with anyio.move_on_after(timeout) as deadline:
                    await process.wait()
                companion.cancel()
                timed_out = deadline.cancelled_caught
        finally:
            _kill_group(pgid)
            with anyio.CancelScope(shield=True):
                await process.wait()
                await process.aclose()
            _live_groups.discard(pgid)
        return ProcessOutcome(
            returncode=None if timed_out else process.returncode,
            timed_out=timed_out,
            stdout=_bounded_text(out, limits.stdout_head, limits.stdout_tail),
            stderr=_bounded_text(err, limits.stderr_head, limits.stderr_tail),
            duration=time.perf_counter() - started,
        )


run_in_process_group = _run_with_output_files  # noqa: F811
'''


@dataclass(frozen=True)
class Fix:
    title: str
    file: str
    old: str
    new: str
    count: int = 1


FIXES = (
    Fix(
        "1. reporter: a passing report nothing lists returns before asking pytest_report_teststatus",
        "adapters/pytest_subprocess/_plugin/_pytest_mcp_reporter.py",
        "    def pytest_runtest_logreport(self, report):\n",
        "    def pytest_runtest_logreport(self, report):\n"
        "        # Nothing lists a passing setup/teardown, nor a passing call unless asked: no hook call.\n"
        '        if report.passed and not hasattr(report, "wasxfail") and not hasattr(report, "context") and (\n'
        '            report.when != "call" or not self.include_passed\n'
        "        ):\n"
        "            return\n",
    ),
    Fix(
        "2. process: pytest's stdout and stderr go to files, read head and tail after the run (no pipe wake-ups)",
        "adapters/pytest_subprocess/process.py",
        "from anyio.abc import ByteReceiveStream\n",
        "from typing import Any\n\nfrom anyio.abc import ByteReceiveStream\n",
    ),
    Fix(
        "3. execute_tests: when `tests` lists every non-passing report, text_output is pytest's final line only",
        "domain/execute_tests.py",
        "clean = exit_code in (0, 5) and not report.collection_errors",
        'clean = (exit_code in (0, 5) or request.detail != "summary") and not report.collection_errors',
    ),
    Fix(
        "3. (cont.)",
        "domain/execute_tests.py",
        "text_output=keep_tail(report.stdout, limit),",
        'text_output=(last_line(report.stdout) or "") if clean else keep_tail(report.stdout, limit),',
    ),
    Fix(
        "3. (cont.)",
        "domain/execute_tests.py",
        "from pytest_mcp.domain.text import keep_head, keep_tail\n",
        "from pytest_mcp.domain.text import keep_head, keep_tail, last_line\n",
    ),
    Fix(
        "4. interpreter detection: probe python3 on PATH with find_spec, not a full `import pytest`",
        "adapters/pytest_subprocess/interpreter.py",
        '[str(python), "-c", "import pytest"]',
        '[str(python), "-c", "import importlib.util as u,sys; sys.exit(u.find_spec(\'pytest\') is None)"]',
    ),
    Fix(
        "5. container: the fakes, recording and HTTP adapters are imported when first built, not on the stdio path",
        "container.py",
        "from pytest_mcp.adapters.fake_environment import FakeEnvironmentProbe\n"
        "from pytest_mcp.adapters.fake_runner import FakeTestRunner\n"
        "from pytest_mcp.adapters.http_transport import HttpOptions, HttpTransport\n",
        "",
    ),
    Fix(
        "5. (cont.)",
        "container.py",
        "from pytest_mcp.adapters.recording import DomainResults, RunRecorder\n",
        "",
    ),
    Fix(
        "5. (cont.)",
        "container.py",
        "\n\ndef _revealed(",
        "\n\ndef _lazy(module: str, name: str):  # type: ignore[no-untyped-def]\n"
        "    def build(*args, **kwargs):  # type: ignore[no-untyped-def]\n"
        "        import importlib\n\n"
        "        return getattr(importlib.import_module(module), name)(*args, **kwargs)\n\n"
        "    return build\n\n\n"
        'FakeEnvironmentProbe = _lazy("pytest_mcp.adapters.fake_environment", "FakeEnvironmentProbe")\n'
        'FakeTestRunner = _lazy("pytest_mcp.adapters.fake_runner", "FakeTestRunner")\n'
        'HttpOptions = _lazy("pytest_mcp.adapters.http_transport", "HttpOptions")\n'
        'HttpTransport = _lazy("pytest_mcp.adapters.http_transport", "HttpTransport")\n'
        'DomainResults = _lazy("pytest_mcp.adapters.recording", "DomainResults")\n'
        'RunRecorder = _lazy("pytest_mcp.adapters.recording", "RunRecorder")\n\n\n'
        "def _revealed(",
    ),
)


def build() -> Path:
    """A fresh copy of src/pytest_mcp under bench/.cache/proposed-src with every fix applied."""
    target = COPY / "pytest_mcp"
    shutil.rmtree(COPY, ignore_errors=True)
    shutil.copytree(SOURCE, target, ignore=shutil.ignore_patterns("__pycache__"))
    for fix in FIXES:
        path = target / fix.file
        text = path.read_text()
        found = text.count(fix.old)
        if found != fix.count:
            raise SystemExit(f"proposed fix no longer applies ({fix.title}): {fix.file} has {found} matches")
        path.write_text(text.replace(fix.old, fix.new))
    process = target / "adapters" / "pytest_subprocess" / "process.py"
    process.write_text(process.read_text() + PROCESS_FIX)
    return COPY


def server_args() -> list[str]:
    """`python` arguments that start the copy's CLI (PYTHONPATH must put COPY first)."""
    return ["-c", "from pytest_mcp.cli import main; main()"]


if __name__ == "__main__":
    copy = build()
    print(f"built {copy}; start it with PYTHONPATH={copy} {sys.executable} {' '.join(server_args())} --root DIR")
    for fix in FIXES:
        if not fix.title.endswith("(cont.)"):
            print(" ", fix.title)
