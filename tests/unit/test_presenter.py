from __future__ import annotations

import json

from mcp_types import CallToolResult

from pytest_mcp.adapters.mcp.presenter import McpPresenter
from pytest_mcp.adapters.mcp.schemas import shipped_schemas
from pytest_mcp.domain.groups import failure_groups, skip_reasons
from pytest_mcp.domain.models import CollectedTest, DiscoveryResult, ReportedTest, RunResult, Summary


def grouped(result: RunResult, *, listed: bool = True) -> RunResult:
    """`result` as ExecuteTests answers it: its reports grouped, and listed too (detail='all') when `listed`."""
    update = {"groups": failure_groups(result.tests), "reasons": skip_reasons(result.tests)}
    return result.model_copy(update=update if listed else update | {"tests": ()})


def a_result() -> RunResult:
    traceback = "\n".join(f"frame {i}" for i in range(40)) + "\nE   assert 1 == 2\ntests/test_a.py:9: AssertionError"
    return grouped(
        RunResult(
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
                ReportedTest(
                    node_id="tests/test_a.py::test_sk", outcome="skipped", phase="setup", message="Skipped: x"
                ),
            ),
            command=("python", "-m", "pytest"),
        )
    )


def test_the_summary_line_uses_pytests_order_and_words() -> None:
    assert a_result().summary.line() == "1 failed, 2 passed, 1 skipped, 3 deselected, 1 error in 0.50s"
    assert Summary(errors=2, duration=0.0).line() == "2 errors in 0.00s"
    assert Summary().line() == "no tests ran in 0.00s"
    assert Summary(passed=3, warnings=1, errors=1).line() == "3 passed, 1 warning, 1 error in 0.00s"
    assert Summary(passed=3, warnings=2).line() == "3 passed, 2 warnings in 0.00s"


def test_the_text_block_is_a_compact_reading_not_a_copy_of_the_json() -> None:
    result = McpPresenter().present_run(a_result())
    text = result.content[0].text  # type: ignore[union-attr]

    assert text.splitlines()[0] == "1 failed, 2 passed, 1 skipped, 3 deselected, 1 error in 0.50s (exit code 1)"
    # A group of one is its test's report under the group's id.
    assert "] FAILED tests/test_a.py::test_eq (tests/test_a.py:7)\n" in text
    assert "] ERROR tests/test_a.py::test_td [teardown]\n" in text
    assert "1 skipped (1 reason):\n  1 x" in text
    assert "E   assert 1 == 2" in text
    assert "frame 0\n" not in text  # the traceback is trimmed to its last lines
    assert "captured stdout:" in text
    assert "debug line" in text
    assert "{" not in text
    assert len(text) < len(json.dumps(result.structured_content))


ZERO_COUNTS = dict.fromkeys(Summary.always_present, 0)


def test_structured_content_always_carries_every_count_and_both_lists_and_leaves_extras_out() -> None:
    """A program may read summary["failed"] or answer["collection_errors"] without a default."""
    structured = McpPresenter().present_run(a_result()).structured_content

    assert structured is not None
    assert [t["node_id"] for t in structured["tests"]] == [
        "tests/test_a.py::test_eq",
        "tests/test_a.py::test_td",
        "tests/test_a.py::test_sk",
    ]
    assert "stderr" not in structured["tests"][0]
    assert structured["summary"] == ZERO_COUNTS | {
        "total": 4, "passed": 2, "failed": 1, "skipped": 1, "errors": 1, "deselected": 3, "duration": 0.5,
    }  # fmt: skip
    assert structured["collection_errors"] == []
    assert "omitted_tests" not in structured


def test_structured_content_validates_against_the_output_schema_and_its_defaults_restore_every_field() -> None:
    import jsonschema

    published = shipped_schemas()["execute_tests"]["output"]
    for result in (a_result(), RunResult(exit_code=0, summary=Summary(total=9, passed=9, duration=0.1))):
        structured = McpPresenter().present_run(result).structured_content
        jsonschema.validate(structured, published)
        assert RunResult.model_validate(structured) == result


