"""Does the answer name the planted bug (issue 38)? Real suites with bugs planted, through the installed server.

    .venv/bin/python bench/causes.py                         # every case: results/causes.md and .json
    .venv/bin/python bench/causes.py --cases humanize,toolz  # some of them
    .venv/bin/python bench/causes.py --out causes-before     # results/causes-before.md and .json
    .venv/bin/python bench/causes.py --at REV --out NAME     # the server as it was at commit REV
    .venv/bin/python bench/causes.py --git --out NAME        # each copy a git repository, the bug uncommitted
    .venv/bin/python bench/causes.py --python 3.12 --out NAME  # the suites' venvs built from pyenv's 3.12
    .venv/bin/python bench/causes.py --held-out-7 --out NAME  # planted.py's 7th held-out batch (--held-out: the 1st)
    .venv/bin/python bench/causes.py --dump DIR              # also each answer: DIR/CASE-SCENARIO.txt and .json
    .venv/bin/python bench/run.py --causes                   # the same as the first

The cases are bench/planted.py's. Each real suite's sdist is fetched from PyPI once, with its test
pins in a venv of its own (never pytest-mcp), under .cache/causes-suites/ (scripts/fetch-real-suites'
mechanism); the generated projects run with pytest alone, in bench/.cache/causes-venv. The suites' venvs
are built from the bench's own interpreter, or with `--python VERSION` from pyenv's
(`~/.pyenv/versions/VERSION*/bin/python`, the newest that matches), kept apart per version
(.cache/causes-suites-pyVERSION, bench/.cache/causes-venv-pyVERSION): on 3.12 and later the server records
the spectrum in the run itself, before it in a second pass. Per case, each project a fresh copy in a
scratch directory, one run of each, in this order:

- raw `python -m pytest -q` on the clean copy;
- `pytest-mcp --root COPY --python SUITE_PYTHON` over stdio, through the MCP SDK client, `execute_tests`
  with default arguments on the clean copy; then the bug is planted in that copy and the same server
  (which has seen the clean run) is called again: **after an edit**;
- a fresh server on a fresh planted copy: **no previous run** (what the failures alone say);
- raw `python -m pytest -q` on a planted copy.

A call whose run detaches (over --detach-after) is followed with get_test_run until it ends; its
wall time runs to the final answer. From each answer: failed + errors, groups, bytes (structured
content as compact JSON plus the text, as bench/response_sizes.py counts), whether the planted file
and function are named in the text, and, when the answer has them, the planted function's rank in
`culprits` and `localization.seconds`.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
import baseline
import planted
from harness import REPO, RESULTS, TARGET_BIN, bench_env, connect, ensure_venv
from mcp import StdioServerParameters
from planted import CASES, HELD_OUT_BATCHES, PYTEST, Case, Plant

SUITES = REPO / ".cache" / "causes-suites"
FOUR_KB = 4_096
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def fetcher() -> ModuleType:
    """scripts/fetch-real-suites, a script without a .py suffix, as a module."""
    path = REPO / "scripts" / "fetch-real-suites"
    loader = importlib.machinery.SourceFileLoader("fetch_real_suites", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Interpreter:
    """What the suites' venvs are built from: the bench's own Python (`version` None), or pyenv's `version`."""

    python: Path
    version: str | None = None

    @property
    def suites(self) -> Path:
        return SUITES if self.version is None else SUITES.with_name(f"{SUITES.name}-py{self.version}")

    @property
    def venv_name(self) -> str:
        return "causes-venv" if self.version is None else f"causes-venv-py{self.version}"


