"""Token budget, pinned: the all-pass answer has a constant size, a failure has a ceiling, the answer a cap.

Sizes are bytes of the whole answer, structured content (JSON) plus the text block, measured
through the production container and the real subprocess runner.

The target is json_report_python (tests/integration/conftest.py): pytest and pytest-json-report, as
in the dev venv, without the dev venv's hypothesis, anyio, trio and xdist, whose pytest11 entry
points every start and every one of a generated suite's thousands of tests paid for. The answers are
the same bytes on either (every case of bench/response_sizes.py compared, bench/results/suite-time.md).
"""

from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bench.response_sizes import CASES, answer, write
from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings

pytestmark = pytest.mark.anyio

# Every count and both lists are always there for programs (issue 17); even so, a clean answer
# stays under 600 bytes in all, whatever the suite size.
ALL_PASS_CEILING = 600
FAILURE_CEILING = 8 * 1024
# What a failing answer adds around its failure entries: the command, the output tail, the counts.
ANSWER_OVERHEAD = 1024

# Some tests read the same answer (the same suite with the same arguments) for different pins: each
# such suite of thousands of tests is run once per module, not once per test. Each test gets its own
# copy of the structured content.
_SHARED: dict[str, tuple[Path, tuple[int, dict[str, Any], str]]] = {}


@pytest.fixture(scope="module")
def shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("shared-answers")


@pytest.fixture(scope="module")
def target(json_report_python: Path) -> Path:
    """The interpreter every run of this module starts pytest with."""
    return json_report_python


async def shared_answer(
    directory: Path, files: dict[str, str], python: Path
) -> tuple[Path, tuple[int, dict[str, Any], str]]:
    """(the suite's root, its answer to execute_tests with no arguments), run once for the module."""
    key = json.dumps([files, str(python)], sort_keys=True)
    if key not in _SHARED:
        root = write(directory / f"suite-{len(_SHARED)}", files)
        _SHARED[key] = (root, await answer(root, {}, python=python))
    root, (size, structured, text) = _SHARED[key]
    return root, (size, copy.deepcopy(structured), text)


def passing_suite(count: int) -> dict[str, str]:
    return {
        "test_many.py": (
            f"import pytest\n\n@pytest.mark.parametrize('i', range({count}))\ndef test_passes(i):\n    assert i >= 0\n"
        )
    }


async def test_an_all_pass_answer_has_the_same_size_whatever_the_suite_size(tmp_path: Path, target: Path) -> None:
    small, _, _ = await answer(write(tmp_path / "small", passing_suite(10)), {}, python=target)
    large, structured, _ = await answer(write(tmp_path / "large", passing_suite(3000)), {}, python=target)

    assert structured["summary"]["passed"] == 3000
    assert large <= ALL_PASS_CEILING
    # Only digits differ: the counts (10 vs 3000) and the durations.
    assert abs(large - small) <= 24, (small, large)


async def test_a_huge_assertion_message_costs_a_few_kilobytes_and_says_how_much_was_cut(
    tmp_path: Path, target: Path
) -> None:
    root = write(
        tmp_path / "huge",
        {"test_huge.py": "def test_huge():\n    assert 'x' * 5_000_000 == 'y' * 5_000_000, 'z' * 5_000_000\n"},
    )

    size, structured, text = await answer(root, {"verbosity": 2}, python=target)

    (group,) = structured["groups"]
    failure = group["representative"]
    entry = len(json.dumps(failure).encode())
    assert entry <= FAILURE_CEILING, entry
    assert "characters cut by pytest-mcp" in failure["message"] + failure["traceback"]
    assert size <= FAILURE_CEILING + ANSWER_OVERHEAD + len(text.encode())


