"""affected=true against a real pytest-testmon (issue 26), in the plugin matrix's pinned venvs (pytest 8 and 9).

Each case writes a small project, runs it once to record testmon's data, makes one edit, and
compares the affected run with what it must be: the tests the edit touched, pytest's own counts,
and the failures a full run reports. The data lives under XDG_CACHE_HOME (a tmp directory here).

`Affected` holds the cases; test_affected_on_pytest8.py and test_affected_on_pytest9.py run them on
one environment each: two modules, so that `--dist loadfile` can give them to two workers (one module
of both was a quarter of an hour of one worker's time, and the longest of the suite).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from pytest_mcp.adapters.pytest_subprocess.testmon_data import DATA_FILE, data_directory
from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings
from tests.answers import complete, signature_row, tool_error
from tests.plugins.support import Environment, counts_of, headline_words, ready

PROJECT = {
    "pytest.ini": "[pytest]\nmarkers =\n    slow: a slow test\n",
    "calc.py": """
        RATE = 2
        FACTOR = 3

        def add(a, b):
            return a + b

        def mul(a, b):
            return a * b

        def scaled(a):
            return a * FACTOR
        """,
    "conftest.py": """
        import pytest

        @pytest.fixture
        def base():
            return 10
        """,
    "tests/test_add.py": """
        import pytest
        from calc import add

        def test_add_small():
            assert add(1, 2) == 3

        def test_add_negative():
            assert add(-1, 1) == 0

        @pytest.mark.slow
        def test_add_large():
            assert add(10**6, 1) == 10**6 + 1
        """,
    "tests/test_mul.py": """
        from calc import mul

        def test_mul_small():
            assert mul(2, 3) == 6

        def test_mul_zero():
            assert mul(0, 5) == 0
        """,
    "tests/test_base.py": """
        def test_base(base):
            assert base == 10
        """,
    "tests/test_rate.py": """
        import calc

        def test_rate():
            assert calc.RATE == 2

        def test_scaled():
            assert calc.scaled(2) == 6
        """,
}
TESTS = 8


def isolate(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    """The environment every affected run here has: its own cache directory, nothing steering pytest."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    for name in ("PYTEST_ADDOPTS", "TESTMON_DATAFILE", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        monkeypatch.delenv(name, raising=False)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def edit(root: Path, name: str, old: str, new: str) -> None:
    path = root / name
    text = path.read_text()
    assert old in text, f"{old!r} not in {name}"
    path.write_text(text.replace(old, new))
    # testmon tells a changed file by mtime first; two writes in one clock tick must still differ.
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


async def execute(root: Path, python: Path, arguments: dict[str, Any]) -> dict[str, Any]:
    container = create_container(Settings(root=root, python=python))
    async with Client(container.tool_server().server) as client:
        result = await client.call_tool("execute_tests", arguments)
    if result.is_error:
        seen = tool_error(result)
        return {"error": seen.message, "code": seen.code}
    assert result.structured_content is not None
    return complete(result.structured_content) | {"_text": result.content[0].text}  # type: ignore[union-attr]


def failures(answer: dict[str, Any]) -> list[str]:
    """The failed and error node ids: from `tests` with detail 'all', else from the failure groups'
    members (too few here for a group to compress them)."""
    listed = {test["node_id"] for test in answer["tests"] if test["outcome"] in ("failed", "error")}
    rows = [signature_row(group) for group in answer["groups"]]  # (count, outcome, ..., members)
    assert not any(group.get("compressed") for group in answer["groups"]), answer["_text"]
    return sorted(listed | {member for row in rows if row[1] in ("failed", "error") for member in row[-1]})


def ran(answer: dict[str, Any]) -> list[str]:
    return sorted(test["node_id"] for test in answer["tests"])


def pytests_line(answer: dict[str, Any]) -> dict[str, Any]:
    """The counts of pytest's own last line, read from the answer's output tail (detail='all')."""
    last = answer["text_output"].rstrip().splitlines()[-1]
    return counts_of(headline_words(f"{last} (exit code {answer['exit_code']})"))


def ours(answer: dict[str, Any]) -> dict[str, Any]:
    summary = answer["summary"]
    return {key: summary.get(key, 0) for key in counts_of([])}


# --- exact against a full run, and where testmon cannot see: the cases' edits ------------------