def test_an_all_pass_answer_is_its_exit_code_and_counts() -> None:
    result = RunResult(exit_code=0, summary=Summary(total=2000, passed=2000, duration=1.25))
    presented = McpPresenter().present_run(result)

    assert presented.structured_content == {
        "exit_code": 0,
        "summary": ZERO_COUNTS | {"total": 2000, "passed": 2000, "duration": 1.25},
        "groups": [],
        "reasons": [],
        "tests": [],
        "collection_errors": [],
    }
    assert presented.content[0].text == "2000 passed in 1.25s (exit code 0)"  # type: ignore[union-attr]
    assert _wire_bytes(presented) < 600


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
    result = grouped(result, listed=False)

    text = McpPresenter().present_run(result).content[0].text  # type: ignore[union-attr]

    # One group (the same assertion); its members say which subtests, its evidence is the first one's.
    assert "2 tests fail the same way: AssertionError" in text
    assert "members: tests/test_a.py::test_parity [parity] (i=1), tests/test_a.py::test_parity [parity] (i=3)" in text
    assert "    subtest [parity] (i=1): assert 1 == 0" in text


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
    text = McpPresenter().present_run(grouped(result, listed=False)).content[0].text  # type: ignore[union-attr]
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


# pytest's full diff, as it prints it with -vv or when it sees CI set: hundreds of `E` lines.
FULL_DIFF = "\n".join(
    [
        "def test_deep():",
        ">       assert nested == [[0] * 8] * 20",
        "E       assert [[0, 0, 0, 0, 0, 0, 0, 0], [1, 2, 3]] == [[0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0]]",
        "E         ",
        "E         At index 1 diff: [1, 2, 3] != [0, 0, 0]",
        "E         ",
        "E         Full diff: (-: missing in left side, +: extra in left side)",
        *(f"E         -         {i}," for i in range(150)),
        "",
        "tests/test_deep.py:9: AssertionError",
    ]
)


def test_a_full_diff_keeps_the_failing_line_and_the_head_of_its_explanation() -> None:
    assert _failure_text(FULL_DIFF) == [
        "  >       assert nested == [[0] * 8] * 20",
        "  E       assert [[0, 0, 0, 0, 0, 0, 0, 0], [1, 2, 3]] == [[0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0]]",
        "  E         ",
        "  E         At index 1 diff: [1, 2, 3] != [0, 0, 0]",
        "  E         ",
        "  E         Full diff: (-: missing in left side, +: extra in left side)",
        "  E   [... 150 more lines ...]",
        "  tests/test_deep.py:9: AssertionError",
    ]


def _discovery(count: int) -> DiscoveryResult:
    tests = tuple(
        CollectedTest(
            node_id=f"tests/test_part_{i // 100:04d}.py::test_case_{i}",
            file=f"tests/test_part_{i // 100:04d}.py",
            line=i % 100 + 3,
        )
        for i in range(count)
    )
    return DiscoveryResult(exit_code=0, total=count, tests=tests, command=("python", "-m", "pytest", "--collect-only"))


def _wire_bytes(result: CallToolResult) -> int:
    structured = json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)
    return len(structured.encode()) + len(result.content[0].text.encode())  # type: ignore[union-attr]


def test_a_large_collection_lists_the_first_tests_that_fit_and_counts_the_rest() -> None:
    presented = McpPresenter(max_response_bytes=8_000).present_discovery(_discovery(5_000))
    structured = presented.structured_content or {}
    listed = structured["tests"]

    assert _wire_bytes(presented) <= 8_000
    assert structured["total"] == 5_000
    assert structured["omitted_tests"] == 5_000 - len(listed)
    assert [t["node_id"] for t in listed] == [t.node_id for t in _discovery(len(listed)).tests]
    # As many as fit: the next test, in the JSON and in the text's list of ids, would not have.
    following = _discovery(len(listed) + 1).tests[-1]
    assert _wire_bytes(presented) + len(following.model_dump_json()) + 1 + len(following.node_id) + 1 > 8_000
    text = presented.content[0].text  # type: ignore[union-attr]
    assert f"[... {5_000 - len(listed)} more tests left out to keep this answer within its size budget;" in text


