"""Rank the planted bugs' failures again, offline: what the ranking reads, captured once per case (issue 41).

    .venv/bin/python bench/rank_offline.py capture --python 3.12 [--cases humanize,toolz]
    .venv/bin/python bench/rank_offline.py rank [--python 3.12]
    .venv/bin/python bench/rank_offline.py summary --python 3.12   # every batch captured: first, per mode
    .venv/bin/python bench/rank_offline.py capture --python 3.12 --held-out-7  # planted.py's seventh batch

`capture` runs bench/causes.py's cases through the server as `causes.py` does (a fresh planted copy and
a fresh server: *failures alone*; a clean run, then the edit, on one server: *after an edit*), with
`pytest_mcp.domain.causes._read` wrapped so that each call's arguments (the run's reports, symptom
groups, spectrum, the history before it and the code's digests) are pickled under
bench/.cache/rank-offline/py<VERSION>/. `rank` reads them with the code of this tree, in this process,
and prints each case's culprits with the planted function's place: a change to the ranking is tried on
every case in seconds, with no run and no load in the figures. The pickles hold this machine's paths
and are never committed.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
import causes
import planted
from harness import bench_env, connect
from mcp import StdioServerParameters
from planted import CASES, HELD_OUT_BATCHES

CACHE = Path(__file__).resolve().parent / ".cache" / "rank-offline"
LAUNCHER = """
import os, pickle, sys
from pathlib import Path
import pytest_mcp.domain.causes as causes
original = causes._read
def _read(*args, **kwargs):
    out = Path(os.environ["RANK_OFFLINE_OUT"])
    out.write_bytes(pickle.dumps((args, kwargs)))
    return original(*args, **kwargs)
causes._read = _read
from pytest_mcp.cli import main
sys.argv = ["pytest-mcp", *sys.argv[1:]]
sys.exit(main())
"""


def params(root: Path, python: Path, out: Path) -> StdioServerParameters:
    env = bench_env() | {"RANK_OFFLINE_OUT": str(out)}
    argv = ["-c", LAUNCHER, "--root", str(root), "--python", str(python)]
    return StdioServerParameters(command=sys.executable, args=argv, env=env)


async def capture_case(case: planted.Case, project: causes.Project, work: Path, into: Path) -> None:
    edited = causes.fresh_copy(case, project, work / "edited", bugs=False)
    async with connect(params(edited, project.python, into / f"{case.key}-after_edit.pickle"), "rank-offline") as s:
        await causes.execute(s)
        for bug in case.plants:
            planted.plant(edited, bug)
        await causes.execute(s)
    cold = causes.fresh_copy(case, project, work / "cold", bugs=True)
    async with connect(params(cold, project.python, into / f"{case.key}-alone.pickle"), "rank-offline") as s:
        await causes.execute(s)


def capture(version: str | None, cases: tuple[planted.Case, ...], wanted: list[str]) -> None:
    python = causes.interpreter(version)
    into = CACHE / f"py{version or 'bench'}"
    into.mkdir(parents=True, exist_ok=True)
    for case in cases:
        if case.key not in wanted:
            continue
        print(case.key, flush=True)
        with tempfile.TemporaryDirectory(prefix="rank-offline-") as directory:
            work = Path(directory)
            project = causes.prepare(case, work, python)
            anyio.run(capture_case, case, project, work, into)


def place(culprits: Any, bug: planted.Plant) -> str:
    for index, culprit in enumerate(culprits, 1):
        if culprit.file.endswith(bug.file) and culprit.function.split(".")[-1] == bug.function.split(".")[-1]:
            return str(index)
    return "-"


def ranked(into: Path, case: planted.Case, mode: str) -> Any | None:
    """The causes this tree reads from a case's recorded run, or None when it was not captured."""
    from pytest_mcp.domain.causes import _read
    from pytest_mcp.domain.localization import CodeState

    path = into / f"{case.key}-{mode}.pickle"
    if not path.exists():
        return None
    args, kwargs = pickle.loads(path.read_bytes())  # noqa: S301 (written by `capture`, on this machine)
    args = list(args)
    args[5] = CodeState(**vars(args[5]))  # a capture older than a field of CodeState gets its default
    found, _ = _read(*args, **kwargs)
    return found


def rank(version: str | None, cases: tuple[planted.Case, ...], wanted: list[str]) -> None:
    into = CACHE / f"py{version or 'bench'}"
    firsts = {"alone": 0, "after_edit": 0}
    for case in cases:
        for mode in ("alone", "after_edit"):
            found = ranked(into, case, mode) if case.key in wanted else None
            if found is None:
                continue
            places = "/".join(place(found.culprits, bug) for bug in case.plants)
            firsts[mode] += places == "1" and case.suite is not None
            names = ", ".join(f"{c.function} {c.score}" + (" *" if c.changed else "") for c in found.culprits)
            merged = sum(1 for group in found.groups if group.culprit is not None)
            print(f"{case.key:15} {mode:10} place {places:6} groups {len(found.groups):3} (by cause {merged}) {names}")
    print(f"planted first, real suites: {firsts}")


def summary(version: str | None) -> None:
    """Per batch, the real suites whose planted function comes first, from the failures alone and after
    an edit, out of those captured: every batch's figure from this tree in seconds."""
    into = CACHE / f"py{version or 'bench'}"
    batches = [("bench", CASES), *((f"held-out {n}", cases) for n, cases in enumerate(HELD_OUT_BATCHES, 1))]
    for name, cases in batches:
        figures = []
        for mode in ("alone", "after_edit"):
            found = [(case, ranked(into, case, mode)) for case in cases if case.suite is not None]
            read = [(case, causes) for case, causes in found if causes is not None]
            first = sum(all(place(causes.culprits, bug) == "1" for bug in case.plants) for case, causes in read)
            figures.append(f"{mode} {first} of {len(read)}")
        print(f"{name:12} " + ", ".join(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("capture", "rank", "summary"))
    parser.add_argument("--python", metavar="VERSION")
    parser.add_argument("--cases", help="comma-separated")
    causes.add_batch_flags(parser)
    args = parser.parse_args()
    cases = causes.batch(args)
    wanted = args.cases.split(",") if args.cases else [case.key for case in cases]
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    if args.action == "capture":
        capture(args.python, cases, wanted)
    elif args.action == "summary":
        summary(args.python)
    else:
        rank(args.python, cases, wanted)


if __name__ == "__main__":
    main()
