"""affected=true on a real suite (issue 26): packaging 26.3's suite without its two largest files, one-function edits.

    .venv/bin/python bench/affected.py [--rounds 3]      # the suite below, with exactness: affected.md
    .venv/bin/python bench/affected.py --whole [--rounds 1]   # all 62,423 tests, timings: affected-whole.md

Needs `scripts/fetch-real-suites packaging`. Builds bench/.cache/affected-venv (the suite's pins plus
pytest-testmon 2.2.0), copies the suite to a temporary directory and imports packaging from its
`src/` (PYTHONPATH), so that an edit there reaches the tests. Writes bench/results/affected.md.

The suite is every tests/test_*.py but test_version.py (51,523 tests) and test_requirements.py
(5,332): about 5,600 tests, which plain pytest runs in about 6 s here. With those two, a recording
run takes minutes, too long for five edit kinds a round; `--whole` measures the timings on it.

Measured, each round in a shuffled order (absolute times drift on a shared machine):
- `pytest -q` alone, twice (the second is the noise floor), and `pytest -q --testmon-forceselect`
  with a fresh data file: testmon's overhead on a first, full run.
- Through the server (in process), after a one-function edit: the affected run against a full run.
Then exactness: for five kinds of edit, the failures of an affected run against a full run's.
Each edit kind's failures are read in full: the affected and the full run's kept reports are
paged with get_test_run, so compressed failure groups do not hide a member.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SUITE = REPO / ".cache" / "real-suites" / "packaging-26.3"
VENV = BENCH / ".cache" / "affected-venv"
PINS = [
    "pytest==9.2.0",
    "hypothesis==6.170.15",
    "sortedcontainers==2.4.0",
    "pretend==1.0.9",
    "tomli-w==1.2.0",
    "pytest-testmon==2.2.0",
]
RESULTS = BENCH / "results" / "affected.md"
RESULTS_WHOLE = BENCH / "results" / "affected-whole.md"  # --whole: every test file, timings only
# Left out of the default suite by a `collect_ignore` in the copy's tests/conftest.py, not by node ids:
# pytest collects a path given on its command line whatever testmon says, and an agent's affected
# run names none. test_specifiers.py still imports test_version.py.
LEFT_OUT = ("test_version.py", "test_requirements.py")

# One function's body: what an agent's edit most often is. `_parse_musl_version` is used by the
# musllinux tests; the edit keeps them passing, so the affected run is the whole loop's cost.
TIMED_EDIT = ("src/packaging/_musllinux.py", "    if len(lines) < 2 or", "    if len(lines) <= 1 or")
# (file, old, new): each breaks some tests.
EDITS: dict[str, tuple[str, str, str]] = {
    "body change": ("src/packaging/_musllinux.py", "    if len(lines) < 2", "    if len(lines) < 3"),
    "signature change": (
        "src/packaging/utils.py",
        "def is_normalized_name(name: str) -> bool:",
        "def is_normalized_name(name: str, strict: bool) -> bool:",
    ),
    "module-level constant": ("src/packaging/tags.py", '    "cpython": "cp",', '    "cpython": "cx",'),
    "conftest fixture": (
        "tests/conftest.py",
        "    _cached_default_environment.cache_clear()\n    yield",
        "    _cached_default_environment.cache_clear()\n"
        "    assert sysconfig.get_platform() != 'linux-x86_64'\n    yield",
    ),
    "data file read at import": ("tests/musllinux/musl-x86_64", "", ""),  # truncated: see edit()
}


def venv_python() -> Path:
    python = VENV / "bin" / "python"
    stamp = VENV / "pins.json"
    if python.exists() and stamp.exists() and json.loads(stamp.read_text()) == PINS:
        return python
    shutil.rmtree(VENV, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *PINS], check=True)
    stamp.write_text(json.dumps(PINS))
    return python


def fresh_copy(into: Path, left_out: tuple[str, ...] = LEFT_OUT) -> Path:
    ready = json.loads((SUITE / "ready.json").read_text())
    root = into / "packaging"
    shutil.copytree(SUITE / ready["root"], root, ignore=shutil.ignore_patterns(".pytest_cache", "__pycache__"))
    if left_out:
        with (root / "tests" / "conftest.py").open("a", encoding="utf-8") as conftest:
            conftest.write(f"\ncollect_ignore = {list(left_out)!r}\n")
    return root


def edit(root: Path, name: str, old: str, new: str) -> None:
    path = root / name
    if name.startswith("tests/musllinux/"):
        path.write_bytes(path.read_bytes()[:64])  # an ELF header cut short
    else:
        text = path.read_text()
        assert old in text, (name, old)
        path.write_text(text.replace(old, new, 1))
    stat = path.stat()  # testmon reads mtimes first: make the edit visible whatever the clock's grain
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


async def call(root: Path, python: Path, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """One execute_tests call on the suite's node ids; its answer, with `failed` set to every failed or
    error node id, read by paging the run's kept reports."""
    settings = Settings(root=root, python=python, timeout=1800, max_timeout=1800, detach_after=0)
    tools = create_container(settings).tool_server()
    async with tools.serving(), Client(tools.server) as client:  # served: a failing run keeps its reports
        started = time.perf_counter()
        result = await client.call_tool("execute_tests", arguments)
        elapsed = time.perf_counter() - started
        answer = result.structured_content
        assert answer is not None, result.content
        failed = {test["node_id"] for test in answer["tests"] if test["outcome"] in ("failed", "error")}
        offset: int | None = 0 if answer.get("run_id") else None
        while offset is not None:
            page = await client.call_tool("get_test_run", {"run_id": answer["run_id"], "offset": offset})
            assert page.structured_content is not None, page.content
            reports = page.structured_content["tests"]
            failed |= {test["node_id"] for test in reports if test["outcome"] in ("failed", "error")}
            offset = page.structured_content["page"]["next_offset"]
    counted = answer["summary"].get("failed", 0) + answer["summary"].get("errors", 0)
    assert len(failed) <= counted <= len(failed) * 2, (counted, len(failed))  # a test may fail and error
    return elapsed, answer | {"failed": sorted(failed)}


