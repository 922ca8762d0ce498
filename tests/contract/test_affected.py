"""affected=true on both sides (issue 26): the fake scripts the edit (`edit`), the real side makes it,
and pytest-testmon (environments.toml's pinned `testmon` target venv) selects. Both must answer alike."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.contract.conftest import Side, copy_of_the_project, open_side
from tests.plugins.support import target

pytestmark = pytest.mark.anyio

FILE = "tests/test_outcomes.py"
NO_FILES = {"changed_files": [], "changed_file_count": 0}


@pytest.fixture(params=["fake", "subprocess"])
async def testmon_side(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, anyio_backend: str
) -> AsyncIterator[Side]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TESTMON_DATAFILE", raising=False)
    python = target("testmon").python
    root = copy_of_the_project(tmp_path)
    async with open_side(
        request.param,
        monkeypatch,
        root=root,
        python=python,
        fake=lambda runner: runner.install("pytest-testmon==2.2.0"),
    ) as opened:
        yield opened


def edit_test_passes(side: Side) -> None:
    if side.fake is not None:
        side.fake.edit(f"{FILE}::test_passes")
        return
    path = side.root / FILE
    path.write_text(path.read_text().replace("def test_passes():\n", "def test_passes():\n    x = 1\n"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


def shown(answer: dict[str, Any]) -> tuple[Any, ...]:
    summary = answer["summary"]
    tests = sorted({test["node_id"] for test in answer["tests"]})
    counts = {key: summary[key] for key in ("total", "passed", "failed", "errors", "skipped", "deselected")}
    return answer["exit_code"], counts, answer["affected"], tests, answer["_text"].splitlines()[1]


async def test_affected_selects_alike_on_both_sides(testmon_side: Side) -> None:
    side = testmon_side
    arguments = {"node_ids": [FILE], "affected": True, "detail": "all"}

    first_answer = await side.result("execute_tests", arguments)
    first = shown(first_answer)
    unchanged = shown(await side.result("execute_tests", arguments))
    edit_test_passes(side)
    edited = shown(await side.result("execute_tests", arguments))

    assert first[2] == {"run": 9, "not_run": 0, "ran_everything": "no_data", **NO_FILES}, first
    assert first[4] == "first affected run, no data yet: ran everything (9 tests) and recorded what each test uses"
    # Nothing changed: last time's failures and errors run again, nothing else.
    failing = sorted({test["node_id"] for test in first_answer["tests"] if test["outcome"] in ("failed", "error")})
    assert len(failing) == 4, failing  # two failures, an error in setup, one in teardown (of a passing test)
    assert unchanged[3] == failing, unchanged
    assert unchanged[2] == {"run": 4, "not_run": 5, "ran_everything": None, **NO_FILES}, unchanged
    assert edited[3] == sorted([*failing, f"{FILE}::test_passes"]), edited
    assert (edited[2]["run"], edited[2]["not_run"]) == (5, 4)


def edit_a_data_file(side: Side) -> None:
    if side.fake is not None:
        side.fake.edit(files=["data/limits.json"])
        return
    (side.root / "data").mkdir()
    (side.root / "data" / "limits.json").write_text("{}\n")


async def test_a_changed_data_file_runs_everything_alike_on_both_sides(testmon_side: Side) -> None:
    side = testmon_side
    arguments = {"node_ids": [FILE], "affected": True, "detail": "all"}
    await side.result("execute_tests", arguments)
    edit_a_data_file(side)

    edited = shown(await side.result("execute_tests", arguments))
    after = shown(await side.result("execute_tests", arguments))

    changed = {"changed_files": ["data/limits.json"], "changed_file_count": 1}
    assert edited[2] == {"run": 9, "not_run": 0, "ran_everything": "files_changed", **changed}, edited
    assert edited[4] == (
        "1 file pytest-testmon cannot see changed since the last affected run (data/limits.json): "
        "ran everything (9 tests)"
    )
    assert (after[2]["run"], after[2]["ran_everything"]) == (4, None), after


async def test_check_environment_says_testmon_is_there_with_its_version(testmon_side: Side) -> None:
    environment = await testmon_side.result("check_environment", {})

    [testmon] = [plugin for plugin in environment["plugins"] if plugin["name"] == "pytest-testmon"]
    assert testmon["version"] == "2.2.0"
    assert testmon["changes"] == (
        "with affected=true, runs only the tests affected by changes since the last affected run"
    )
