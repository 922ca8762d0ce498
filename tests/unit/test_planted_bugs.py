"""The bugs bench/causes.py plants for issue 38 are what they say: one exact change inside one named function."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from bench.causes import batch, parse_args
from bench.planted import (
    CASES,
    HELD_OUT,
    HELD_OUT_7,
    HELD_OUT_BATCHES,
    RAISES,
    WRONG_VALUE,
    Case,
    Plant,
    PlantError,
    RealSuite,
    import_from_source,
    plant,
    planted_source,
)

REAL = [case for case in CASES if case.suite is not None]
EVERY_REAL = [*REAL, *(case for cases in HELD_OUT_BATCHES for case in cases)]
GENERATED = [case for case in CASES if case.generate is not None]
CACHE = Path(__file__).resolve().parents[2] / ".cache"  # causes-suites, causes-suites-py3.12...
QUALNAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def _plants() -> list[pytest.param]:
    every = (*CASES, *(case for cases in HELD_OUT_BATCHES for case in cases))
    return [pytest.param(case, bug, id=f"{case.key}:{bug.function}") for case in every for bug in case.plants]


@pytest.mark.parametrize(("case", "bug"), _plants())
def test_every_bug_names_a_file_a_function_and_a_change_that_changes_something(case: Case, bug: Plant) -> None:
    assert not bug.file.startswith("/")
    assert bug.file.endswith(".py")
    assert QUALNAME.match(bug.function), bug.function
    assert bug.old
    assert bug.old != bug.new
    assert bug.kind in (WRONG_VALUE, RAISES)
    assert bug.what
    assert ("raise " in bug.new) == (bug.kind == RAISES), "a raising bug raises; a wrong value does not"


def test_the_cases_are_the_mix_the_issue_asks_for() -> None:
    kinds = [bug.kind for case in REAL for bug in case.plants]
    assert len(REAL) >= 6
    assert kinds.count(WRONG_VALUE) >= 4
    assert kinds.count(RAISES) >= 1
    assert len({case.key for case in CASES}) == len(CASES)
    assert [len(case.plants) for case in GENERATED] == [1, 3]  # one shared function; three bugs in one run


def test_the_held_out_suites_are_real_single_bug_suites_the_bench_was_not_built_on() -> None:
    assert len(HELD_OUT) == 6
    assert all(case.suite is not None and len(case.plants) == 1 for case in HELD_OUT)
    assert not {case.key for case in HELD_OUT} & {case.key for case in CASES}
    assert {bug.kind for case in HELD_OUT for bug in case.plants} == {WRONG_VALUE, RAISES}


@pytest.mark.parametrize("number", range(2, len(HELD_OUT_BATCHES) + 1))
def test_each_later_held_out_batch_is_six_more_real_single_bug_suites_seen_nowhere_else(number: int) -> None:
    cases = HELD_OUT_BATCHES[number - 1]
    earlier = (*CASES, *(case for batch in HELD_OUT_BATCHES[: number - 1] for case in batch))
    kinds = [bug.kind for case in cases for bug in case.plants]

    assert len(cases) == 6
    assert all(case.suite is not None and len(case.plants) == 1 for case in cases)
    assert len({case.key for case in cases}) == 6
    assert not {case.key for case in cases} & {case.key for case in earlier}
    assert set(kinds) == {WRONG_VALUE, RAISES}
    if number >= 4:  # from the fourth on, one of each of the six kinds, in the same order
        assert kinds == [WRONG_VALUE] * 3 + [RAISES] + [WRONG_VALUE] * 2


def test_the_batch_flags_choose_their_cases() -> None:
    def keys(cases: tuple[Case, ...]) -> list[str]:  # causes.py imports planted as a top-level module: not `is`
        return [case.key for case in cases]

    assert keys(batch(parse_args([]))) == keys(CASES)
    assert keys(batch(parse_args(["--held-out"]))) == keys(HELD_OUT)
    for number in range(2, len(HELD_OUT_BATCHES) + 1):
        assert keys(batch(parse_args([f"--held-out-{number}"]))) == keys(HELD_OUT_BATCHES[number - 1])
    assert keys(batch(parse_args(["--held-out-2", "--held-out-7"]))) == keys(HELD_OUT_7)


def test_a_src_layout_copy_imports_its_own_package_first(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("WHERE = 'copy'\n")
    (tmp_path / "conftest.py").write_text("ROOT = True\n")
    import_from_source(tmp_path, RealSuite("pkg", "1.0", (), source="src"))
    namespace: dict[str, object] = {"__file__": str(tmp_path / "conftest.py")}
    saved = list(sys.path)
    try:
        exec((tmp_path / "conftest.py").read_text(), namespace)  # the conftest this test wrote
        assert namespace["ROOT"] is True  # appended to, not replaced
        assert sys.path[0] == str(tmp_path / "src")
    finally:
        sys.path[:] = saved
    import_from_source(tmp_path / "src", RealSuite("flat", "1.0", ()))  # no source: nothing written
    assert not (tmp_path / "src" / "conftest.py").exists()


@pytest.mark.parametrize("case", GENERATED, ids=lambda case: case.key)
def test_a_generated_project_takes_each_of_its_bugs(tmp_path: Path, case: Case) -> None:
    assert case.generate is not None
    case.generate(tmp_path)
    for bug in case.plants:
        before = (tmp_path / bug.file).read_text()
        plant(tmp_path, bug)
        assert (tmp_path / bug.file).read_text() == before.replace(bug.old, bug.new)


SOURCE = "def price(net):\n    return net * 2\n\n\ndef other(net):\n    return net\n"


def test_a_bug_whose_text_is_missing_or_repeated_is_refused() -> None:
    missing = Plant("m.py", "price", "    return net * 3\n", "    return net\n", WRONG_VALUE, "-")
    repeated = Plant("m.py", "price", "net", "gross", WRONG_VALUE, "-")
    with pytest.raises(PlantError, match="0 times"):
        planted_source(SOURCE, missing)
    with pytest.raises(PlantError, match="4 times"):
        planted_source(SOURCE, repeated)


def test_a_bug_outside_the_function_it_names_is_refused() -> None:
    elsewhere = Plant("m.py", "other", "    return net * 2\n", "    return net * 3\n", WRONG_VALUE, "-")
    nowhere = Plant("m.py", "Cart.total", "    return net * 2\n", "    return net * 3\n", WRONG_VALUE, "-")
    with pytest.raises(PlantError, match="outside other"):
        planted_source(SOURCE, elsewhere)
    with pytest.raises(PlantError, match=r"no function Cart\.total"):
        planted_source(SOURCE, nowhere)
    inside = Plant("m.py", "price", "    return net * 2\n", "    return net * 3\n", WRONG_VALUE, "-")
    assert "net * 3" in planted_source(SOURCE, inside)


@pytest.mark.parametrize("case", EVERY_REAL, ids=lambda case: case.key)
def test_a_fetched_suite_takes_its_bug_where_the_case_says(case: Case) -> None:
    """Only where bench/causes.py has fetched the suite (it needs the network); reading files is fast."""
    assert case.suite is not None
    fetched = sorted(CACHE.glob(f"causes-suites*/{case.suite.name}-{case.suite.version}/ready.json"))
    if not fetched:
        pytest.skip(f"{case.suite.label} is not fetched (bench/causes.py fetches it)")
    ready = fetched[0]
    root = ready.parent / json.loads(ready.read_text())["root"]
    for bug in case.plants:
        assert bug.new in planted_source((root / bug.file).read_text(encoding="utf-8"), bug)