def measure(rounds: int, python: Path, work: Path, left_out: tuple[str, ...]) -> dict[str, Any]:
    samples: dict[str, list[float]] = {}
    figures: dict[str, Any] = {}
    for round_number in range(rounds):
        root = fresh_copy(work / f"round-{round_number}", left_out)
        env = {**os.environ, "PYTHONPATH": str(root / "src"), "XDG_CACHE_HOME": str(root.parent / "cache")}
        os.environ.update(PYTHONPATH=env["PYTHONPATH"], XDG_CACHE_HOME=env["XDG_CACHE_HOME"])
        plain = [str(python), "-m", "pytest", "-q", "-p", "no:randomly"]
        data = root.parent / "first.testmondata"

        def first_run(
            data: Path = data, root: Path = root, env: dict[str, str] = env, plain: list[str] = plain
        ) -> float:
            data.unlink(missing_ok=True)
            return timed([*plain, "--testmon-forceselect"], root, {**env, "TESTMON_DATAFILE": str(data)})

        def plain_run(root: Path = root, env: dict[str, str] = env, plain: list[str] = plain) -> float:
            return timed(plain, root, env)

        steps: list[tuple[str, Callable[[], float]]] = [
            ("plain pytest", plain_run),
            ("plain pytest again", plain_run),
            ("testmon first run", first_run),
        ]
        random.shuffle(steps)
        for name, step in steps:
            samples.setdefault(name, []).append(step())
        # The server: record once (a first affected run), edit one function, then affected and full, shuffled.
        first_seconds, first = anyio.run(call, root, python, {"affected": True})
        edit(root, *TIMED_EDIT)
        pair = [("affected run after the edit", {"affected": True}), ("full run", {})]
        random.shuffle(pair)
        for name, arguments in pair:
            seconds, answer = anyio.run(call, root, python, arguments)
            samples.setdefault(name, []).append(seconds)
            figures[name] = answer
        samples.setdefault("first affected run (server)", []).append(first_seconds)
        figures["first affected run (server)"] = first
        shutil.rmtree(root.parent, ignore_errors=True)
    figures["samples"] = samples
    return figures


