from __future__ import annotations

import pytest

from pytest_mcp.domain.text import keep_tail

LINES = "\n".join(f"line {i:03d}" for i in range(100))  # 100 lines of 8 characters


def test_a_text_that_fits_is_kept_whole() -> None:
    assert keep_tail(LINES, len(LINES)) == LINES
    assert keep_tail(LINES, len(LINES), from_line_with="line 050") == LINES


def test_a_cut_starts_at_a_line_boundary_and_counts_what_it_cut() -> None:
    kept = keep_tail(LINES, 40)

    assert kept == "[... 864 characters cut ...]\nline 096\nline 097\nline 098\nline 099"
    assert len(LINES) - 864 == len("line 096\nline 097\nline 098\nline 099")


def test_a_cut_starts_at_the_last_line_holding_the_marker_when_the_rest_fits() -> None:
    kept = keep_tail(LINES, 100, from_line_with="line 09")

    assert kept.splitlines() == ["[... 891 characters cut ...]", "line 099"]


@pytest.mark.parametrize("marker", ["line 080", "nowhere"])
def test_a_marker_too_far_back_or_absent_gives_the_plain_tail(marker: str) -> None:
    assert keep_tail(LINES, 40, from_line_with=marker) == keep_tail(LINES, 40)
