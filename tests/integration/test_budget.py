"""Token budget, pinned: the all-pass answer has a constant size, a failure has a ceiling, the answer a cap.

Sizes are bytes of the whole answer, structured content (JSON) plus the text block, measured
through the production container and the real subprocess runner.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings

pytestmark = pytest.mark.anyio

# Every count and both lists are always there for programs (issue 17); even so, a clean answer
# stays under 600 bytes in all, whatever the suite size.
ALL_PASS_CEILING = 600
FAILURE_CEILING = 8 * 1024
# What a failing answer adds around its failure entries: the command, the output tail, the counts.
ANSWER_OVERHEAD = 1024


def write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    for name, text in files.items():
        (root / name).write_text(text)
    return root


async def answer(root: Path, arguments: dict[str, Any], **settings: Any) -> tuple[int, dict[str, Any], str]:
    container = create_container(Settings(root=root, python=Path(sys.executable), **settings))
    async with Client(container.tool_server().server) as client:
        result = await client.call_tool("execute_tests", arguments)
    structured = result.structured_content or {}
    text = result.content[0].text  # type: ignore[union-attr]
    # As the SDK writes it: compact JSON, UTF-8.
    wire = json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    return len(wire.encode()) + len(text.encode()), structured, text


def passing_suite(count: int) -> dict[str, str]:
    return {
        "test_many.py": (
            f"import pytest\n\n@pytest.mark.parametrize('i', range({count}))\ndef test_passes(i):\n    assert i >= 0\n"
        )
    }


async def test_an_all_pass_answer_has_the_same_size_whatever_the_suite_size(tmp_path: Path) -> None:
    small, _, _ = await answer(write(tmp_path / "small", passing_suite(10)), {})
    large, structured, _ = await answer(write(tmp_path / "large", passing_suite(3000)), {})

    assert structured["summary"]["passed"] == 3000
    assert large <= ALL_PASS_CEILING
    # Only digits differ: the counts (10 vs 3000) and the durations.
    assert abs(large - small) <= 24, (small, large)


async def test_a_huge_assertion_message_costs_a_few_kilobytes_and_says_how_much_was_cut(tmp_path: Path) -> None:
    root = write(
        tmp_path / "huge",
        {"test_huge.py": "def test_huge():\n    assert 'x' * 5_000_000 == 'y' * 5_000_000, 'z' * 5_000_000\n"},
    )

    size, structured, text = await answer(root, {"verbosity": 2})

    (failure,) = structured["tests"]
    entry = len(json.dumps(failure).encode())
    assert entry <= FAILURE_CEILING, entry
    assert "characters cut by pytest-mcp" in failure["message"] + failure["traceback"]
    assert size <= FAILURE_CEILING + ANSWER_OVERHEAD + len(text.encode())


async def test_the_traceback_keeps_project_frames_and_the_assertion_not_library_frames(tmp_path: Path) -> None:
    root = write(
        tmp_path / "lib",
        {
            "test_lib.py": (
                "import json\n\ndef parse(text):\n    return json.loads(text)\n\ndef test_bad():\n    parse('{')\n"
            )
        },
    )

    _, structured, _ = await answer(root, {})

    traceback = structured["tests"][0]["traceback"]
    assert "parse('{')" in traceback
    assert "json.loads(text)" in traceback
    assert "frame(s) outside the project hidden by pytest-mcp" in traceback
    assert "json/decoder.py" not in traceback.split("hidden by pytest-mcp")[-1].split("\n\n")[0]


async def test_the_whole_answer_is_capped_and_says_how_many_reports_were_left_out(tmp_path: Path) -> None:
    suite = (
        "import pytest\n\n"
        "@pytest.mark.parametrize('i', range(300))\n"
        "def test_fails(i):\n    assert i == -1, 'failure number %d with some explanation' % i\n\n"
        "def test_passes():\n    pass\n"
    )
    root = write(tmp_path / "many", {"test_many.py": suite})

    size, structured, text = await answer(root, {"detail": "all"}, max_response_bytes=16_000)

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


async def test_three_typical_failures_in_2000_tests_answer_within_4_kb(tmp_path: Path) -> None:
    # The benchmark's failure mix: an integer assertion, a string diff, an exception two frames down.
    size, structured, text = await answer(write(tmp_path / "three", {"test_shop.py": THREE_FAILURES}), {})

    assert (structured["summary"]["passed"], structured["summary"]["failed"]) == (1997, 3)
    assert size <= 4096, size
    # Each traceback is in `tests` once; neither text_output nor the text block copies it whole.
    assert " short test summary info " in structured["text_output"].splitlines()[1]
    assert "def parse_price(text):" not in text


async def test_discovery_of_a_large_suite_stays_within_the_cap(tmp_path: Path) -> None:
    root = write(tmp_path / "large", passing_suite(3000))
    container = create_container(Settings(root=root, python=Path(sys.executable)))
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
