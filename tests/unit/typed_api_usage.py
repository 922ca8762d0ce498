"""An agent developer's tests, written against `pytest_mcp.testing` as its types describe it.

Not collected by pytest: `test_testing_api.py` runs `mypy --strict` on this file, as a user's
type checker would see the installed package, so the public API stays usable from typed code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client

from pytest_mcp.testing import (
    RECORDING_FORMAT,
    RECORDING_VERSION,
    CollectSpec,
    FailureKind,
    FakeTestRunner,
    Outcome,
    Phase,
    RunSpec,
    ScriptedTest,
    ScriptError,
    connect,
)


def scripted_project(root: Path) -> FakeTestRunner:
    outcome: Outcome = "failed"
    phase: Phase = "call"
    kind: FailureKind = "collection_error"
    runner = (
        FakeTestRunner([ScriptedTest(node_id="tests/test_a.py::test_ok")], root=root, plugins=["pytest-xdist"])
        .script("tests/test_cart.py::test_total", outcome, message="assert 90 == 85", line=4, phase=phase)
        .script("tests/test_cart.py::TestCheckout::test_pays", markers=["slow"], duration=0.25)
        .script("tests/test_cart.py::test_vat", "failed", runs=["shop/price.py::gross_price"], flaky=True)
        .trace("tests/test_cart.py::test_total", "shop/cart.py::Cart.total", "shop/price.py::gross_price")
        .define("shop/price.py::gross_price", "10-11")
        .define("shop/cart.py::Cart.total", (4, 9))
        .run_at_import("shop/rates.py::Rates.__init__")
        .change("shop/price.py::gross_price")
        .fail_with("timeout", node_id="tests/test_cart.py::TestCheckout::test_pays", on="run", times=2)
        .fail_with(kind, "ImportError: cannot import name 'Cart'", node_id="tests/test_orders.py")
        .fail_with("crash", node_id="tests/test_cart.py::test_total", signal="SIGABRT", line=5)
        .install("pytest-cov==6.0.0")
        .script_coverage(81.5, {"src/cart.py": 62.0}, missing={"src/cart.py": "12-15"})
        .script_environment(python_version="3.12.1", pytest_version="8.3.4")
    )
    return runner.clear_failures("tests/test_orders.py").hold(after=1).release()


async def agent_under_test(client: Client) -> list[str]:
    result = await client.call_tool("execute_tests", {"node_ids": ["tests/test_cart.py"]})
    structured: dict[str, Any] = result.structured_content or {}
    return [str(test["node_id"]) for test in structured.get("tests", [])]


async def a_test(tmp_path: Path) -> None:
    runner = scripted_project(tmp_path)
    async with connect(
        runner,
        python="/usr/bin/python3",
        mode="auto",
        timeout=30,
        max_timeout=60,
        error_mode="jsonrpc",
        detach_after=0.1,
        log_level="warning",
    ) as client:
        await agent_under_test(client)
    runs: list[RunSpec] = [call for call in runner.calls if isinstance(call, RunSpec)]
    discoveries: list[CollectSpec] = [call for call in runner.calls if isinstance(call, CollectSpec)]
    assert [run.node_ids for run in runs] == [("tests/test_cart.py",)]
    assert not discoveries
    root: Path | None = runner.root
    tests: tuple[ScriptedTest, ...] = runner.tests
    assert root is not None
    assert tests


def recordings(path: Path) -> None:
    document: dict[str, Any] = FakeTestRunner().to_recording()
    assert (document["format"], document["version"]) == (RECORDING_FORMAT, RECORDING_VERSION)
    replayed = FakeTestRunner.from_recording(path)
    again = FakeTestRunner.from_recording(document)
    from_a_script = FakeTestRunner.from_dict({"tests/test_a.py::test_ok": "passed"}, root=path)
    assert replayed.tests == again.tests or from_a_script.tests
    try:
        FakeTestRunner().fail_with("crash", signal="SIGFOO")
    except ScriptError as error:
        message: str = str(error)
        assert message.startswith("signal:")