def interpreter(version: str | None) -> Interpreter:
    """pyenv's newest `version` (3.12 matches 3.12.1, not 3.120), checked to run; the bench's own without one."""
    if version is None:
        return Interpreter(Path(sys.executable))
    if not re.fullmatch(r"\d+\.\d+(\.\d+)?", version):
        raise SystemExit(f"--python: {version!r} is not a version such as 3.12")

    def key(path: Path) -> tuple[int, ...]:
        return tuple(int(part) if part.isdigit() else -1 for part in path.parents[1].name.split("."))

    versions = Path.home() / ".pyenv" / "versions"
    found = [path for path in versions.glob(f"{version}*/bin/python") if re.fullmatch(
        rf"{re.escape(version)}(\.\d+)*", path.parents[1].name)]  # fmt: skip
    for python in sorted(found, key=key, reverse=True):
        probe = subprocess.run([str(python), "-c", "import sys; print(sys.version)"], capture_output=True, text=True)
        if probe.returncode == 0:
            return Interpreter(python, version)
    raise SystemExit(f"--python: no working interpreter under ~/.pyenv/versions/{version}*")


def fetch(suite: dict[str, Any], cache: Path, python: Interpreter) -> dict[str, Any]:
    """scripts/fetch-real-suites' fetch, run by `python` so that it builds the suite's venv from that interpreter
    (and its cache key, which holds `sys.version`, is that interpreter's)."""
    if python.version is None:
        return fetcher().fetch(suite, cache)  # type: ignore[no-any-return]
    code = (
        "import importlib.machinery, importlib.util, json, sys; from pathlib import Path\n"
        "loader = importlib.machinery.SourceFileLoader('fetch_real_suites', sys.argv[1])\n"
        "module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))\n"
        "loader.exec_module(module)\n"
        "print(json.dumps(module.fetch(json.loads(sys.argv[2]), Path(sys.argv[3]))))\n"
    )
    argv = [str(python.python), "-c", code, str(REPO / "scripts" / "fetch-real-suites"), json.dumps(suite), str(cache)]
    done = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Project:
    """Where a case's clean project is, and the interpreter its tests run with."""

    source: Path
    python: Path


def prepare(case: Case, work: Path, python: Interpreter) -> Project:
    if case.suite is not None:
        ready = fetch(case.suite.definition(), python.suites, python)
        home = python.suites / f"{case.suite.name}-{case.suite.version}"
        return Project(home / ready["root"], home / ready["python"])
    assert case.generate is not None
    source = work / "generated"
    case.generate(source)
    venv = ensure_venv(python.venv_name, [PYTEST], str(python.python))
    return Project(source, venv / "bin" / "python")


def fresh_copy(case: Case, project: Project, into: Path, *, bugs: bool, git: bool = False) -> Path:
    """A copy of the clean project, with its bugs planted when `bugs`; with `git`, a repository whose HEAD is
    the clean project, so that a planted bug is an uncommitted change (as a user's edit would be)."""
    shutil.copytree(project.source, into, ignore=shutil.ignore_patterns(".pytest_cache", "__pycache__"))
    if case.suite is not None:
        planted.leave_out(into, case.suite)
        planted.import_from_source(into, case.suite)
    if git:
        command = [shutil.which("git") or "git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
        for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "clean"]):
            subprocess.run([*command, *argv], cwd=into, check=True, capture_output=True)
    if bugs:
        for bug in case.plants:
            planted.plant(into, bug)
    return into


def raw_pytest(root: Path, python: Path, env: dict[str, str]) -> dict[str, Any]:
    """Wall seconds of plain `python -m pytest -q`, and its closing line (output to a file, read afterwards)."""
    log = root.parent / f"{root.name}.pytest.log"
    with log.open("wb") as out:
        started = time.perf_counter()
        subprocess.run([str(python), "-m", "pytest", "-q"], cwd=root, env=env, stdout=out, stderr=out, check=False)
        seconds = time.perf_counter() - started
    text = ANSI.sub("", log.read_text(errors="replace"))  # a project's addopts may ask for --color=yes
    lines = [line for line in text.splitlines() if line.strip()]
    return {"seconds": round(seconds, 2), "summary": lines[-1].strip("= ") if lines else ""}


@dataclass(frozen=True)
class Answer:
    seconds: float
    structured: dict[str, Any]
    text: str
    is_error: bool
    detached: bool