async def test_the_traceback_keeps_project_frames_and_the_assertion_not_library_frames(
    tmp_path: Path, target: Path
) -> None:
    root = write(
        tmp_path / "lib",
        {
            "test_lib.py": (
                "import json\n\ndef parse(text):\n    return json.loads(text)\n\ndef test_bad():\n    parse('{')\n"
            )
        },
    )

    # The whole report; a group shows its evidence lines.
    _, structured, _ = await answer(root, {"detail": "all"}, python=target)

    (report,) = [test for test in structured["tests"] if test["outcome"] == "failed"]
    traceback = report["traceback"]
    assert "parse('{')" in traceback
    assert "json.loads(text)" in traceback
    assert "frame(s) outside the project hidden by pytest-mcp" in traceback
    assert "json/decoder.py" not in traceback.split("hidden by pytest-mcp")[-1].split("\n\n")[0]


async def test_the_whole_answer_is_capped_and_says_how_many_reports_were_left_out(tmp_path: Path, target: Path) -> None:
    suite = (
        "import pytest\n\n"
        "@pytest.mark.parametrize('i', range(300))\n"
        "def test_fails(i):\n    assert i == -1, 'failure number %d with some explanation' % i\n\n"
        "def test_passes():\n    pass\n"
    )
    root = write(tmp_path / "many", {"test_many.py": suite})

    size, structured, text = await answer(root, {"detail": "all"}, python=target, max_response_bytes=16_000)

    assert size <= 16_000
    assert structured["summary"]["failed"] == 300
    listed = structured["tests"]
    assert structured["omitted_tests"] == 301 - len(listed)
    assert 0 < len(listed) < 300
    assert all(test["outcome"] == "failed" for test in listed), "failures must be kept before passes"
    assert f"{structured['omitted_tests']} more test reports left out" in text


THREE_FAILURES = """import pytest


def add(a, b):
    return a + b


def parse_price(text):
    return round(float(text), 2)


def checkout(prices):
    return sum(parse_price(p) for p in prices)


@pytest.mark.parametrize("i", range(1997))
def test_passes(i):
    assert add(i, 1) == i + 1


def test_integer():
    assert add(0, 1) == 2


@pytest.mark.parametrize("i", [25])
def test_label(i):
    assert f"item-{i}" == "item-x"


def test_helper_two_frames_down():
    assert checkout(["12.50", "3,20", "1.05"]) == 16.75
"""


async def test_three_typical_failures_in_2000_tests_answer_within_3_kb(shared_dir: Path, target: Path) -> None:
    # The benchmark's failure mix: an integer assertion, a string diff, an exception two frames down.
    _, (size, structured, text) = await shared_answer(shared_dir, {"test_shop.py": THREE_FAILURES}, target)

    assert (structured["summary"]["passed"], structured["summary"]["failed"]) == (1997, 3)
    # 3,016 bytes on 760cd42, before groups; 3.7-4.5 KB with them on d620d79 (issue 38). A group of
    # one is its report under an id (ADR 0020), and the groups carry the failures: no output tail.
    assert size <= 3072, size
    assert len(structured["groups"]) == 3
    assert "text_output" not in structured
    assert "def parse_price(text):" not in text


async def test_a_group_of_one_costs_at_most_100_bytes_more_than_its_bare_report(shared_dir: Path, target: Path) -> None:
    _, (_, structured, _) = await shared_answer(shared_dir, {"test_shop.py": THREE_FAILURES}, target)

    for group in structured["groups"]:
        assert group["count"] == 1
        wire = len(json.dumps(group, separators=(",", ":")))
        bare = len(json.dumps(group["representative"], separators=(",", ":")))
        assert wire - bare <= 100, group


