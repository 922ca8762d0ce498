"""The recorders count a function by its code object's identity, never by its equality (ADR 0020).

Python's code objects compare equal across files: the same function at the same line in two modules
(a `total` helper in each of 20 test-support files) is one dict key. Counted so, the two were one
function, reported under the first file imported, with every test of both (bench/causes.py's
gross_price case: `shop/basket.py::total` "run by 33 % of the passing tests", where one ran it).
"""

from __future__ import annotations

import types
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

PLUGIN = resources.files("pytest_mcp.adapters.pytest_subprocess").joinpath("_plugin")
SOURCE = "def total(quantity):\n    return quantity * 2\n"


@pytest.fixture
def spectrum(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.syspath_prepend(str(PLUGIN))  # as in a run: the protocol lies beside the plugin
    namespace: dict[str, Any] = {}
    exec(compile(PLUGIN.joinpath("_pytest_mcp_spectrum.py").read_text(), "_pytest_mcp_spectrum.py", "exec"), namespace)
    return namespace


def twins(root: Path) -> list[types.FunctionType]:
    """`total` defined alike in two files of the project: equal code objects, two functions."""
    found = []
    for name in ("a", "b"):
        path = root / "shop" / f"{name}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(SOURCE)
        module: dict[str, Any] = {}
        exec(compile(SOURCE, str(path), "exec"), module)
        found.append(module["total"])
    assert found[0].__code__ == found[1].__code__, "the premise: Python calls them equal"
    return found


def test_equal_functions_of_two_files_are_two_functions(spectrum: dict[str, Any], tmp_path: Path) -> None:
    events: list[dict[str, Any]] = []
    functions = spectrum["_Functions"](str(tmp_path), lambda kind, **fields: events.append(fields))
    first, second = twins(tmp_path)

    ids = [functions.id_of(first.__code__), functions.id_of(second.__code__)]

    assert ids == [0, 1]
    assert [event["file"] for event in events] == ["shop/a.py", "shop/b.py"]


def test_the_profile_recorder_records_both_of_two_equal_functions(spectrum: dict[str, Any], tmp_path: Path) -> None:
    # Before Python 3.12 (the second pass): a set of code objects kept only the first of the two.
    functions = spectrum["_Functions"](str(tmp_path), lambda kind, **fields: None)
    recorder = spectrum["_ProfileRecorder"](functions)
    first, second = twins(tmp_path)

    recorder.start()
    try:
        first(1)
        second(1)
    finally:
        recorded = recorder.stop()

    assert recorded == {functions.id_of(first.__code__), functions.id_of(second.__code__)}
    assert len(recorded) == 2