def exactness(python: Path, work: Path) -> dict[str, Any]:
    rows = {}
    for kind, change in EDITS.items():
        root = fresh_copy(work / kind.replace(" ", "-"))
        os.environ.update(PYTHONPATH=str(root / "src"), XDG_CACHE_HOME=str(root.parent / "cache"))
        anyio.run(call, root, python, {"affected": True})
        edit(root, *change)
        _, affected = anyio.run(call, root, python, {"affected": True})
        _, full = anyio.run(call, root, python, {})
        rows[kind] = {
            "full failures": len(full["failed"]),
            "affected failures": len(affected["failed"]),
            "affected run": affected["affected"]["run"],
            "why": affected["affected"].get("ran_everything") or "",
            "exact": full["failed"] == affected["failed"],
        }
        shutil.rmtree(root.parent, ignore_errors=True)
    return rows


def render(figures: dict[str, Any], rows: dict[str, Any], rounds: int, left_out: tuple[str, ...]) -> str:
    samples = figures["samples"]
    med = {name: statistics.median(values) for name, values in samples.items()}
    full = figures["full run"]["summary"]
    affected = figures["affected run after the edit"]
    ratio = med["affected run after the edit"] / med["full run"]
    overhead = med["testmon first run"] / med["plain pytest"]
    floor = med["plain pytest again"] / med["plain pytest"]
    lines = [
        "# affected=true on a real suite",
        "",
        f"packaging 26.3's suite{', tests/' + ' and tests/'.join(left_out) + ' left out' if left_out else ', whole'} "
        f"({full['total']:,} tests, {full['deselected']:,} deselected by its addopts), "
        "pytest 9.2.0, pytest-testmon 2.2.0; "
        f"{rounds} rounds, shuffled within each; medians. Written by `bench/affected.py` on a shared 2-core machine.",
        "",
        "| measurement | median s | samples |",
        "|---|---:|---|",
        *(
            f"| {name} | {med[name]:.2f} | {', '.join(f'{v:.2f}' for v in values)} |"
            for name, values in samples.items()
        ),
        "",
        f"- Affected run after a one-function edit ({TIMED_EDIT[0]}, `_parse_musl_version`): "
        f"{affected['affected']['run']} tests run, {affected['affected']['not_run']:,} not run; "
        f"**{ratio:.1%} of the full run's wall time** (target at most 15 %).",
        f"- testmon's first run (recording everything) against plain pytest: **{overhead:.2f}x** "
        f"(target at most 1.30x); noise floor (plain pytest against itself): {floor:.2f}x.",
        "",
    ]
    if not rows:
        return "\n".join(lines)
    lines += [
        "## Exactness: the affected run's failures against a full run's",
        "",
        "| edit | full run's failures | affected run's failures | tests the affected run ran | why all ran | exact |",
        "|---|---:|---:|---:|---|---|",
        *(
            f"| {kind} | {row['full failures']} | {row['affected failures']} | {row['affected run']:,} | "
            f"{row['why']} | {'yes' if row['exact'] else '**no**'} |"
            for kind, row in rows.items()
        ),
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 3; with --whole 1)")
    parser.add_argument(
        "--whole", action="store_true", help="every test file (62,423 tests), timings only: affected-whole.md"
    )
    args = parser.parse_args()
    rounds = args.rounds or (1 if args.whole else 3)
    left_out, results = ((), RESULTS_WHOLE) if args.whole else (LEFT_OUT, RESULTS)
    if not (SUITE / "ready.json").exists():
        print("run scripts/fetch-real-suites packaging first", file=sys.stderr)
        return 2
    python = venv_python()
    with tempfile.TemporaryDirectory(prefix="bench-affected-") as work:
        figures = measure(rounds, python, Path(work), left_out)
        rows = {} if args.whole else exactness(python, Path(work))
    results.write_text(render(figures, rows, rounds, left_out), encoding="utf-8")
    print(results.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