async def execute(session: Any) -> Answer:
    """execute_tests with default arguments; a detached run is followed with get_test_run to its end."""
    started = time.perf_counter()
    result = await session.client.call_tool("execute_tests", {})
    detached = False
    while isinstance(result.structured_content, dict) and result.structured_content.get("status") == "running":
        detached = True
        arguments = {"run_id": result.structured_content["run_id"], "wait": 60}
        result = await session.client.call_tool("get_test_run", arguments)
    seconds = time.perf_counter() - started
    text = "\n".join(getattr(block, "text", "") or "" for block in result.content)
    return Answer(seconds, result.structured_content or {}, text, bool(result.is_error), detached)


def answer_bytes(answer: Answer) -> int:
    wire = json.dumps(answer.structured, separators=(",", ":"), ensure_ascii=False)  # as the SDK writes it
    return len(wire.encode()) + len(answer.text.encode())


def names(culprit: dict[str, Any], bug: Plant) -> bool:
    function, file = str(culprit.get("function") or ""), str(culprit.get("file") or "")
    same_function = function == bug.function or function.endswith((f".{bug.function}", f":{bug.function}"))
    return same_function and (not file or file.endswith(bug.file) or bug.file.endswith(file))


def figures(answer: Answer, bugs: tuple[Plant, ...]) -> dict[str, Any]:
    """What one answer says, in numbers; `rank` is None where the answer has no culprits at all (older code)."""
    found = answer.structured
    summary = found.get("summary", {})
    has_culprits = "culprits" in found or "localization" in found
    culprits = list(found.get("culprits") or [])
    ranks = [next((i for i, c in enumerate(culprits, 1) if names(c, bug)), None) for bug in bugs]
    localization = found.get("localization") or {}
    return {
        "seconds": round(answer.seconds, 2),
        "detached": answer.detached,
        "tool_error": answer.is_error,
        "exit_code": found.get("exit_code"),
        "tests": summary.get("total"),
        "failures": summary.get("failed", 0) + summary.get("errors", 0),
        "groups": len(found.get("groups", [])),
        "omitted_groups": found.get("omitted_groups", 0),
        "bytes": answer_bytes(answer),
        "has_culprits": has_culprits,
        "ranks": ranks if has_culprits else None,
        "groups_naming": [
            sum(1 for group in found.get("groups", []) if group.get("culprit") and names(group["culprit"], bug))
            for bug in bugs
        ],
        "culprits": [
            {key: c.get(key) for key in ("file", "function", "score", "changed") if key in c} for c in culprits
        ],
        "localization_seconds": localization.get("seconds"),
        "localization_reason": localization.get("reason", ""),
        "localization_recorder": localization.get("recorder", ""),  # in the run (3.12+) or a second pass
        "file_in_text": [bug.file in answer.text for bug in bugs],
        "function_in_text": [bool(re.search(rf"(?<![\w.]){re.escape(bug.function)}\b", answer.text)) for bug in bugs],
    }


@dataclass(frozen=True)
class Server:
    """The installed `pytest-mcp` command, or (`copy` set) the source of an earlier commit run by this venv."""

    env: dict[str, str]
    copy: Path | None = None
    git: bool = False  # every copy a git repository at the clean project

    def params(self, root: Path, python: Path) -> StdioServerParameters:
        args = ["--root", str(root), "--python", str(python)]
        if self.copy is None:
            return StdioServerParameters(command=str(TARGET_BIN / "pytest-mcp"), args=args, env=self.env)
        env = self.env | {"PYTHONPATH": str(self.copy)}
        return StdioServerParameters(command=sys.executable, args=[*baseline.server_args(), *args], env=env)


def dumped(answer: Answer, dump: Path | None, name: str) -> Answer:
    """`answer`, written first to `dump` (NAME.txt, the text block; NAME.json, the structured content) when asked:
    what takes an answer's bytes is read there. The copy's scratch paths are in them: they are not results."""
    if dump is not None:
        dump.mkdir(parents=True, exist_ok=True)
        (dump / f"{name}.txt").write_text(answer.text, encoding="utf-8")
        structured = json.dumps(answer.structured, indent=1, ensure_ascii=False)
        (dump / f"{name}.json").write_text(structured, encoding="utf-8")
    return answer


