"""Answer sizes (structured JSON + text block) for the budget table in architecture/budget.md.

Each case is a generated suite run through the production container and the real subprocess
runner; sizes are bytes as the SDK sends them (compact JSON, UTF-8) plus the text block.
tests/integration/test_budget.py pins every row with these same cases.

Run: .venv/bin/python bench/response_sizes.py   (writes bench/results/response_sizes.md)
"""

from __future__ import annotations

import json
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings


@dataclass(frozen=True)
class Case:
    """A suite, and the goal its answer must meet: at most `bytes` in all, with `groups` groups (None: any)."""

    files: dict[str, str]
    goal_bytes: int | None = None
    groups: int | None = None


def _source(text: str) -> str:
    return textwrap.dedent(text).lstrip()


ONE_CAUSE_180 = Case(
    {
        "test_double.py": _source(
            """
            import pytest

            def double(x):
                return x * 2 if x < 40 else x * 2 + 1  # the bug: off by one from 40 on

            @pytest.mark.parametrize("x", range(220))
            def test_double(x):
                assert double(x) == x + x
            """
        )
    },
    goal_bytes=3_000,
    groups=1,
)

ONE_CAUSE_500_OF_10000 = Case(
    {
        "test_values.py": _source(
            """
            import pytest

            def check(value):
                if value % 20 == 0:
                    raise ValueError(f"value {value} rejected by check()")
                return value

            @pytest.mark.parametrize("i", range(10_000))
            def test_value(i):
                assert check(i) == i
            """
        )
    },
    goal_bytes=3_000,
    groups=1,
)

THREE_CAUSES_300 = Case(
    {
        "helpers.py": _source(
            """
            RATES = {"EUR": 1.0, "USD": 1.1}

            def rate(currency):
                return RATES[currency]

            def label(item):
                return item["name"] + 1
            """
        ),
        "test_three.py": _source(
            """
            import pytest
            from helpers import label, rate

            VAT = 0.21  # the bug: should be 0.20

            @pytest.mark.parametrize("net", range(1, 101))
            def test_vat(net):
                assert round(net * (1 + VAT), 2) == round(net * 1.2, 2)

            @pytest.mark.parametrize("n", range(100))
            def test_rate(n):
                assert rate("GBP") > 0

            @pytest.mark.parametrize("n", range(100))
            def test_label(n):
                assert label({"name": f"item-{n}"})
            """
        ),
    },
    goal_bytes=6_000,
    groups=3,
)

FORTY_DIFFERENT = Case(
    {
        "test_forty.py": "\n\n".join(
            f"def test_case_{i}():\n    value = {i} * 3\n    assert value == {i} * 3 + {i % 7 + 1}, 'case {i}'"
            for i in range(40)
        )
        + "\n"
    },
    groups=40,
)

SKIPS_AND_XFAILS = Case(
    {
        "test_skips.py": _source(
            """
            import sys
            import pytest

            @pytest.mark.parametrize("i", range(4972))
            def test_passes(i):
                assert i >= 0

            @pytest.mark.parametrize("i", range(300))
            @pytest.mark.skipif(sys.platform != "nonexistent", reason="needs the tz database of the nonexistent OS")
            def test_tz(i):
                pass

            @pytest.mark.parametrize("i", range(50))
            def test_network(i):
                pytest.skip("network access is disabled")

            @pytest.mark.parametrize("i", range(4))
            @pytest.mark.skip(reason="slow")
            def test_slow(i):
                pass

            @pytest.mark.parametrize("i", range(17))
            @pytest.mark.xfail(reason="known rounding issue")
            def test_rounding(i):
                assert 0.1 + 0.2 == 0.3
            """
        )
    },
    goal_bytes=1_500,
    groups=0,
)

PASSING_10000 = Case(
    {
        "test_many.py": _source(
            """
            import pytest

            @pytest.mark.parametrize("i", range(10_000))
            def test_passes(i):
                assert i >= 0
            """
        )
    },
    goal_bytes=600,
    groups=0,
)

CASES: dict[str, Case] = {
    "180 failures, one cause, 220 tests": ONE_CAUSE_180,
    "500 failures, one cause (a helper raising ValueError), 10,000 tests": ONE_CAUSE_500_OF_10000,
    "300 failures from 3 different causes": THREE_CAUSES_300,
    "40 failures, each a different assertion": FORTY_DIFFERENT,
    "all pass, 354 skips with 3 reasons, 17 xfails": SKIPS_AND_XFAILS,
    "10,000 passing, no skips": PASSING_10000,
}


def write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    for name, text in files.items():
        (root / name).write_text(text)
    return root


COUNTED_PYTHON = "/project/.venv/bin/python"


async def answer(
    root: Path, arguments: dict[str, Any] | None = None, *, python: Path | None = None, **settings: Any
) -> tuple[int, dict[str, Any], str]:
    """(bytes of the whole answer, its structured content, its text) of one execute_tests call."""
    container = create_container(
        Settings(root=root, python=python or Path(sys.executable), log_level="error", **settings)
    )
    async with Client(container.tool_server().server) as client:
        result = await client.call_tool("execute_tests", arguments or {})
    structured = result.structured_content or {}
    text = result.content[0].text  # type: ignore[union-attr]
    # The interpreter's path is the machine's: counted as a fixed one, so a size is the same on every machine.
    counted = (
        {**structured, "command": [COUNTED_PYTHON, *structured["command"][1:]]}
        if structured.get("command")
        else structured
    )
    wire = json.dumps(counted, separators=(",", ":"), ensure_ascii=False)  # as the SDK writes it
    return len(wire.encode()) + len(text.encode()), structured, text


