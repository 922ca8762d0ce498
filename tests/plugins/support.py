"""The plugin matrix's helpers: its target environments, projects written to tmp, what plain pytest
says about a project, and what the real server answers about the same project.

The environments are pinned in environments.toml, one venv per pytest major with every plugin
installed (and so autoloaded), under `.cache/plugins/<name>/` with a stamp holding the specs they
were built from; a rerun reuses them, a change of pins rebuilds them.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import tomllib
import uuid
from collections.abc import Awaitable, Callable, Hashable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import anyio
import pytest

from tests.answers import signature_row
from tests.e2e.e2e_support import Server, structured, text_of

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "plugins"
PINS = Path(__file__).with_name("environments.toml")
ORACLE_PLUGIN = REPO / "tests" / "integration" / "oracle_plugin"
CALL_TIMEOUT = 120  # seconds, per execute_tests call and per plain pytest run

# Both sides of every comparison run with pytest-randomly on, but seeded, so that they run the
# tests in the same order; a case that tests randomly itself sets its own seed instead.
SEEDED = "--randomly-seed=1"


# --- environments ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Environment:
    """One target venv of the matrix: a pytest and every plugin, on the server's own Python."""

    name: str
    packages: tuple[str, ...]

    @property
    def home(self) -> Path:
        return CACHE / self.name

    @property
    def python(self) -> Path:
        return self.home / "bin" / "python"

    @property
    def pytest_version(self) -> str:
        return next(spec.split("==")[1] for spec in self.packages if spec.startswith("pytest=="))

    @property
    def pytest_major(self) -> int:
        return int(self.pytest_version.split(".")[0])

    @property
    def stamp(self) -> dict[str, Any]:
        return {"python": platform.python_version(), "packages": list(self.packages)}


def environments() -> dict[str, Environment]:
    pins = tomllib.loads(PINS.read_text(encoding="utf-8"))
    common = tuple(pins["common"]["packages"])
    return {name: Environment(name, (*table["packages"], *common)) for name, table in pins["environments"].items()}


def target(name: str) -> Environment:
    """A target venv of environments.toml's `[targets]` (not part of the matrix), built if missing or stale."""
    table = tomllib.loads(PINS.read_text(encoding="utf-8"))["targets"][name]
    env = Environment(name, tuple(table["packages"]))
    try:
        build(env)
    except BuildFailed as exc:
        pytest.fail(str(exc), pytrace=False)
    return env


