"""The installed server lists its tools and answers execute_tests / discover_tests with real results."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from pytest_mcp.domain.requests import DiscoverTestsRequest, ExecuteTestsRequest
from tests.answers import TOOLS
from tests.e2e.e2e_support import assert_all_gone, pytest_oracle, start_server, structured, text_of, write_project

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

# What the clients see must be exactly what the request models accept.
EXECUTE_PROPERTIES = set(ExecuteTestsRequest.model_fields)
DISCOVER_PROPERTIES = set(DiscoverTestsRequest.model_fields)

OUTCOMES = {
    "test_outcomes.py": """
        import pytest

        def test_passes():
            assert True

        def test_also_passes():
            assert 1 + 1 == 2

        def test_fails():
            assert 1 == 2, "one is not two"

        @pytest.mark.skip(reason="not today")
        def test_skipped():
            pass

        @pytest.mark.xfail(reason="known bug")
        def test_xfails():
            assert False

        @pytest.fixture
        def broken():
            raise RuntimeError("fixture exploded")

        def test_setup_error(broken):
            pass
    """,
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    """One server on the outcomes project for the tests that only list the tools or run it as it is.

    The per-test leftover check (conftest.py) looks for the test's own tmp_path, which this server's
    command line does not hold: this fixture checks its own root the same way once the module is done.
    """
    root = write_project(tmp_path_factory.mktemp("shared") / "proj", OUTCOMES)
    server = start_server(root, root.parent, "--max-timeout", "120", "--timeout", "60")
    async with server.client() as client:
        yield client
    print(server.stderr())
    await assert_all_gone(str(root))


def _maximum(prop: dict[str, Any]) -> Any:
    if "maximum" in prop:
        return prop["maximum"]
    maxima = [branch["maximum"] for branch in prop.get("anyOf", []) if "maximum" in branch]
    assert len(maxima) == 1, f"expected one maximum in {prop}"
    return maxima[0]


async def test_tools_list_offers_exactly_execute_and_discover_with_strict_schemas(shared: Client) -> None:
    listing = await shared.list_tools()
    tools = {tool.name: tool for tool in listing.tools}
    assert set(tools) == TOOLS

    execute = tools["execute_tests"].input_schema
    discover = tools["discover_tests"].input_schema
    for schema, expected in ((execute, EXECUTE_PROPERTIES), (discover, DISCOVER_PROPERTIES)):
        assert schema["type"] == "object"
        assert schema.get("additionalProperties") is False, schema
        assert set(schema["properties"]) == expected
    assert _maximum(execute["properties"]["timeout"]) == 120

    for name, keys in (("execute_tests", {"exit_code", "summary", "tests"}), ("discover_tests", {"total", "tests"})):
        output = tools[name].output_schema
        assert output, f"{name} has no output schema"
        assert output["type"] == "object"
        assert keys <= set(output["properties"]), output["properties"].keys()


# legacy runs with the venv's third-party plugins autoloaded, as a real project would have them.
@pytest.mark.parametrize(("mode", "plugins"), [("legacy", True), ("auto", False)])
async def test_execute_tests_counts_match_pytest_and_failures_carry_their_evidence(
    tmp_path: Path, mode: str, plugins: bool
) -> None:
    root = write_project(tmp_path / "proj", OUTCOMES)
    oracle_counts_text, oracle_counts = pytest_oracle(root, plugins=plugins)
    assert oracle_counts == {"failed": 1, "passed": 2, "skipped": 1, "xfailed": 1, "errors": 1}

    server = start_server(root, tmp_path, plugins=plugins)
    async with server.client(mode) as client:
        result = await client.call_tool("execute_tests", {})
    data = structured(result)

    assert data["exit_code"] == 1
    summary = data["summary"]
    for key in ("passed", "failed", "skipped", "xfailed", "xpassed", "errors", "deselected"):
        assert summary[key] == oracle_counts.get(key, 0), f"{key}: {summary} vs pytest's {oracle_counts_text!r}"
    assert summary["total"] == 6

    reports = [group["representative"] for group in data["groups"]]  # each failure here fails its own way
    by_id = {(test["node_id"], test["phase"]): test for test in reports}
    failed = by_id[("test_outcomes.py::test_fails", "call")]
    assert failed["outcome"] == "failed"
    assert failed["location"] == "test_outcomes.py:9"
    assert "one is not two" in failed["message"]
    assert "assert 1 == 2" in failed["traceback"]
    errored = by_id[("test_outcomes.py::test_setup_error", "setup")]
    assert errored["outcome"] == "error"
    assert "fixture exploded" in errored["message"]
    assert not any(test["outcome"] == "passed" for test in data["tests"]), "detail=failures listed passes"

    text = text_of(result)
    first_line = text.splitlines()[0]
    assert first_line.startswith(oracle_counts_text + " in "), (first_line, oracle_counts_text)
    assert "test_outcomes.py::test_fails" in text
    assert text != json.dumps(data)
    assert len(text) < len(json.dumps(data))
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


@pytest.mark.parametrize(("detail", "listed"), [("all", True), ("summary", False)])
async def test_detail_all_lists_passing_tests_and_summary_lists_none(shared: Client, detail: str, listed: bool) -> None:
    result = await shared.call_tool("execute_tests", {"detail": detail})
    data = structured(result)
    assert data["summary"]["passed"] == 2
    tests = data.get("tests", [])
    passed = {test["node_id"] for test in tests if test["outcome"] == "passed"}
    if listed:
        assert passed == {"test_outcomes.py::test_passes", "test_outcomes.py::test_also_passes"}
        assert any(test["outcome"] == "failed" for test in tests)
    else:
        assert tests == []


async def test_discover_tests_lists_node_ids_and_reports_a_broken_module_as_data(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "test_good.py": """
                import pytest

                def test_plain():
                    pass

                @pytest.mark.slow
                def test_marked():
                    pass
            """,
            "test_broken.py": """
                import module_that_does_not_exist_e2e

                def test_never():
                    pass
            """,
        },
    )
    (root / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow tests\n", encoding="utf-8")
    server = start_server(root, tmp_path)
    async with server.client() as client:
        result = await client.call_tool("discover_tests", {})
    assert not result.is_error
    data = structured(result)

    assert data["total"] == 2
    tests = {test["node_id"]: test for test in data["tests"]}
    assert set(tests) == {"test_good.py::test_plain", "test_good.py::test_marked"}
    assert tests["test_good.py::test_plain"]["file"] == "test_good.py"
    assert tests["test_good.py::test_plain"]["line"] == 3
    # pytest locates a decorated function at its first decorator, and so must we.
    assert tests["test_good.py::test_marked"]["line"] == 6
    assert "slow" in tests["test_good.py::test_marked"]["markers"]
    assert "slow" not in tests["test_good.py::test_plain"]["markers"]

    [error] = data["collection_errors"]
    assert error["node_id"] == "test_broken.py"
    assert "ModuleNotFoundError" in error["message"]
    assert "module_that_does_not_exist_e2e" in error["message"]
    assert "test_broken.py" in text_of(result)
