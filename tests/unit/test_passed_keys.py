"""The tests that passed, as the run records them and the history keeps them (ADR 0020: suspect flaky)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
from pytest_mcp.adapters.pytest_subprocess.spectrum import read_run_spectrum
from pytest_mcp.domain.history import passed_key


@pytest.mark.parametrize("node_id", ["t.py::test_a", "tests/test_ü.py::test[naïve-\udcff]", ""])
def test_the_plugin_keys_a_passing_test_as_the_history_does(node_id: str) -> None:
    # The plugin runs in the project's interpreter and cannot import the domain: one rule, pinned equal.
    assert protocol.passed_key(node_id) == passed_key(node_id)


def test_the_passed_keys_of_every_process_are_read_and_anything_else_the_tests_wrote_is_dropped(
    tmp_path: Path,
) -> None:
    good = [passed_key("t.py::test_a"), passed_key("t.py::test_b")]
    events = [
        {protocol.EVENT: protocol.SPECTRUM_PASSED, "keys": [good[0], "../../etc", 7, "A" * 16, good[0][:15]]},
        {protocol.EVENT: protocol.SPECTRUM_END, "recorder": ""},
    ]
    (tmp_path / f"{protocol.SPECTRUM_RUN_PREFIX}gw0.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (tmp_path / f"{protocol.SPECTRUM_RUN_PREFIX}gw1.jsonl").write_text(
        json.dumps({protocol.EVENT: protocol.SPECTRUM_PASSED, "keys": [good[1]]}) + "\n"
    )

    recording = read_run_spectrum(tmp_path, 1_000_000)

    assert recording.spectrum is None, "before 3.12 nothing else is recorded"
    assert recording.passed == tuple(good)