DATA_FILE_READ_AT_IMPORT = {
    "tests/test_data.py": "import pathlib\nLIMIT = int(pathlib.Path('limit.txt').read_text())\n\n"
    "def test_limit():\n    assert LIMIT == 5\n",
    "limit.txt": "5\n",
}


# The five kinds of edit, each breaking something: (files the project gains, the edit).
EDITS = {
    "body": ({}, ("calc.py", "return a * b", "return a * b + 1")),
    "signature": ({}, ("calc.py", "def add(a, b):", "def add(a, b, c):")),
    "module constant a function uses": ({}, ("calc.py", "FACTOR = 3", "FACTOR = 4")),
    "conftest fixture": ({}, ("conftest.py", "return 10", "return 11")),
    "data file read at import": (DATA_FILE_READ_AT_IMPORT, ("limit.txt", "5", "6")),
}


BLIND_SPOTS = {
    # what the test depends on, the project's files, and the edit testmon does not see
    "a subprocess": (
        {"tool.py": "print(5)\n", "tests/test_tool.py": "import subprocess, sys\n\n"
         "def test_tool():\n    out = subprocess.run([sys.executable, 'tool.py'], capture_output=True, text=True)\n"
         "    assert out.stdout.strip() == '5'\n"},
        ("tool.py", "print(5)", "print(6)"),
    ),
    # Found here (testmon 2.2.0): a module's top level runs when pytest imports it while
    # collecting, before testmon follows any test, so a test that only reads a module constant
    # does not depend on it in testmon's data (a function that uses it does: see EDITS).
    "a module constant only a test reads": ({}, ("calc.py", "RATE = 2", "RATE = 3")),
    "an environment variable": (
        {"tests/test_env.py": "import os\n\ndef test_env():\n    assert os.environ.get('P26_LIMIT', '5') == '5'\n"},
        None,
    ),
    # What a C extension built in place usually is: a file git ignores, which the record leaves out.
    "a file git ignores": (
        {".gitignore": "*.bin\n", "value.bin": "5\n", "tests/test_bin.py": "import pathlib\n\n"
         "def test_bin():\n    assert pathlib.Path('value.bin').read_text().strip() == '5'\n"},
        ("value.bin", "5", "6"),
    ),
}  # fmt: skip


async def after_the_first_run(
    request: pytest.FixtureRequest, env: Environment, root: Path, files: dict[str, str]
) -> Path:
    """The project after its first affected run: PROJECT with no `files` added is the class's shared
    first run, copied back (`recorded`); `root`, which has `files` written, makes its own."""
    if not files:
        return Path(request.getfixturevalue("recorded"))
    await execute(root, env.python, {"affected": True})
    return root