async def measure(case: Case) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        size, structured, text = await answer(write(Path(directory), case.files))
    return {
        "structured": size - len(text.encode()),
        "text": len(text.encode()),
        "total": size,
        "groups": len(structured.get("groups", [])),
        "omitted_groups": structured.get("omitted_groups", 0),
        "non_passing": sum(structured["summary"][key] for key in ("failed", "errors", "skipped", "xfailed")),
    }


REPO = Path(__file__).resolve().parents[1]
REAL_SUITES = REPO / ".cache" / "real-suites"


@dataclass(frozen=True)
class Injected:
    """A bug planted in a real suite (scripts/fetch-real-suites fetches them): one edit of one file."""

    suite: str
    kind: str
    file: str
    old: str
    new: str
    node_ids: tuple[str, ...] = ()


INJECTED = (
    Injected(
        "six",
        "a wrong constant",
        "six.py",
        "    text_type = str\n",
        "    text_type = bytes  # injected\n",
    ),
    Injected(
        "more-itertools",
        "an exception in a shared helper",
        "more_itertools/recipes.py",
        "    return list(islice(iterable, n))\n",
        "    if n > 2:\n        raise ValueError(f'take({n}) is broken')  # injected\n"
        "    return list(islice(iterable, n))\n",
    ),
    Injected(
        "packaging",
        "an import error in one module",
        "tests/test_markers.py",
        "import itertools\n",
        "import itertools\nimport packaging._no_such_module  # injected\n",
        ("tests/property", "tests/test_markers.py", "tests/test_requirements.py"),
    ),
)


async def measure_injected(bug: Injected) -> dict[str, Any] | None:
    """The answer to a real suite with `bug` planted in a copy of it; None when the suite is not fetched."""
    import shutil

    homes = sorted(REAL_SUITES.glob(f"{bug.suite}-*/ready.json"))
    if not homes:
        return None
    ready = json.loads(homes[-1].read_text())
    home = homes[-1].parent
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "suite"
        shutil.copytree(home / ready["root"], root)
        target = root / bug.file
        source = target.read_text()
        if bug.old not in source:
            raise RuntimeError(f"{bug.suite}: {bug.file} no longer holds the line the bug replaces")
        target.write_text(source.replace(bug.old, bug.new, 1))
        arguments: dict[str, Any] = {"node_ids": list(bug.node_ids)} if bug.node_ids else {}
        container = create_container(Settings(root=root, python=home / ready["python"], log_level="error"))
        async with Client(container.tool_server().server) as client:
            result = await client.call_tool("execute_tests", arguments)
    structured = result.structured_content or {}
    text = result.content[0].text  # type: ignore[union-attr]
    wire = json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    summary = structured.get("summary", {})
    return {
        "total": len(wire.encode()) + len(text.encode()),
        "error": result.is_error,
        "failed": summary.get("failed", 0) + summary.get("errors", 0),
        "groups": [(g["count"], g["title"]) for g in structured.get("groups", [])],
        "omitted_groups": structured.get("omitted_groups", 0),
        "text": text,
    }


async def _main() -> None:
    rows = [
        "| case | non-passing | groups (left out) | structured bytes | text bytes | answer bytes (≈ tokens) | goal |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, case in CASES.items():
        m = await measure(case)
        goal = f"≤ {case.goal_bytes:,}" if case.goal_bytes else "—"
        groups = f"{m['groups']}" + (f" (+{m['omitted_groups']})" if m["omitted_groups"] else "")
        rows.append(
            f"| {name} | {m['non_passing']:,} | {groups} | {m['structured']:,} | {m['text']:,} | "
            f"{m['total']:,} (≈ {m['total'] // 4:,}) | {goal} |"
        )
        print(rows[-1], flush=True)
    rows += ["", "| real suite | injected bug | failed + errors | groups | answer bytes |", "|---|---|---:|---:|---:|"]
    for bug in INJECTED:
        found = await measure_injected(bug)
        if found is None:
            print(f"{bug.suite}: not fetched (scripts/fetch-real-suites)", file=sys.stderr)
            continue
        groups = "tool error" if found["error"] else f"{len(found['groups'])}"
        rows.append(f"| {bug.suite} | {bug.kind} | {found['failed']:,} | {groups} | {found['total']:,} |")
        print(rows[-1], flush=True)
        for count, title in found["groups"][:5]:
            print(f"    {count}: {title}", flush=True)
    out = Path(__file__).parent / "results" / "response_sizes.md"
    out.parent.mkdir(exist_ok=True)
    header = f"# Answer sizes\n\nMeasured with `bench/response_sizes.py` (pytest {pytest.__version__}).\n\n"
    out.write_text(header + "\n".join(rows) + "\n")


def main() -> None:
    anyio.run(_main)


if __name__ == "__main__":
    main()
