"""Measurement: what a run that records its own spectrum costs (issue 41, ADR 0020), against raw pytest.

On a Python 3.12+ venv (pytest from the index), per round in a shuffled order: raw `python -m pytest
--color=no -q` (the command the server's answer gives to reproduce its run, pytest's cache on) twice
(the second is the noise floor) and `execute_tests` through the real server in this process (one
long-lived session per suite, as an agent's). Suites: 2,000 tests passing, the same with
3 failures (a wrong value in a shared function, an integer assertion, an exception two frames down),
and 20,000 trivial tests. Figures: the median of the per-round ratios. Writes results/run-spectrum.md.

    .venv/bin/python bench/run_spectrum.py [--rounds 5] [--large]   # --large: 100,000 tests too
    .venv/bin/python bench/run_spectrum.py --large --only 100,000 --rounds 1 --out FILE
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from pytest_mcp.testing import connect

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache" / "run-spectrum"

LIBRARY = """\
def gross(net, rate=0.2):
    return round(net * (1 + rate), 2){bug}


def label(net):
    return f"{{gross(net):.2f}} EUR"


def check(value):
    if value < 0:
        raise ValueError("negative")
    return value
"""
MODULE = """\
from shop.lib import check, gross, label


def helper(value):
    return check(value)


{tests}
"""
PASSING = "def test_{n}():\n    assert gross({n}) == round({n} * 1.2, 2)\n\n"
TRIVIAL = "def test_{n}():\n    assert {n} == {n}\n\n"
FAILING = (
    "def test_label_wrong():\n    assert label(10) == '12.00 EUR'\n\n"
    "def test_count():\n    assert len([1, 2]) == 3\n\n"
    "def test_two_frames_down():\n    assert helper(-1) == 1\n\n"
)


def suite(name: str, tests: int, *, failing: bool = False, trivial: bool = False) -> Path:
    root = CACHE / name
    if root.exists():
        return root
    (root / "shop").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "lib.py").write_text(LIBRARY.format(bug=" + 0.01 * (net == 10)" if failing else ""))
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    per_file = 100
    for index in range(tests // per_file):
        body = "".join((TRIVIAL if trivial else PASSING).format(n=index * per_file + n) for n in range(per_file))
        if failing and index == 0:
            body += FAILING
        (root / "tests" / f"test_{index:04d}.py").write_text(MODULE.format(tests=body))
    return root


def python312() -> Path:
    venv = CACHE / "venv312"
    python = venv / "bin" / "python"
    if not python.exists():
        candidates = sorted(Path.home().glob(".pyenv/versions/3.1[2-9]*/bin/python"))
        if not candidates:
            raise SystemExit("needs a Python 3.12 or later under pyenv")
        subprocess.run([str(candidates[0]), "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "pytest"], check=True)
    return python


def cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


RAW = ("-m", "pytest", "--color=no", "-q")
"""The command the server's answer gives to reproduce its run: pytest's cache on, as the server's run has
it (the server keeps it for `last_failed`); until 2026-11-27 raw ran with `-p no:cacheprovider` and so
did less work than the server's pytest (the cache's hooks on each report, 20,000 node ids read and
written back)."""


def raw(python: Path, root: Path) -> tuple[float, float]:
    """Wall and CPU seconds of a plain pytest run (its process tree: it is this process's child).

    Its output goes into pipes that this process reads, as the server's pytest's does."""
    started, children = time.perf_counter(), cpu(resource.RUSAGE_CHILDREN)
    subprocess.run([str(python), *RAW], cwd=root, capture_output=True, check=False)
    return time.perf_counter() - started, cpu(resource.RUSAGE_CHILDREN) - children


async def call(client: Any, figures: dict[str, list[float]], kind: str) -> Any:
    """One execute_tests: its wall time, and the CPU of the server (this process) and of its pytest (a child)."""
    started = time.perf_counter()
    before = cpu(resource.RUSAGE_CHILDREN) + cpu(resource.RUSAGE_SELF)
    result = await client.call_tool("execute_tests", {})
    figures[kind].append(time.perf_counter() - started)
    figures[f"{kind}_cpu"].append(cpu(resource.RUSAGE_CHILDREN) + cpu(resource.RUSAGE_SELF) - before)
    assert result.structured_content is not None
    return result


async def measure(python: Path, suites: dict[str, Path], rounds: int) -> dict[str, dict[str, list[float]]]:
    kinds = ("raw", "floor", "server", "first", "raw_cpu", "floor_cpu", "server_cpu", "first_cpu")
    figures: dict[str, dict[str, list[float]]] = {name: {kind: [] for kind in kinds} for name in suites}
    for round_number in range(rounds):
        order = list(suites)
        random.Random(round_number).shuffle(order)  # noqa: S311 - an order, not a secret
        for name in order:
            root = suites[name]
            async with connect(root=root, python=python, timeout=3600, max_timeout=3600, detach_after=0) as client:
                # A session's first call also probes the interpreter and reads the project's code; an
                # agent's later calls are the steady state: both are measured, the later one against raw.
                result = await call(client, figures[name], "first")
                wall, spent = raw(python, root)
                figures[name]["raw"].append(wall)
                figures[name]["raw_cpu"].append(spent)
                await call(client, figures[name], "server")
                wall, spent = raw(python, root)
                figures[name]["floor"].append(wall)
                figures[name]["floor_cpu"].append(spent)
                last = {kind: f"{values[-1]:.2f}" for kind, values in figures[name].items()}
                print(f"round {round_number + 1}, {name}: {last}", flush=True)  # a cut-short run still tells
                if round_number == 0:
                    text = result.content[0].text
                    print(f"{name}: " + " | ".join(text.splitlines()[:2]))
    return figures


def ratio(numerators: list[float], denominators: list[float]) -> float:
    return statistics.median(n / d for n, d in zip(numerators, denominators, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--large", action="store_true", help="100,000 tests too, passing and with 3 failures")
    parser.add_argument("--only", metavar="TEXT", help="only the suites whose name holds TEXT, e.g. 100,000")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "run-spectrum.md", help="where the table goes")
    args = parser.parse_args()
    python = python312()
    suites = {
        "2,000 passing": suite("pass-2000", 2000),
        "2,000 with 3 failures": suite("fail-2000", 2000, failing=True),
        "20,000 trivial": suite("trivial-20000", 20000, trivial=True),
    }
    if args.large:
        suites["100,000 passing"] = suite("pass-100000", 100_000)
        suites["100,000 with 3 failures"] = suite("fail-100000", 100_000, failing=True)
    if args.only:
        suites = {name: root for name, root in suites.items() if args.only in name}
        if not suites:
            parser.error(f"--only: no suite's name holds {args.only!r}")
    figures = anyio.run(measure, python, suites, args.rounds)
    load = Path("/proc/loadavg").read_text().split()[:3]
    lines = [
        "# A run that records its own spectrum, against raw pytest (issue 41)",
        "",
        f"Python: {subprocess.run([str(python), '-V'], capture_output=True, text=True).stdout.strip()}; "
        f"{args.rounds} rounds, shuffled; load average at the end {' '.join(load)}.",
        "",
        "CPU time is user + system of the run's process tree (and, for the server, of this process, which",
        "the server and its client share): on a shared machine it moves far less than wall time.",
        "",
        "The server's figures are a session's second call; a session's first call, which also probes the",
        "interpreter and digests the project's code, is the last column (its CPU against raw).",
        "",
        "| suite | raw pytest (median s) | server (median s) | server / raw | noise floor "
        "| CPU raw (median s) | CPU server | CPU server / raw | CPU noise floor | first call: CPU / raw |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, values in figures.items():
        lines.append(
            f"| {name} | {statistics.median(values['raw']):.2f} | {statistics.median(values['server']):.2f} | "
            f"{ratio(values['server'], values['raw']):.3f}x | {ratio(values['floor'], values['raw']):.3f}x "
            f"| {statistics.median(values['raw_cpu']):.2f} | {statistics.median(values['server_cpu']):.2f} "
            f"| {ratio(values['server_cpu'], values['raw_cpu']):.3f}x "
            f"| {ratio(values['floor_cpu'], values['raw_cpu']):.3f}x "
            f"| {ratio(values['first_cpu'], values['raw_cpu']):.3f}x |"
        )
    out = args.out
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