class Affected:
    """The cases, on the environment a subclass names."""

    environment: str

    @pytest.fixture
    def env(self) -> Environment:
        return ready(self.environment)[self.environment]

    @pytest.fixture
    def root(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        isolate(monkeypatch, tmp_path / "cache")
        project = tmp_path / "project"
        write(project, PROJECT)
        return project

    @pytest.fixture(scope="class")
    @classmethod
    def first_run(cls, tmp_path_factory: pytest.TempPathFactory) -> Path:
        """PROJECT after its first affected run, made once for the class: the project and its cache
        directory (testmon's data and our record of the files testmon cannot see) under `recorded/`."""
        env = ready(cls.environment)[cls.environment]
        place = tmp_path_factory.mktemp(f"affected-{cls.environment}")
        write(place / "project", PROJECT)
        with pytest.MonkeyPatch.context() as monkeypatch:
            isolate(monkeypatch, place / "cache")
            # A thread of its own: a parametrized test asks for it from inside its event loop.
            with ThreadPoolExecutor(max_workers=1) as thread:
                answer = thread.submit(anyio.run, execute, place / "project", env.python, {"affected": True}).result()
        assert (answer["exit_code"], answer["summary"]["total"]) == (0, TESTS), answer
        (place / "recorded").mkdir()
        for part in ("project", "cache"):
            (place / part).rename(place / "recorded" / part)
        return place

    @pytest.fixture
    def recorded(self, first_run: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        """The project as its first affected run left it, for a test whose own first run would be that
        same run: the files and the cache directory copied back, at the paths the run had, with their
        sizes and mtimes to the nanosecond (what testmon and our record of unseen files compare)."""
        for part in ("project", "cache"):
            shutil.rmtree(first_run / part, ignore_errors=True)
            shutil.copytree(first_run / "recorded" / part, first_run / part, symlinks=True)
        isolate(monkeypatch, first_run / "cache")
        return first_run / "project"

    async def test_the_first_run_runs_everything_and_says_so(self, env: Environment, root: Path) -> None:
        first = await execute(root, env.python, {"affected": True, "detail": "all"})

        assert first["exit_code"] == 0, first["_text"]
        assert first["summary"]["total"] == TESTS
        assert first["affected"] == {
            "run": TESTS, "not_run": 0, "ran_everything": "no_data", "changed_files": [], "changed_file_count": 0
        }  # fmt: skip
        assert first["_text"].splitlines()[1] == (
            f"first affected run, no data yet: ran everything ({TESTS} tests) and recorded what each test uses"
        )
        assert "--testmon-forceselect" in first["command"]
        # The data is outside the project, in its own cache directory; nothing new in the tree.
        assert (data_directory(root) / DATA_FILE).is_file()
        assert not (root / DATA_FILE).exists()
        assert str(data_directory(root)).startswith(os.environ["XDG_CACHE_HOME"])

    async def test_a_one_function_edit_runs_only_the_tests_that_use_it(self, env: Environment, recorded: Path) -> None:
        edit(recorded, "calc.py", "return a * b", "return a * b + 1")

        answer = await execute(recorded, env.python, {"affected": True, "detail": "all"})
        again = await execute(recorded, env.python, {"affected": True, "detail": "all"})
        full = await execute(recorded, env.python, {"detail": "all"})

        assert ran(answer) == ["tests/test_mul.py::test_mul_small", "tests/test_mul.py::test_mul_zero"]
        assert failures(answer) == failures(full) == ran(answer)
        assert (answer["affected"]["run"], answer["affected"]["not_run"]) == (2, TESTS - 2)
        assert answer["_text"].splitlines()[1] == (
            "2 affected tests run; 6 unaffected not run "
            "(they passed when they last ran; affected=false runs everything)"
        )
        assert ours(answer) == pytests_line(answer)
        # Failures are run again until they pass, as testmon never leaves out a failing test.
        assert ran(again) == ran(answer)

    async def test_nothing_changed_is_a_clean_run_of_nothing(self, env: Environment, recorded: Path) -> None:
        answer = await execute(recorded, env.python, {"affected": True, "detail": "all"})

        assert answer["exit_code"] == 0  # testmon's: nothing affected is not "no tests collected"
        assert (answer["summary"]["total"], answer["affected"]["run"], answer["affected"]["not_run"]) == (0, 0, TESTS)
        assert ours(answer) == pytests_line(answer)

    @pytest.mark.parametrize(
        ("arguments", "expected_run", "expected_failures"),
        [
            ({"node_ids": ["tests/test_mul.py::test_mul_small"]}, ["tests/test_mul.py::test_mul_small"], 1),
            ({"node_ids": ["tests/test_add.py"]}, [], 0),
            ({"keywords": "zero"}, ["tests/test_mul.py::test_mul_zero"], 1),
            ({"markers": "not slow"}, ["tests/test_mul.py::test_mul_small", "tests/test_mul.py::test_mul_zero"], 2),
            ({"maxfail": 1}, "one of the two", 1),
            ({"workers": 2}, ["tests/test_mul.py::test_mul_small", "tests/test_mul.py::test_mul_zero"], 2),
            ({"coverage": True}, ["tests/test_mul.py::test_mul_small", "tests/test_mul.py::test_mul_zero"], 2),
            ({"detail": "summary"}, [], 2),
        ],
        ids=["node_id", "file", "keywords", "markers", "maxfail", "workers", "coverage", "detail"],
    )
    async def test_affected_combines_with_the_other_fields(
        self, env: Environment, recorded: Path, arguments: dict[str, Any], expected_run: Any, expected_failures: int
    ) -> None:
        edit(recorded, "calc.py", "return a * b", "return a * b + 1")

        answer = await execute(recorded, env.python, {"affected": True, "detail": "all", **arguments})

        assert "error" not in answer, answer
        assert answer["summary"]["failed"] == expected_failures, answer["_text"]
        if expected_run == "one of the two":
            assert len(ran(answer)) == 1
        elif arguments.get("detail") != "summary":
            assert ran(answer) == expected_run
        if "text_output" in answer and arguments.get("detail") != "summary":
            assert ours(answer) == pytests_line(answer)
        if arguments.get("coverage"):
            assert answer["coverage"]["percent"] > 0

    async def test_affected_combines_with_last_failed(self, env: Environment, recorded: Path) -> None:
        edit(recorded, "calc.py", "return a * b", "return a * b + 1")
        await execute(recorded, env.python, {"affected": True})  # both mul tests fail
        edit(recorded, "calc.py", "return a * b + 1", "return a * b")
        edit(recorded, "calc.py", "return a + b", "return a + b + 0")

        answer = await execute(recorded, env.python, {"affected": True, "last_failed": True, "detail": "all"})

        # --lf narrows to last time's failures; testmon keeps them (they failed), and they pass now.
        assert ran(answer) == ["tests/test_mul.py::test_mul_small", "tests/test_mul.py::test_mul_zero"]
        assert answer["summary"]["passed"] == 2

    async def test_a_project_that_uses_testmon_keeps_its_own_data_file(self, env: Environment, root: Path) -> None:
        subprocess.run([str(env.python), "-m", "pytest", "-q", "--testmon", "-p", "no:randomly"], cwd=root, check=True,
                       capture_output=True, timeout=120)  # fmt: skip
        assert (root / DATA_FILE).is_file()
        edit(root, "calc.py", "return a + b", "return a + b + 0")

        first = await execute(root, env.python, {"affected": True, "detail": "all"})
        edit(root, "calc.py", "return a + b + 0", "return a + b")
        answer = await execute(root, env.python, {"affected": True, "detail": "all"})

        # Nothing recorded what testmon cannot see when the project's own run made the data, so the
        # first affected run starts it again, in the project's own file; the next selects from it.
        assert first["affected"]["ran_everything"] == "files_unrecorded", first["_text"]
        assert first["summary"]["total"] == TESTS
        assert answer["affected"]["run"] == 3, answer["_text"]
        assert (root / DATA_FILE).is_file()
        assert not data_directory(root).joinpath(DATA_FILE).exists()

    async def test_two_affected_runs_at_once_take_turns_and_leave_the_data_whole(
        self, env: Environment, recorded: Path
    ) -> None:
        edit(recorded, "calc.py", "return a * b", "return a * b + 1")
        answers: list[dict[str, Any]] = []

        async def one() -> None:
            answers.append(await execute(recorded, env.python, {"affected": True, "detail": "all"}))

        async with anyio.create_task_group() as group:
            group.start_soon(one)
            group.start_soon(one)

        assert [failures(answer) for answer in answers] == [["tests/test_mul.py::test_mul_small",
                                                             "tests/test_mul.py::test_mul_zero"]] * 2  # fmt: skip
        with sqlite3.connect(data_directory(recorded) / DATA_FILE) as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        edit(recorded, "calc.py", "return a * b + 1", "return a * b")
        after = await execute(recorded, env.python, {"affected": True, "detail": "all"})
        assert (ran(after), failures(after)) == (ran(answers[0]), [])

    async def test_testmon_turned_off_by_the_project_is_a_field_error(self, env: Environment, root: Path) -> None:
        (root / "pytest.ini").write_text(PROJECT["pytest.ini"] + "addopts = --no-testmon\n")

        answer = await execute(root, env.python, {"affected": True})

        assert answer["code"] == -32602, answer
        assert "affected: pytest-testmon does not select tests in this project's configuration" in answer["error"]
        assert "--no-testmon" in answer["error"]

    @pytest.mark.parametrize("kind", list(EDITS))
    async def test_an_affected_run_reports_the_failures_a_full_run_reports(
        self, request: pytest.FixtureRequest, env: Environment, root: Path, kind: str
    ) -> None:
        files, change = EDITS[kind]
        write(root, files)
        root = await after_the_first_run(request, env, root, files)
        edit(root, *change)

        affected = await execute(root, env.python, {"affected": True})
        full = await execute(root, env.python, {})

        assert failures(full), f"the {kind} edit must break something"
        assert failures(affected) == failures(full)
        if kind == "data file read at import":  # testmon cannot see it: everything ran, and the answer says why
            assert affected["affected"]["ran_everything"] == "files_changed", affected["_text"]
            assert affected["affected"]["changed_files"] == ["limit.txt"]
            assert affected["summary"]["total"] == full["summary"]["total"]
        else:
            assert affected["affected"]["run"] < full["summary"]["total"]

    async def test_a_changed_data_file_is_named_and_every_test_runs_until_each_has_run_once(
        self, env: Environment, root: Path
    ) -> None:
        write(root, DATA_FILE_READ_AT_IMPORT | {"docs/notes.md": "notes\n"})
        await execute(root, env.python, {"affected": True})
        edit(root, "limit.txt", "5", "6")
        edit(root, "docs/notes.md", "notes", "more notes")

        part = await execute(root, env.python, {"affected": True, "node_ids": ["tests/test_mul.py"], "detail": "all"})
        rest = await execute(root, env.python, {"affected": True, "detail": "all"})
        settled = await execute(root, env.python, {"affected": True, "detail": "all"})

        assert part["affected"]["ran_everything"] == "files_changed"
        assert part["affected"]["changed_files"] == ["docs/notes.md", "limit.txt"]
        assert part["_text"].splitlines()[1] == (
            "2 files pytest-testmon cannot see changed since the last affected run (docs/notes.md, limit.txt): "
            "ran everything (2 tests)"
        )
        # The data was discarded, not only passed over: the tests outside the first run's node ids had
        # no data left, so the next affected run ran them, found the failure, and ran it again after.
        assert "ran_everything" not in rest["affected"] or rest["affected"]["ran_everything"] is None
        assert rest["summary"]["total"] == TESTS + 1 - 2, rest["_text"]
        assert failures(rest) == ["tests/test_data.py::test_limit"]
        assert ran(settled) == ["tests/test_data.py::test_limit"]

    async def test_a_file_the_tests_write_into_the_tree_does_not_make_every_run_full(
        self, env: Environment, root: Path
    ) -> None:
        write(root, {"tests/test_writes.py": "import pathlib, time\n\n"
                     "def test_writes():\n    pathlib.Path('out.log').write_text(str(time.time_ns()))\n"})  # fmt: skip
        await execute(root, env.python, {"affected": True})

        again = await execute(root, env.python, {"affected": True, "detail": "all"})

        # The record is taken when a run ends, after what its tests wrote.
        assert again["affected"].get("ran_everything") is None, again["_text"]
        assert again["summary"]["total"] == 0

    async def test_hidden_files_caches_and_git_ignored_files_are_not_watched(
        self, env: Environment, root: Path
    ) -> None:
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run([*git, "init", "-q"], cwd=root, check=True)
        write(root, {".gitignore": "build/\n", "build/out.txt": "1\n", ".env": "A=1\n", "data.json": "{}\n"})
        await execute(root, env.python, {"affected": True})
        for name in ("build/out.txt", ".env"):
            edit(root, name, "1", "2")

        unwatched = await execute(root, env.python, {"affected": True})
        edit(root, "data.json", "{}", "[]")  # untracked, not ignored: watched
        watched = await execute(root, env.python, {"affected": True})

        assert unwatched["affected"].get("ran_everything") is None, unwatched["_text"]
        assert watched["affected"]["changed_files"] == ["data.json"], watched["_text"]

    @pytest.mark.parametrize("spot", list(BLIND_SPOTS))
    async def test_a_blind_spot_of_testmon_is_missed_by_affected_and_found_by_a_full_run(
        self, request: pytest.FixtureRequest, env: Environment, root: Path, spot: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        files, change = BLIND_SPOTS[spot]
        write(root, files)
        if ".gitignore" in files:
            subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        root = await after_the_first_run(request, env, root, files)
        if change is None:
            monkeypatch.setenv("P26_LIMIT", "6")
        else:
            edit(root, *change)

        affected = await execute(root, env.python, {"affected": True})
        full = await execute(root, env.python, {})

        # What the README says: testmon does not see this dependency, so the affected run misses the
        # failure, and says what it left out; the full run (affected=false) finds it.
        assert len(failures(full)) == 1, full["_text"]
        assert failures(affected) == []
        assert affected["affected"]["not_run"] >= 1
        assert "affected=false runs everything" in affected["_text"]