def test_describing_more_tests_than_the_discovery_capacity_changes_nothing() -> None:
    presenter = McpPresenter(max_response_bytes=8_000)
    capacity = presenter.discovery_capacity()
    everything = _discovery(5_000)
    described = everything.model_copy(update={"tests": everything.tests[:capacity], "omitted_tests": 5_000 - capacity})

    assert presenter.present_discovery(described) == presenter.present_discovery(everything)


def test_the_discovery_capacity_is_more_than_the_smallest_tests_that_fit() -> None:
    presenter = McpPresenter(max_response_bytes=8_000)
    capacity = presenter.discovery_capacity()
    smallest = DiscoveryResult(
        exit_code=0,
        total=capacity,
        tests=tuple(CollectedTest(node_id="", file="") for _ in range(capacity)),
        command=(),
    )

    listed = (presenter.present_discovery(smallest).structured_content or {}).get("tests", [])

    assert 0 < len(listed) < capacity


def test_a_collection_that_fits_is_listed_whole() -> None:
    presented = McpPresenter().present_discovery(_discovery(120))
    structured = presented.structured_content or {}

    assert len(structured["tests"]) == 120
    assert "omitted_tests" not in structured  # 0, its default
    assert "left out" not in presented.content[0].text  # type: ignore[union-attr]


def test_an_answer_lists_the_ten_most_common_skip_reasons_and_says_how_many_it_left_out() -> None:
    # tabulate skips 39 tests for 32 reasons, most of them each test's own: 4 KB of the answer.
    skips = [
        ReportedTest(node_id=f"t.py::test_{n}_{i}", outcome="skipped", phase="setup", message=f"Skipped: r{n}")
        for n in range(32)
        for i in range(2 if n < 7 else 1)
    ]
    result = grouped(RunResult(exit_code=0, summary=Summary(total=39, skipped=39), tests=tuple(skips)), listed=False)

    answer = McpPresenter().present_run(result)
    text = answer.content[0].text  # type: ignore[union-attr]

    assert answer.structured_content is not None
    assert [reason["reason"] for reason in answer.structured_content["reasons"]] == [f"r{n}" for n in range(10)]
    assert answer.structured_content["omitted_reasons"] == 22
    assert "\n17 skipped, by the 10 most common reasons:\n  2 r0\n" in text
    assert "  ... 22 rarer reasons left out: detail='all' lists every report" in text
    assert "  1 r10" not in text


def test_beside_failures_an_answer_lists_the_three_most_common_skip_reasons() -> None:
    # lark: a failing run's 94 skips for 21 reasons took 1.7 KB of the 7.3 KB answer naming the cause.
    skips = [
        ReportedTest(node_id=f"t.py::test_{n}_{i}", outcome="skipped", phase="setup", message=f"Skipped: r{n}")
        for n in range(8)
        for i in range(8 - n)
    ]
    failure = ReportedTest(node_id="t.py::test_broken", outcome="failed", phase="call", message="assert 1 == 2")
    summary = Summary(total=len(skips) + 1, skipped=len(skips), failed=1)
    result = grouped(RunResult(exit_code=1, summary=summary, tests=(*skips, failure)), listed=False)

    answer = McpPresenter().present_run(result)
    text = answer.content[0].text  # type: ignore[union-attr]

    assert answer.structured_content is not None
    assert [reason["reason"] for reason in answer.structured_content["reasons"]] == ["r0", "r1", "r2"]
    assert answer.structured_content["omitted_reasons"] == 5
    assert "\n21 skipped, by the 3 most common reasons:\n  8 r0\n  7 r1\n  6 r2\n" in text
    assert "  ... 5 rarer reasons left out: detail='all' lists every report" in text
