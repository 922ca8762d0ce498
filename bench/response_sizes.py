"""Measure answer sizes (structured JSON + text block) for the budget figures in architecture/budget.md.

Run: .venv/bin/python bench/response_sizes.py   (writes bench/results/response_sizes.md)
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings

SUITES: dict[str, str] = {
    "all pass, 10 tests": "import pytest\n\n@pytest.mark.parametrize('i', range(10))\ndef test_ok(i):\n    pass\n",
    "all pass, 2,000 tests": "import pytest\n\n@pytest.mark.parametrize('i', range(2000))\ndef test_ok(i):\n    pass\n",
    "3 failures in 2,000 tests": (
        "import pytest\n\n@pytest.mark.parametrize('i', range(2000))\n"
        "def test_ok(i):\n    assert i not in (10, 500, 1500), f'value {i} is out of range'\n"
    ),
    "1 failure, dict diff": (
        "def test_dicts():\n    assert {'a': 1, 'b': [1, 2, 3], 'c': 'x'} == {'a': 1, 'b': [1, 2, 4], 'c': 'y'}\n"
    ),
    "1 failure, 5 MB message": "def test_huge():\n    assert False, 'z' * 5_000_000\n",
    "1 failure through a library frame": (
        "import json\n\ndef parse(text):\n    return json.loads(text)\n\ndef test_parse():\n    parse('{')\n"
    ),
}


async def measure(source: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "pytest.ini").write_text("[pytest]\n")
        (root / "test_suite.py").write_text(source)
        container = create_container(Settings(root=root, python=Path(sys.executable), log_level="error"))
        async with Client(container.tool_server().server) as client:
            result = await client.call_tool("execute_tests", {})
    structured = json.dumps(result.structured_content).encode()
    text = result.content[0].text.encode()  # type: ignore[union-attr]
    tests = (result.structured_content or {}).get("tests", [])
    per_failure = [len(json.dumps(test).encode()) for test in tests if test["outcome"] in ("failed", "error")]
    return {
        "structured": len(structured),
        "text": len(text),
        "total": len(structured) + len(text),
        "largest failure entry": max(per_failure, default=0),
    }


async def main() -> None:
    rows = [
        "| suite | structured bytes | text bytes | answer bytes (≈ tokens) | largest failure entry |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, source in SUITES.items():
        m = await measure(source)
        rows.append(
            f"| {name} | {m['structured']:,} | {m['text']:,} | {m['total']:,} (≈ {m['total'] // 4:,}) | "
            f"{m['largest failure entry']:,} |"
        )
    table = "\n".join(rows)
    print(table)
    out = Path(__file__).parent / "results" / "response_sizes.md"
    out.parent.mkdir(exist_ok=True)
    header = f"# Answer sizes\n\nMeasured with `bench/response_sizes.py` (pytest {pytest.__version__}).\n\n"
    out.write_text(header + table + "\n")


anyio.run(main)