async def test_a_representative_carries_what_the_text_shows_within_1_5_kb_and_node_ids_give_the_rest(
    tmp_path: Path, target: Path
) -> None:
    long_traceback = THREE_FAILURES + textwrap.dedent(
        '''
        import pytest


        @pytest.mark.parametrize("case", [pytest.param(i, id=f"case-{i}") for i in range(3)])
        def test_deep(case):
            """A docstring the traceback would otherwise repeat, line after line."""
            values = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8}
            nested = [[values[k] * i for k in values] for i in range(20)]
            assert nested == [[0] * 8] * 20
        '''
    )
    root = write(tmp_path / "deep", {"test_shop.py": long_traceback})

    _, structured, text = await answer(root, {}, python=target)
    group = next(g for g in structured["groups"] if "test_deep" in g["representative"]["node_id"])
    representative = group["representative"]
    # Every report in full, as get_test_run pages them.
    _, everything, _ = await answer(root, {"detail": "all"}, python=target)
    full = [test for test in everything["tests"] if test["node_id"] == representative["node_id"]]

    assert len(json.dumps(representative, separators=(",", ":"))) <= 1536
    lines = representative["traceback"].splitlines()
    assert any(line.startswith(">") for line in lines)
    assert any(line.startswith("E ") for line in lines)
    assert lines[-1].endswith("AssertionError")  # the crash line
    assert representative["location"].startswith("test_shop.py:")  # the test's own line
    assert all(f"  {line}" in text for line in lines), "the text shows what the representative carries"
    assert len(full[0]["traceback"]) > len(representative["traceback"]), "get_test_run gives the whole report"


async def test_discovery_of_a_large_suite_stays_within_the_cap(tmp_path: Path, target: Path) -> None:
    root = write(tmp_path / "large", passing_suite(3000))
    container = create_container(Settings(root=root, python=target))
    async with Client(container.tool_server().server) as client:
        result = await client.call_tool("discover_tests", {})
    structured = result.structured_content or {}
    text = result.content[0].text  # type: ignore[union-attr]

    size = len(json.dumps(structured, separators=(",", ":")).encode()) + len(text.encode())
    assert size <= 32_000, size
    assert structured["total"] == 3000
    assert 0 < len(structured["tests"]) < 3000
    assert structured["omitted_tests"] == 3000 - len(structured["tests"])
    assert structured["tests"][0]["node_id"] == "test_many.py::test_passes[0]"


async def test_a_large_collection_reads_as_tests_per_file_first_and_says_how_to_narrow(
    tmp_path: Path, target: Path
) -> None:
    files = {f"test_m{m}.py": passing_suite(100 * (m + 1))["test_many.py"] for m in range(30)}
    root = write(tmp_path / "modules", files)
    container = create_container(Settings(root=root, python=target))
    async with Client(container.tool_server().server) as client:
        result = await client.call_tool("discover_tests", {})
        narrowed = await client.call_tool("discover_tests", {"path": "test_m3.py"})
    structured = result.structured_content or {}
    text = result.content[0].text  # type: ignore[union-attr]

    total = sum(100 * (m + 1) for m in range(30))
    assert structured["total"] == total
    # In collection order, which is pytest's (test_m0, test_m1, test_m10, ...).
    assert [module["file"] for module in structured["modules"]] == sorted(files)
    assert {module["file"]: module["tests"] for module in structured["modules"]} == {
        f"test_m{m}.py": 100 * (m + 1) for m in range(30)
    }
    assert len(structured["tests"]) + structured["omitted_tests"] == total
    lines = text.splitlines()
    assert lines[0] == f"{total} tests collected in 30 files"
    assert lines[1:4] == ["tests per file, most first:", "  test_m29.py: 3000", "  test_m28.py: 2900"]
    assert "  [... 10 more files in structuredContent.modules ...]" in lines
    assert any(
        line.startswith('narrow with path (a file or directory, e.g. {"path": "test_m29.py"})') for line in lines
    )
    assert text.index("tests per file") < text.index("::test_passes[0]")
    # Narrowed to one file, the answer lists it whole.
    assert (narrowed.structured_content or {})["modules"] == [{"file": "test_m3.py", "tests": 400}]


# Issue 28's table: answers that grow with the number of causes, not the number of tests. Each case
# is bench/response_sizes.py's, so the figures in architecture/budget.md and these pins are one source.
# On 760cd42 (before groups) the first three and the skips case answered 31-32 KB, at the cap.


