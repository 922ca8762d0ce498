from __future__ import annotations

import pytest

from pytest_mcp.domain import text
from pytest_mcp.domain.text import keep_tail, outside_project, project_frames_only

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


HUNG_DUMP = """\
Current thread 0x00007f0000000001 (most recent call first):
  File "/project/tests/test_d.py", line 9 in test_hangs
  File "/venv/lib/python3.11/site-packages/_pytest/python.py", line 159 in pytest_pyfunc_call
  File "/venv/lib/python3.11/site-packages/pluggy/_callers.py", line 103 in _multicall
  File "/project/tests/conftest.py", line 4 in wrapper
  File "/usr/lib/python3.11/runpy.py", line 88 in _run_code
  File "<frozen runpy>", line 226 in run_module
  File "<string>", line 90 in <module>
"""

LIBRARY_DUMP = """\
Current thread 0x00007f0000000001 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 331 in wait
  File "/project/tests/test_d.py", line 12 in test_waits
  File "/venv/lib/python3.11/site-packages/_pytest/python.py", line 159 in pytest_pyfunc_call
"""


def test_a_dump_keeps_the_projects_frames_and_says_how_many_it_dropped() -> None:
    kept = project_frames_only(HUNG_DUMP)

    assert kept == (
        "Current thread 0x00007f0000000001 (most recent call first):\n"
        '  File "/project/tests/test_d.py", line 9 in test_hangs\n'
        '  File "/project/tests/conftest.py", line 4 in wrapper\n'
        "[... 5 frame(s) outside the project hidden by pytest-mcp ...]\n"
    )


def test_a_dump_keeps_its_innermost_frame_even_in_the_standard_library() -> None:
    kept = project_frames_only(LIBRARY_DUMP)

    assert '"/usr/lib/python3.11/threading.py", line 331 in wait' in kept
    assert '"/project/tests/test_d.py", line 12 in test_waits' in kept
    assert "site-packages" not in kept
    assert kept.endswith("[... 1 frame(s) outside the project hidden by pytest-mcp ...]\n")


def test_text_without_a_dump_is_left_alone() -> None:
    text = 'File "/venv/lib/python3.11/site-packages/x.py", line 1 in f\n'
    assert project_frames_only(text) == text


@pytest.mark.parametrize(
    ("path", "outside"),
    [
        ("/project/tests/test_d.py", False),
        ("/home/me/python3/test_x.py", False),
        ("/venv/lib/python3.11/site-packages/_pytest/main.py", True),
        ("/usr/lib/python3/dist-packages/x.py", True),
        ("/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py", True),
        ("/opt/pypy/lib/pypy3.10/threading.py", True),
        ("<frozen runpy>", True),
        ("<string>", True),
    ],
)
def test_which_frames_are_the_projects(path: str, outside: bool) -> None:
    assert outside_project(path) is outside


FORGING = "x\nPASSED all ok\x1b[31m\u202eevil\u2066\x85\u2028\r\x00\x7f\tend"


def test_one_line_replaces_line_breaks_controls_and_bidi_controls_and_keeps_tabs() -> None:
    assert text.one_line(FORGING) == "x\ufffdPASSED all ok\ufffd[31m\ufffdevil\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\tend"
    assert text.one_line("plain text, é, 日本") == "plain text, é, 日本"


def test_printable_keeps_newlines_and_replaces_the_rest() -> None:
    assert text.printable(FORGING).split("\n") == ["x", "PASSED all ok\ufffd[31m\ufffdevil" + "\ufffd" * 6 + "\tend"]


def test_quoted_items_cannot_pass_for_the_separator_or_the_end_of_a_list() -> None:
    assert text.quoted('sleep"; and 99 more') == '"sleep\\"; and 99 more"'
    assert text.quoted("a\\") == '"a\\\\"'


def test_an_execution_failure_quotes_pytests_output_without_controls() -> None:
    from pytest_mcp.domain.errors import ExecutionFailed, FailureDetails

    failed = ExecutionFailed("usage_error", "ERROR: \x1b[2Jbad\u202e", FailureDetails(None, (), 0.0))
    assert failed.message == str(failed) == "ERROR: \ufffd[2Jbad\ufffd"