async def measure_case(
    case: Case, project: Project, work: Path, server: Server, dump: Path | None = None
) -> dict[str, Any]:
    env = server.env
    row: dict[str, Any] = {"load": round(os.getloadavg()[0], 1)}  # other work on the machine, as the case starts
    row["raw_clean"] = raw_pytest(fresh_copy(case, project, work / "raw-clean", bugs=False), project.python, env)
    edited = fresh_copy(case, project, work / "edited", bugs=False, git=server.git)
    async with connect(server.params(edited, project.python), f"causes-{case.key}") as session:
        row["clean"] = figures(dumped(await execute(session), dump, f"{case.key}-clean"), case.plants)
        for bug in case.plants:
            planted.plant(edited, bug)
        row["after_edit"] = figures(dumped(await execute(session), dump, f"{case.key}-after-edit"), case.plants)
    cold = fresh_copy(case, project, work / "cold", bugs=True, git=server.git)
    async with connect(server.params(cold, project.python), f"causes-{case.key}") as session:
        row["planted"] = figures(dumped(await execute(session), dump, f"{case.key}-planted"), case.plants)
    row["raw_planted"] = raw_pytest(fresh_copy(case, project, work / "raw-planted", bugs=True), project.python, env)
    return row


def revision() -> str:
    """The last commit that changed the server's code (src/), which is what the figures measure."""
    git = shutil.which("git") or "git"
    last = subprocess.run([git, "log", "-1", "--format=%h", "--", "src"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run([git, "status", "--porcelain", "src"], cwd=REPO, capture_output=True, text=True)
    return last.stdout.strip() + (" with uncommitted changes under src/" if dirty.stdout.strip() else "")


def describe(case: Case) -> dict[str, Any]:
    return {
        "key": case.key,
        "project": case.label,
        "bugs": [
            {"file": b.file, "function": b.function, "kind": b.kind, "what": b.what, "old": b.old, "new": b.new}
            for b in case.plants
        ],
        "left_out": list(case.suite.left_out) if case.suite else [],
        "why_left_out": case.suite.why if case.suite else "",
    }


def measure(cases: list[Case], server: Server, python: Interpreter, dump: Path | None = None) -> list[dict[str, Any]]:
    rows = []
    for case in cases:
        print(f"{case.key}: {case.label}", flush=True)
        with tempfile.TemporaryDirectory(prefix="bench-causes-") as directory:
            work = Path(directory)
            project = prepare(case, work, python)
            row = describe(case) | anyio.run(measure_case, case, project, work, server, dump)
        for scenario in ("clean", "after_edit", "planted"):
            found = row[scenario]
            print(
                f"  {scenario}: {found['failures']} failed, {found['groups']} groups, {found['bytes']:,} bytes, "
                f"{found['seconds']} s, ranks {found['ranks']}",
                flush=True,
            )
        print(f"  raw pytest: clean {row['raw_clean']}, planted {row['raw_planted']}", flush=True)
        rows.append(row)
    return rows


def rank_text(found: dict[str, Any]) -> str:
    if found["ranks"] is None:
        return "n/a (no culprits)"
    return ", ".join(
        "not named" if rank is None else f"**{rank}**" if rank == 1 else str(rank) for rank in found["ranks"]
    )


def named_text(found: dict[str, Any]) -> str:
    pairs = zip(found["file_in_text"], found["function_in_text"], strict=True)
    return ", ".join(f"{'yes' if file else 'no'} / {'yes' if function else 'no'}" for file, function in pairs)


def seconds_text(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def scenario_table(rows: list[dict[str, Any]], scenario: str) -> list[str]:
    lines = [
        "| case | failed + errors | groups | answer bytes | culprit rank | file / function in the text | wall s "
        "| localization s | raw pytest s (planted) | raw pytest says |",
        "|---|---:|---:|---:|---|---|---:|---:|---:|---|",
    ]
    for row in rows:
        found = row[scenario]
        groups = f"{found['groups']}" + (f" (+{found['omitted_groups']} left out)" if found["omitted_groups"] else "")
        wall = f"{found['seconds']:.2f}" + (" (detached)" if found["detached"] else "")
        lines.append(
            f"| {row['key']} | {found['failures']:,} | {groups} | {found['bytes']:,} | {rank_text(found)} | "
            f"{named_text(found)} | {wall} | {seconds_text(found['localization_seconds'])} | "
            f"{row['raw_planted']['seconds']:.2f} | {row['raw_planted']['summary']} |"
        )
    return lines


def goals(rows: list[dict[str, Any]]) -> list[str]:
    real = [row for row in rows if not row["project"].startswith("generated")]
    lines = []
    for scenario, words in (("planted", "no previous run"), ("after_edit", "after an edit")):
        if all(row[scenario]["ranks"] is None for row in rows):
            lines.append(f"- Planted function first ({words}): no answer names culprits (the code measured has none).")
            continue
        first = sum(1 for row in real if row[scenario]["ranks"] and row[scenario]["ranks"][0] == 1)
        top3 = sum(1 for row in real if row[scenario]["ranks"] and row[scenario]["ranks"][0] is not None)
        lines.append(
            f"- Planted function first ({words}): **{first} of {len(real)}** real suites (goal: at least 5 of 6); "
            f"in the top 3: {top3} of {len(real)}."
        )
    single = [row for row in rows if len(row["bugs"]) == 1]
    within = [row["key"] for row in single if row["planted"]["bytes"] <= FOUR_KB]
    lines.append(
        f"- One cause ≤ 4 KB (no previous run): {len(within)} of {len(single)} single-bug cases"
        + (f" ({', '.join(within)})" if within else "")
        + "."
    )
    return lines


def render(rows: list[dict[str, Any]], config: dict[str, Any]) -> str:
    lines = [
        "# Culprits on planted bugs (issue 38)",
        "",
        f"Measured by `{config['command']}` on the server's code at {config['revision']}, on {config['date']} "
        f"({config['machine']}; "
        f"the server on Python {config['python_version']}, the suites on Python "
        f"{config.get('suites_python', config['python_version'])} and pytest 9.2.0), {config['minutes']} minutes. "
        "One run of "
        "each, on a shared machine: the seconds are a single sample, not a median; *load* is the 1-minute load "
        "average as the case started (2 cores: above 2, other work was waiting for them).",
        "",
        "Each project is a fresh copy per run. *No previous run*: a fresh server on a planted copy. *After an "
        "edit*: the server that ran the clean copy, called again once the bug was planted in that copy. "
        "Culprit rank: the planted function's place in the answer's `culprits` (1 is first; one figure per bug). "
        "File / function in the text: whether the planted file's path and the function's qualified name appear "
        "anywhere in the text block. Answer bytes: structured content (compact JSON) plus the text. "
        + (
            "Every copy the server ran is a git repository whose HEAD is the clean project: the bug is an "
            "uncommitted change."
            if config.get("git")
            else "No copy is a git repository: nothing but the server's own runs says what changed."
        ),
        "",
        "## The bugs",
        "",
        "| case | project | file | function | planted | kind |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        for bug in row["bugs"]:
            lines.append(
                f"| {row['key']} | {row['project']} | `{bug['file']}` | `{bug['function']}` | {bug['what']} | "
                f"{bug['kind']} |"
            )
    left_out = [row for row in rows if row["left_out"]]
    if left_out:
        lines.append("")
        for row in left_out:
            files = ", ".join(f"`{name}`" for name in row["left_out"])
            lines.append(
                f"Left out of {row['project']} (in every copy, clean or planted): {files}: {row['why_left_out']}."
            )
    lines += ["", "## Planted bug, no previous run", "", *scenario_table(rows, "planted")]
    lines += ["", "## Planted bug after an edit (the server ran the clean copy first)", ""]
    lines += scenario_table(rows, "after_edit")
    lines += [
        "",
        "## Clean suite: passing runs unchanged",
        "",
        "| case | tests | exit code | answer bytes | wall s | raw pytest s (clean) | raw pytest says | load |",
        "|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for row in rows:
        clean = row["clean"]
        lines.append(
            f"| {row['key']} | {clean['tests']:,} | {clean['exit_code']} | {clean['bytes']:,} | "
            f"{clean['seconds']:.2f} | {row['raw_clean']['seconds']:.2f} | {row['raw_clean']['summary']} | "
            f"{row.get('load', '—')} |"
        )
    lines += ["", "## Against the goals", "", *goals(rows), ""]
    culprits = [(row["key"], row["planted"]["culprits"]) for row in rows if row["planted"]["culprits"]]
    if culprits:
        lines += ["## The culprits named (no previous run)", ""]
        for key, named in culprits:
            lines.append(
                f"- {key}: " + "; ".join(f"`{c.get('file')}::{c.get('function')}` ({c.get('score')})" for c in named)
            )
        lines.append("")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", help=f"comma-separated, of: {', '.join(case.key for case in CASES)}")
    add_batch_flags(parser)
    parser.add_argument("--out", default="causes", help="results/NAME.md and NAME.json (default causes)")
    parser.add_argument("--at", metavar="REV", help="run the server as it was at commit REV (bench/baseline.py)")
    parser.add_argument("--git", action="store_true", help="each copy a git repository at the clean project")
    parser.add_argument(
        "--python", metavar="VERSION", help="build the suites' venvs from pyenv's VERSION (3.12), not the bench's"
    )
    parser.add_argument(
        "--dump", metavar="DIR", type=Path, help="also write each answer to DIR (CASE-SCENARIO.txt and .json)"
    )
    return parser.parse_args(argv)


ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def batch_flag(number: int) -> str:
    """`--held-out` for the first held-out batch, `--held-out-N` for the Nth."""
    return "--held-out" if number == 1 else f"--held-out-{number}"


def add_batch_flags(parser: argparse.ArgumentParser) -> None:
    """A flag for each of planted.py's held-out batches, which picks it instead of the bench's own cases."""
    for number, cases in enumerate(HELD_OUT_BATCHES, 1):
        names = ", ".join(case.key for case in cases)
        parser.add_argument(
            batch_flag(number),
            action="store_true",
            help=f"the {ORDINALS[number - 1]} held-out batch instead ({names}): not what the ranking was tuned on",
        )


def batch(args: argparse.Namespace) -> tuple[Case, ...]:
    """The cases the flags ask for: a held-out batch (the latest asked for), or the bench's own."""
    for number in range(len(HELD_OUT_BATCHES), 0, -1):
        if getattr(args, batch_flag(number).removeprefix("--").replace("-", "_")):
            return HELD_OUT_BATCHES[number - 1]
    return CASES


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cases = batch(args)
    wanted = args.cases.split(",") if args.cases else [case.key for case in cases]
    unknown = set(wanted) - {case.key for case in cases}
    if unknown:
        print(f"no such case: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    at = baseline.build(args.at) if args.at else None
    python = interpreter(args.python)
    server = Server(bench_env(), at[1] if at else None, args.git)
    rows = measure([case for case in cases if case.key in wanted], server, python, args.dump)
    suites_python = subprocess.run(
        [str(python.python), "-c", "import platform; print(platform.python_version())"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    config = {
        "command": "bench/causes.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "revision": at[0] if at else revision(),
        "git": args.git,
        "python_version": platform.python_version(),  # the bench's and the server's
        "suites_python": suites_python,  # what the tests ran on, and so how the spectrum was recorded
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "minutes": round((time.perf_counter() - started) / 60, 1),
    }
    config["command"] = re.sub(r" --dump \S+", "", config["command"]).strip()  # where answers were dumped is no result
    RESULTS.mkdir(parents=True, exist_ok=True)
    markdown = render(rows, config)
    for text in (markdown, json.dumps(rows)):  # results are committed: nothing of this machine's layout in them
        leaked = [place for place in (str(REPO), tempfile.gettempdir() + "/", str(Path.home())) if place in text]
        if leaked:
            raise RuntimeError(f"the results name this machine's paths: {leaked}")
    (RESULTS / f"{args.out}.md").write_text(markdown, encoding="utf-8")
    (RESULTS / f"{args.out}.json").write_text(json.dumps({"config": config, "cases": rows}, indent=2) + "\n")
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