async def one_case(shared_dir: Path, name: str, python: Path) -> tuple[int, dict[str, Any], str]:
    return (await shared_answer(shared_dir, CASES[name].files, python))[1]


@pytest.mark.parametrize(
    "name",
    [
        "180 failures, one cause, 220 tests",
        "500 failures, one cause (a helper raising ValueError), 10,000 tests",
        "300 failures from 3 different causes",
    ],
)
async def test_failures_of_a_few_causes_answer_one_group_per_cause_within_the_goal(
    shared_dir: Path, name: str, target: Path
) -> None:
    case = CASES[name]
    size, structured, text = await one_case(shared_dir, name, target)

    assert case.goal_bytes is not None
    assert size <= case.goal_bytes, size
    groups = structured["groups"]
    assert len(groups) == case.groups
    assert sum(group["count"] for group in groups) == structured["summary"]["failed"]
    assert structured["tests"] == []
    # The text leads with the groups, largest first, each saying how many fail the same way.
    assert text.split("\n\n")[1].startswith(f"[{groups[0]['id']}] {groups[0]['count']} tests fail the same way")


async def test_a_helper_failing_500_tests_is_one_group_at_the_helpers_line_with_its_members_as_one_range(
    shared_dir: Path, target: Path
) -> None:
    _, structured, _ = await one_case(
        shared_dir, "500 failures, one cause (a helper raising ValueError), 10,000 tests", target
    )

    (group,) = structured["groups"]
    assert (group["count"], group["exception"], group["crash"]) == (500, "ValueError", "test_values.py:5")
    assert group["message"] == "ValueError: value <n> rejected by check()"
    assert group["members"] == ["test_values.py::test_value[{500 values from 0 to 9980}]"]
    assert "count and its bounds" in group["compressed"]
    assert group["representative"]["node_id"] == "test_values.py::test_value[0]"


async def test_forty_different_assertions_are_forty_groups_all_visible_none_merged(
    shared_dir: Path, target: Path
) -> None:
    size, structured, _ = await one_case(shared_dir, "40 failures, each a different assertion", target)

    groups = structured["groups"]
    assert size <= 32_000
    # 37 of 40 were shown with groups on d620d79, 40 of 40 before them (issue 38): all 40 now.
    assert len(groups) == 40
    assert "omitted_groups" not in structured
    assert all(group["count"] == 1 for group in groups)
    assert len({group["representative"]["node_id"] for group in groups}) == 40


async def test_a_passing_run_with_skips_and_xfails_gives_their_reasons_and_counts_not_each_test(
    shared_dir: Path, target: Path
) -> None:
    root, (size, structured, text) = await shared_answer(
        shared_dir, CASES["all pass, 354 skips with 3 reasons, 17 xfails"].files, target
    )

    assert size <= 1_500, size
    assert (structured["exit_code"], structured["tests"], structured["groups"]) == (0, [], [])
    assert [(r["outcome"], r["count"]) for r in structured["reasons"]] == [
        ("skipped", 300),
        ("skipped", 50),
        ("xfailed", 17),
        ("skipped", 4),
    ]
    assert "354 skipped (3 reasons):" in text
    assert "17 xfailed (1 reason):" in text
    # detail='all' still lists every test.
    _, everything, _ = await answer(root, {"detail": "all"}, python=target)
    assert len(everything["tests"]) + everything["omitted_tests"] == 4972 + 354 + 17


async def test_a_clean_10000_test_run_costs_only_the_two_empty_lists_more_than_before(
    shared_dir: Path, target: Path
) -> None:
    # Not a regression test: an invariant. 760cd42 answered 301 bytes; `"groups":[],"reasons":[]` adds 24.
    size, structured, _ = await one_case(shared_dir, "10,000 passing, no skips", target)

    assert structured["summary"]["passed"] == 10_000
    assert (structured["groups"], structured["reasons"]) == ([], [])
    assert size <= 301 + 24 + 8, size  # 8: the digits of the duration
