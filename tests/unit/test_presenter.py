from __future__ import annotations

import json

from pytest_mcp.adapters.mcp_presenter import McpPresenter, summary_line
from pytest_mcp.domain.models import ReportedTest, RunResult, Summary


def a_result() -> RunResult:
    traceback = "\n".join(f"frame {i}" for i in range(40)) + "\nE   assert 1 == 2\ntests/test_a.py:9: AssertionError"
    return RunResult(
        exit_code=1,
        summary=Summary(total=4, passed=2, failed=1, errors=1, skipped=1, deselected=3, duration=0.5),
        tests=(
            ReportedTest(
                node_id="tests/test_a.py::test_eq",
                outcome="failed",
                phase="call",
                location="tests/test_a.py:7",
                message="assert 1 == 2",
                traceback=traceback,
                stdout="debug line\n",
            ),
            ReportedTest(node_id="tests/test_a.py::test_td", outcome="error", phase="teardown", message="boom"),
            ReportedTest(node_id="tests/test_a.py::test_sk", outcome="skipped", phase="setup", message="Skipped: x"),
        ),
        command=("python", "-m", "pytest"),
    )


def test_the_summary_line_uses_pytests_order_and_words() -> None:
    assert summary_line(a_result().summary) == "1 failed, 2 passed, 1 skipped, 3 deselected, 1 error in 0.50s"
    assert summary_line(Summary(errors=2, duration=0.0)) == "2 errors in 0.00s"
    assert summary_line(Summary()) == "no tests ran in 0.00s"


def test_the_text_block_is_a_compact_reading_not_a_copy_of_the_json() -> None:
    result = McpPresenter().present_run(a_result())
    text = result.content[0].text  # type: ignore[union-attr]

    assert text.splitlines()[0] == "1 failed, 2 passed, 1 skipped, 3 deselected, 1 error in 0.50s (exit code 1)"
    assert "FAILED tests/test_a.py::test_eq (tests/test_a.py:7)" in text
    assert "ERROR tests/test_a.py::test_td [teardown]" in text
    assert "E   assert 1 == 2" in text
    assert "frame 0\n" not in text  # the traceback is trimmed to its last lines
    assert "captured stdout:" in text
    assert "debug line" in text
    assert "{" not in text
    assert len(text) < len(json.dumps(result.structured_content))


def test_structured_content_omits_empty_fields_but_keeps_every_test() -> None:
    structured = McpPresenter().present_run(a_result()).structured_content

    assert structured is not None
    assert [t["node_id"] for t in structured["tests"]] == [
        "tests/test_a.py::test_eq",
        "tests/test_a.py::test_td",
        "tests/test_a.py::test_sk",
    ]
    assert "stderr" not in structured["tests"][0]


def test_each_failing_subtest_says_which_subtest_it_is() -> None:
    def subtest(description: str) -> ReportedTest:
        return ReportedTest(
            node_id="tests/test_a.py::test_parity",
            outcome="failed",
            phase="call",
            message=f"subtest [parity] ({description}): assert 1 == 0",
            traceback="E   assert 1 == 0",
        )

    result = RunResult(
        exit_code=1,
        summary=Summary(total=1, failed=3, duration=0.1),
        tests=(subtest("i=1"), subtest("i=3")),
        command=("python",),
    )

    text = McpPresenter().present_run(result).content[0].text  # type: ignore[union-attr]

    assert "  subtest [parity] (i=1): assert 1 == 0" in text
    assert "  subtest [parity] (i=3): assert 1 == 0" in text


CHAINED = """def test_total():
>       assert checkout(["12.50", "3,20"]) == 15.7

tests/test_shop.py:12:

tests/shop.py:5: in checkout
    return sum(parse_price(p) for p in prices)

text = '3,20'

    def parse_price(text):
>       return round(float(text), 2)
E       ValueError: could not convert string to float: '3,20'

tests/shop.py:2: ValueError"""


def _failure_text(traceback: str) -> list[str]:
    result = RunResult(
        exit_code=1,
        summary=Summary(total=1, failed=1),
        tests=(
            ReportedTest(node_id="tests/test_shop.py::test_total", outcome="failed", phase="call", traceback=traceback),
        ),
        command=("python", "-m", "pytest"),
    )
    text = McpPresenter().present_run(result).content[0].text  # type: ignore[union-attr]
    return text.split("FAILED tests/test_shop.py::test_total\n", 1)[1].splitlines()


def test_a_failure_in_the_text_block_shows_its_evidence_not_its_whole_traceback() -> None:
    # The failing lines, the explanation, the frames passed through and the crash location; the
    # source around them and the locals are in structured content only.
    assert _failure_text(CHAINED) == [
        '  >       assert checkout(["12.50", "3,20"]) == 15.7',
        "  tests/test_shop.py:12:",
        "  tests/shop.py:5: in checkout",
        "  >       return round(float(text), 2)",
        "  E       ValueError: could not convert string to float: '3,20'",
        "  tests/shop.py:2: ValueError",
    ]


def test_a_traceback_without_pytests_markers_keeps_its_last_lines() -> None:
    plugin_report = "\n".join(f"plugin line {i}" for i in range(30))

    lines = _failure_text(plugin_report)

    assert lines[0] == "  [... 16 earlier lines ...]"
    assert lines[1:] == [f"  plugin line {i}" for i in range(16, 30)]
