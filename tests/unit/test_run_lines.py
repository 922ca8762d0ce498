"""A run's lines are read whole or not at all (ADR 0020): the ranking then reads functions, and nothing
else of the run's spectrum is lost to them.

Each process of a run writes its failing tests' lines and the passing tests' counts per line to a file of
its own beside its spectrum file; a mass failure of a large suite can write millions of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_mcp.adapters.pytest_subprocess import spectrum as reading
from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
from pytest_mcp.adapters.pytest_subprocess.spectrum import read_run_spectrum

FAILING = "tests/test_v.py::test_pre"


def write(path: Path, *events: dict[str, Any]) -> None:
    path.write_text("".join(json.dumps(event) + "\n" for event in events))


def process(directory: Path, worker: str, *, ended: bool = True, lines: list[list[int]] | None = None) -> None:
    """One process's files: `compare` entered by a failing test and two passing ones, and its lines."""
    e = protocol.EVENT
    write(
        directory / f"{protocol.SPECTRUM_RUN_PREFIX}{worker}.jsonl",
        {e: protocol.SPECTRUM_MODULES, "modules": ["tests/test_v.py"], "recorder": "sys.monitoring"},
        {e: protocol.SPECTRUM_FUNCTION, "id": 0, "file": "shop/v.py", "name": "compare", "first": 6, "last": 12},
        {e: protocol.SPECTRUM_TEST, "node_id": f"{FAILING}[{worker}]", "outcome": "failed", "functions": [0]},
        {e: protocol.SPECTRUM_PASSING, "total": 2, "counts": [[0, 2]]},
        {e: protocol.SPECTRUM_IMPORTED, "files": ["shop/v.py"]},
        {e: protocol.SPECTRUM_END, "recorder": "sys.monitoring"},
    )
    events = [
        {e: protocol.SPECTRUM_TEST, "node_id": f"{FAILING}[{worker}]", "lines": lines or [[0, 7], [0, 12]]},
        {e: protocol.SPECTRUM_PASSING, "lines": [[0, 7, 2], [0, 9, 2]]},
    ]
    write(directory / f"{protocol.SPECTRUM_LINES_PREFIX}{worker}.jsonl", *events, *([{e: "end"}] if ended else []))


def test_the_lines_of_every_process_are_read_with_its_functions(tmp_path: Path) -> None:
    process(tmp_path, "gw0")
    process(tmp_path, "gw1")

    spectrum = read_run_spectrum(tmp_path, 1 << 20).spectrum

    assert spectrum is not None
    assert [trace.lines for trace in spectrum.tests] == [((0, 7), (0, 12))] * 2
    (compare,) = spectrum.functions
    assert (compare.passing, compare.passing_lines) == (4, ((7, 4), (9, 4)))


@pytest.mark.parametrize("cut", ["a process's lines file has no end", "a process has no lines file"])
def test_lines_cut_short_in_one_process_are_read_in_none_and_the_functions_stay(tmp_path: Path, cut: str) -> None:
    process(tmp_path, "gw0")
    process(tmp_path, "gw1", ended=False)
    if cut == "a process has no lines file":
        process(tmp_path, "gw1")
        (tmp_path / f"{protocol.SPECTRUM_LINES_PREFIX}gw1.jsonl").unlink()

    recording = read_run_spectrum(tmp_path, 1 << 20)

    spectrum = recording.spectrum
    assert spectrum is not None
    assert [(trace.functions, trace.lines) for trace in spectrum.tests] == [((0,), ())] * 2
    assert (spectrum.functions[0].passing, spectrum.functions[0].passing_lines) == (4, ())
    assert recording.imported == ("shop/v.py",)


def test_more_lines_than_the_bound_are_read_in_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "MAX_LINES", 3)
    process(tmp_path, "main", lines=[[0, line] for line in range(1, 5)])

    spectrum = read_run_spectrum(tmp_path, 1 << 20).spectrum

    assert spectrum is not None
    assert [trace.lines for trace in spectrum.tests] == [()]


def test_lines_past_the_byte_budget_cost_the_spectrum_nothing(tmp_path: Path) -> None:
    """The lines file has a budget of its own: what the spectrum file says (which files the run imported,
    whose digests tell what changed) is read whole however many lines the failures ran."""
    process(tmp_path, "main", lines=[[0, line] for line in range(1, 20_000)])
    spectrum_bytes = (tmp_path / f"{protocol.SPECTRUM_RUN_PREFIX}main.jsonl").stat().st_size

    recording = read_run_spectrum(tmp_path, spectrum_bytes + 100)

    assert recording.spectrum is not None
    assert recording.imported == ("shop/v.py",)
    assert recording.spectrum.tests[0].lines == ()
