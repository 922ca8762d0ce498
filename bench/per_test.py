"""What pytest-mcp's own code costs per test, in µs of CPU: the reporter's hooks inside pytest, and the
server's reading of the events (ADR 0018). Opt-in: `.venv/bin/python -m bench.per_test [--tests N]`.

Each piece runs alone, in this process, on as many synthetic tests as a large suite has, and is
timed with `time.process_time`: what it costs does not depend on other load, as wall time on a
shared machine does. Writes bench/results/per_test.md.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import anyio
from _pytest.reports import TestReport

from pytest_mcp.adapters.pytest_subprocess import report
from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
from pytest_mcp.domain.progress import RunWatch

PLUGIN = Path(report.__file__).parent / "_plugin"
RESULTS = Path(__file__).resolve().parent / "results" / "per_test.md"


def _reporter_module():  # type: ignore[no-untyped-def]
    """The reporter as pytest loads it: by its own name, beside the protocol module it imports."""
    sys.path.insert(0, str(PLUGIN))
    import _pytest_mcp_reporter

    return _pytest_mcp_reporter


class _Plugins:
    def hasplugin(self, name: str) -> bool:
        return True  # the terminal reporter is there: the reporter keeps no statistics of its own


class _Config:
    pluginmanager = _Plugins()

    def getoption(self, name: str) -> object:
        return {
            protocol.OPTION_MODE: "run",
            protocol.OPTION_PASSED: False,
            protocol.OPTION_PROGRESS: True,
            protocol.OPTION_FACTS: None,
        }[name]


def _cpu(work: Callable[[], object]) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started


def measure(tests: int) -> list[tuple[str, float]]:
    """(what, µs per test) for every piece of our code that runs once per test."""
    module = _reporter_module()
    path = Path(tempfile.mkdtemp(prefix="per-test-")) / "report.jsonl"
    reporter = module.ProgressReporter(_Config(), str(path))
    reporter.emit(protocol.COLLECTED, total=tests)
    phases = ("setup", "call", "teardown")
    passes = [
        TestReport(f"t.py::test_{i // 3}", ("t.py", i, "x"), {}, "passed", None, phases[i % 3])
        for i in range(3 * min(tests, 10_000))
    ]
    rounds = max(1, tests // 10_000)
    figures = [
        (
            "pytest: `pytest_runtest_logreport`, a plain pass (3 reports, returns early)",
            _cpu(lambda: [reporter.pytest_runtest_logreport(r) for _ in range(rounds) for r in passes]),
        ),
        (
            "pytest: `pytest_runtest_logfinish`, the progress line of a followed run",
            _cpu(lambda: [reporter.pytest_runtest_logfinish("t.py::test", None) for _ in range(tests)]),
        ),
    ]
    # slowest=50: the heap's hook on every report, with durations that keep replacing the heap's top.
    slowest = module.Slowest(50)
    timed = [
        TestReport(f"t.py::test_{i // 3}", ("t.py", i, "x"), {}, "passed", None, phases[i % 3], duration=i * 1e-7)
        for i in range(3 * min(tests, 10_000))
    ]
    figures.append(
        (
            "pytest: `Slowest.pytest_runtest_logreport`, a run with slowest=50 (3 reports)",
            _cpu(lambda: [slowest.pytest_runtest_logreport(r) for _ in range(rounds) for r in timed]),
        )
    )
    reporter.file.close()

    async def follow() -> None:
        await report.ProgressFollower(path, RunWatch()).poll()

    figures.append(("server: following the report (`ProgressFollower.poll`)", _cpu(lambda: anyio.run(follow))))
    figures.append(
        (
            "server: reading the report after pytest exited (`read_report`)",
            _cpu(lambda: report.read_report(path, 1 << 30)),
        )
    )
    return [(what, seconds / tests * 1e6) for what, seconds in figures]


def render(tests: int, figures: list[tuple[str, float]]) -> str:
    lines = [
        "# pytest-mcp's own code, per test",
        "",
        f"Measured by `python -m bench.per_test --tests {tests}` on {datetime.now(UTC):%Y-%m-%d %H:%M UTC} "
        f"(Python {platform.python_version()}): CPU time of each piece alone over {tests:,} synthetic tests, "
        "which other load on the machine does not change much. For scale: raw pytest spends 500 to 900 µs "
        "on a trivial test on this machine (results/large.md). See ADR 0018.",
        "",
        "| piece | µs per test | s at this many tests |",
        "|---|---:|---:|",
        *(f"| {what} | {micros:.2f} | {micros * tests / 1e6:.3f} |" for what, micros in figures),
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=100_000)
    args = parser.parse_args()
    markdown = render(args.tests, measure(args.tests))
    RESULTS.write_text(markdown)
    print(markdown)


if __name__ == "__main__":
    main()