class BuildFailed(Exception):
    """pip could not build an environment; the message is pip's own output."""


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path`, so that xdist workers wanting one venv build it once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ready(*names: str) -> dict[str, Environment]:
    """The named environments (all by default), built in parallel where missing or stale; a test
    that needs one fails with pip's output when it cannot be built."""
    known = environments()
    wanted = [known[name] for name in names or known]
    try:
        with ThreadPoolExecutor(max_workers=len(wanted)) as pool:
            list(pool.map(build, wanted))
    except BuildFailed as exc:
        pytest.fail(str(exc), pytrace=False)
    return {env.name: env for env in wanted}


def build(env: Environment) -> Path:
    """The venv's interpreter: reused when its stamp names exactly these pins, else built anew."""
    stamp = env.home / "stamp.json"
    with _locked(CACHE / f"{env.name}.lock"):
        if env.python.exists() and stamp.exists() and json.loads(stamp.read_text()) == env.stamp:
            if not (env.home / WARMED).exists():  # built before the warm-up existed
                warm(env)
            return env.python
        shutil.rmtree(env.home, ignore_errors=True)
        # `python -m venv` from inside our own venv makes a venv of the base interpreter.
        steps = (
            [sys.executable, "-m", "venv", str(env.home)],
            [str(env.python), "-m", "pip", "install", "--disable-pip-version-check", "--quiet", *env.packages],
        )
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, timeout=900)
            if done.returncode != 0:
                raise BuildFailed(f"{env.name}: {' '.join(step)} failed:\n{done.stdout}\n{done.stderr}")
        stamp.write_text(json.dumps(env.stamp, indent=1))
        warm(env)
        return env.python


WARMED = "warmed"
_WARM_TEST = """
import pytest


def test_warm():
    pass
"""


def warm(env: Environment) -> None:
    """Fill the venv's cache of assertion-rewritten plugin modules, once, where the tests cannot.

    pytest rewrites the asserts of every module of each distribution that declares a pytest11 plugin
    (the whole of hypothesis, anyio, pytest-bdd, xdist, testmon...) and caches the rewritten code in
    its `__pycache__` beside the source, but never under PYTHONDONTWRITEBYTECODE, which our own
    environment sets: then every start of the venv's pytest rewrote them all again, 4.5 s of CPU
    against 2.0 s with the cache, measured on the pytest 9 environment. A cached rewrite is read
    whatever PYTHONDONTWRITEBYTECODE says, so the runs under test keep their own environment and
    only gain the cache; pytest checks each entry against its source's mtime and size.
    Two runs where the venv has xdist or pytest-cov: plain, and with workers and coverage, which
    import the modules those load.
    """
    with tempfile.TemporaryDirectory(prefix=f"warm-{env.name}-") as tmp:
        root = Project({"test_warm.py": _WARM_TEST}).write(Path(tmp) / "project")
        environ = run_env(env, seeded=False)
        environ.pop("PYTHONDONTWRITEBYTECODE", None)
        installed = {spec.split("==")[0] for spec in env.packages}
        parallel = [
            *(["-n", "2"] if "pytest-xdist" in installed else []),
            *(["--cov"] if "pytest-cov" in installed else []),
        ]
        for args in ([], parallel) if parallel else ([],):
            done = subprocess.run(
                [str(env.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                cwd=root, env=environ, capture_output=True, text=True, timeout=CALL_TIMEOUT,
            )  # fmt: skip
            if done.returncode != 0:
                raise BuildFailed(f"{env.name}: warming pytest's cache failed:\n{done.stdout}\n{done.stderr}")
    (env.home / WARMED).write_text("pytest's rewritten plugin modules are cached\n")


# --- projects -------------------------------------------------------------------------------

BASE_INI = "asyncio_default_fixture_loop_scope = function\n"
"""Every project sets this, so that pytest-asyncio (installed everywhere) does not warn at start-up."""


@dataclass(frozen=True)
class Project:
    """A minimal project: its files (dedented) and the lines of its pytest.ini after `[pytest]`."""

    files: Mapping[str, str]
    ini: str = ""

    def write(self, root: Path) -> Path:
        root.mkdir(parents=True, exist_ok=True)
        (root / "pytest.ini").write_text(f"[pytest]\n{BASE_INI}{textwrap.dedent(self.ini).lstrip()}", encoding="utf-8")
        for name, text in self.files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return root


def run_env(env: Environment, *, seeded: bool = True) -> dict[str, str]:
    """The environment both sides run with: ours, minus whatever would steer the inner pytest."""
    steering = ("PYTEST_", "COV_CORE_", "PY_COLORS", "FORCE_COLOR", "VIRTUAL_ENV")
    result = {key: value for key, value in os.environ.items() if not key.startswith(steering)}
    result.update(NO_COLOR="1", VIRTUAL_ENV=str(env.home))
    if seeded:
        result["PYTEST_ADDOPTS"] = SEEDED
    return result


# --- pytest's own words -----------------------------------------------------------------------

SUMMARY_KEYS = {
    "passed": "passed",
    "failed": "failed",
    "skipped": "skipped",
    "xfailed": "xfailed",
    "xpassed": "xpassed",
    "deselected": "deselected",
    "warning": "warnings",
    "warnings": "warnings",
    "error": "errors",
    "errors": "errors",
    "subtests passed": "subtests_passed",
    "subtests failed": "subtests_failed",
    "subtests skipped": "subtests_skipped",
    "rerun": "rerun",
}
"""pytest's word for each count of our `summary`; any other word belongs in `other_statuses`."""
COUNT_KEYS = tuple(dict.fromkeys(SUMMARY_KEYS.values()))

_FINAL_LINE = re.compile(r"^=*\s*(?P<words>no tests ran|\d+ [^,]+(?:, \d+ [^,]+)*) in [\d.]+s(?: \([^)]*\))?\s*=*$")
# `-rfE` lines: `FAILED id - message`, `ERROR id`, and a failed subtest's, which pytest 9 prints as
# `SUBFAILED[msg] (i=1) id - message` and pytest-subtests (pytest 8) as `[msg] (i=1) SUBFAIL id - message`.
_SHORT_SUMMARY = re.compile(r"^(?:(?P<label>FAILED|ERROR)|SUBFAILED.*?|.*? SUBFAIL) (?P<node_id>\S+)(?: - .*)?$")


def counts_of(words: list[str]) -> dict[str, Any]:
    """Counts keyed as our `summary` keys them, from pytest's parts: `["1 failed", "2 rerun"]`."""
    counts: dict[str, Any] = dict.fromkeys(COUNT_KEYS, 0)
    others: dict[str, int] = {}
    for part in words:
        if part == "no tests ran":
            continue
        number, word = part.split(" ", 1)
        if word in SUMMARY_KEYS:
            counts[SUMMARY_KEYS[word]] += int(number)
        else:
            others[word] = int(number)
    counts["other_statuses"] = others
    return counts


@dataclass(frozen=True)
class PytestSays:
    """What plain `python -m pytest` printed: its final line's parts, its `-rfE` lines, its exit code."""

    argv: tuple[str, ...]
    exit_code: int
    output: str
    words: list[str] | None
    failures: list[tuple[str, str]] = field(default_factory=list)  # sorted (FAILED|ERROR, node id); a subtest's: FAILED
    collected: dict[str, tuple[str, int]] = field(default_factory=dict)  # node id -> (file, 1-based line), in order

    @property
    def counts(self) -> dict[str, Any]:
        assert self.words is not None, f"pytest printed no summary line:\n{self.output[-4000:]}"
        return counts_of(self.words)


def pytest_says(
    env: Environment, root: Path, args: list[str], *, seeded: bool = True, quiet: bool = True, locations: bool = False
) -> PytestSays:
    """Plain pytest in `env` on `root`, quiet as the server's default (`-q`), with `-rfE` added.

    With `locations`, the integration suite's oracle plugin also records where pytest itself says
    each collected item is (`item.location`); it only writes that down when collection finishes.
    """
    environ = run_env(env, seeded=seeded)
    plugin: list[str] = []
    dump = root.parent / f"items-{uuid.uuid4().hex[:8]}.json"
    if locations:
        plugin = ["-p", "pytest_mcp_oracle_plugin"]
        paths = [str(ORACLE_PLUGIN), *filter(None, [environ.get("PYTHONPATH")])]
        environ.update(ORACLE_PLUGIN_DUMP=str(dump), PYTHONPATH=os.pathsep.join(paths))
    argv = (str(env.python), "-m", "pytest", *plugin, *(["-q"] if quiet else []), "--color=no", "-rfE", *args)
    proc = subprocess.run(
        argv,
        cwd=root,
        env=environ,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=CALL_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    words = None
    for line in reversed(proc.stdout.splitlines()):
        match = _FINAL_LINE.match(line.strip())
        if match:
            words = match["words"].split(", ")
            break
    failures = sorted(
        (match["label"] or "FAILED", match["node_id"])
        for line in proc.stdout.splitlines()
        if (match := _SHORT_SUMMARY.match(line.rstrip()))
    )
    collected = {}
    if dump.exists():
        collected = {item["nodeid"]: (item["file"], item["line"] + 1) for item in json.loads(dump.read_text())}
    return PytestSays(argv, proc.returncode, proc.stdout + proc.stderr, words, failures, collected)


# --- the server's answer ----------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """One execute_tests answer of the real server: its structured content and its text block."""

    arguments: dict[str, Any]
    result: dict[str, Any]
    text: str

    @property
    def summary(self) -> dict[str, Any]:
        return dict(self.result["summary"])

    @property
    def counts(self) -> dict[str, Any]:
        summary = self.summary
        counts: dict[str, Any] = {key: summary.get(key, 0) for key in COUNT_KEYS}
        counts["other_statuses"] = dict(summary.get("other_statuses") or {})
        return counts

    @property
    def headline(self) -> str:
        return self.text.splitlines()[0] if self.text else ""

    @property
    def reports(self) -> list[dict[str, Any]]:
        """The reports the answer holds in full: `tests`, and each failure group's representative."""
        return [*self.result["tests"], *(group["representative"] for group in self.result["groups"])]

    @property
    def failures(self) -> list[tuple[str, str]]:
        """(FAILED|ERROR, node id) for every failed or error report and collection error, sorted.

        With `detail: "all"` `tests` holds every report; otherwise failures come by group (ADR 0014),
        and the matrix's projects fail too few tests for a group to compress its members, so each
        member is a node id, which this checks."""
        listed = [
            ("ERROR" if test["outcome"] == "error" else "FAILED", test["node_id"])
            for test in self.result["tests"]
            if test["outcome"] in ("failed", "error")
        ]
        if not listed:
            rows = [signature_row(group) for group in self.result["groups"]]  # (count, outcome, ..., members)
            assert not any(group.get("compressed") for group in self.result["groups"]), self.context()
            listed = [
                ("ERROR" if row[1] == "error" else "FAILED", member)
                for row in rows
                if row[1] in ("failed", "error")
                for member in row[-1]
            ]
        listed += [("ERROR", error["node_id"]) for error in self.result["collection_errors"]]
        return sorted(listed)

    def context(self) -> str:
        """Shown with a failed assertion: the call, the text block and the command."""
        return f"\narguments: {self.arguments}\ncommand: {self.result.get('command')}\n--- text ---\n{self.text[:3000]}"


def server_for(env: Environment, root: Path, logs: Path, *, seeded: bool = True) -> Server:
    """The installed server on `root`, with `env`'s interpreter, plugin autoload on, and no detaching."""
    return Server(
        root,
        logs / f"server-stderr-{uuid.uuid4().hex[:8]}.log",
        ["--python", str(env.python), "--detach-after", "0"],
        run_env(env, seeded=seeded),
    )


async def serve(
    env: Environment, root: Path, logs: Path, *calls: tuple[str, dict[str, Any]], seeded: bool = True
) -> list[Answer]:
    """Start the installed server on `root` with `env`'s interpreter and plugin autoload on, and
    make each (tool, arguments) call in turn: one server, one MCP client session."""
    server = server_for(env, root, logs, seeded=seeded)
    answers = []
    async with server.client() as client:
        for tool, arguments in calls:
            if tool == "execute_tests":
                arguments = {"timeout": CALL_TIMEOUT, **arguments}
            with anyio.fail_after(CALL_TIMEOUT + 30):
                result = await client.call_tool(tool, arguments)
            if result.is_error:
                raise AssertionError(
                    f"{tool} {arguments} answered a tool error: {text_of(result)}\n"
                    f"meta: {json.dumps(result.meta, indent=1)[:4000]}\nserver stderr:\n{server.stderr()[-3000:]}"
                )
            answers.append(Answer(arguments, structured(result), text_of(result)))
    return answers


async def execute(
    env: Environment, root: Path, logs: Path, *calls: dict[str, Any], seeded: bool = True
) -> list[Answer]:
    """`serve` for execute_tests calls only."""
    return await serve(env, root, logs, *(("execute_tests", arguments) for arguments in calls), seeded=seeded)


def assert_coverage_is_pytest_covs(answer: Answer, said: PytestSays) -> None:
    """Our coverage total is the TOTAL of pytest-cov's terminal report; none where it printed none
    (pytest-cov reports nothing when -x stops a run)."""
    total = re.search(r"^TOTAL\s+\d+\s+\d+\s+(\d+)%$", said.output, re.MULTILINE)
    coverage = answer.result.get("coverage")
    if total is None:
        assert coverage is None, f"pytest-cov reported nothing, we did: {coverage}\n{said.output[-3000:]}"
        return
    assert coverage is not None, answer.context()
    assert round(coverage["percent"]) == int(total[1]), f"pytest-cov: TOTAL {total[1]}%, ours: {coverage}"


class Ahead(Generic[K, T]):
    """A test module's observations, made ahead of the tests that read them, two at a time.

    One observation (plain pytest beside the server) keeps the cores busy only part of the time:
    processes start, the MCP client and server shake hands. Two at once keep both cores of a CI
    machine busy. Each test waits for its own observation, and fails only with its own error.
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="observe")
        self._futures: dict[K, Future[T]] = {}

    def get(self, key: K, make: Callable[[K], Callable[[], Awaitable[T]]], coming: Iterable[K] = ()) -> T:
        """Observation `key`, made by `make(key)()`; the observations `coming` are started as well."""
        for each in (key, *coming):
            if each not in self._futures:
                self._futures[each] = self._pool.submit(anyio.run, make(each))
        return self._futures[key].result()


def coming(request: pytest.FixtureRequest, key: Callable[[pytest.Item], K | None]) -> list[K]:
    """The observations the tests selected in this session (after -k, -m and node ids) will read,
    in their order: `key` names an item's, or None for an item that reads none. (Under xdist each
    worker collects every item; `--dist loadfile` runs all of a module's on one worker.)"""
    return list(dict.fromkeys(found for item in request.session.items if (found := key(item)) is not None))


def same_project_twice(project: Project, tmp_path: Path) -> tuple[Path, Path]:
    """The project written twice, for plain pytest and for the server: neither sees the other's
    files (.coverage, html reports, caches), and node ids, relative to each root, are the same."""
    return project.write(tmp_path / "pytest" / "project"), project.write(tmp_path / "mcp" / "project")


def headline_words(headline: str) -> list[str]:
    """The parts of our headline before ` in N.NNs`: `1 failed, 2 passed in 0.1s (exit code 1)`."""
    return headline.rsplit(" in ", 1)[0].split(", ") if " in " in headline else [headline]
