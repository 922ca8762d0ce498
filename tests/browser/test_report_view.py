"""The report view in a real browser, fed answers from the real server and the real pytest.

Each case loads the `ui://` resource as the server serves it (resources/read) into the harness
host's sandboxed iframe, hands it a real tools/call answer, and asserts on the DOM. The view's
own tools/call requests are answered by the same server.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult

from pytest_mcp.adapters.mcp.report_view import VIEW_URI
from pytest_mcp.testing import FakeTestRunner, connect
from tests.browser.conftest import HARNESS, ReportPage
from tests.security.hostile_reports import HOOK, PAYLOADS, write_hostile_project

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


def write_project(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    for name, source in files.items():
        (root / name).write_text(textwrap.dedent(source))
    return root


async def view_html(client: Client) -> str:
    (contents,) = (await client.read_resource(VIEW_URI)).contents
    text: str = getattr(contents, "text")  # noqa: B009 - a TextResourceContents
    return text


def serve(root: Path, **settings: Any) -> Any:
    """A server on the real runner for the project at `root` (the test's interpreter runs its pytest)."""
    return connect(root=root, python=sys.executable, **settings)


async def show(page: ReportPage, client: Client, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    """Call `tool` on the real server and load its answer into the view."""
    result = await client.call_tool(tool, arguments)
    page.show(await view_html(client), tool, arguments, result)
    return result


CLEAN = {
    "test_clean.py": """
        import time

        import pytest

        @pytest.mark.parametrize("n", range(4))
        def test_fine(n):
            assert n >= 0

        def test_takes_a_while():
            time.sleep(0.3)
    """
}

THREE_FAILURES = {
    "test_three.py": """
        import pytest

        def test_text_diff():
            assert "alpha\\nbeta\\ngamma" == "alpha\\nbeta\\ndelta"

        def test_raises():
            raise KeyError("missing-key")

        def test_captures():
            print("captured line for the view")
            assert 1 + 1 == 3

        def test_ok_one():
            pass

        def test_ok_two():
            pass

        @pytest.mark.skip(reason="needs a database")
        def test_needs_db():
            pass

        @pytest.mark.xfail(reason="bug 42")
        def test_known_bug():
            assert False
    """
}

MANY_FAILURES = {
    "test_many.py": """
        import pytest

        @pytest.mark.parametrize("n", range(180))
        def test_database(n):
            raise ConnectionError("database unavailable")

        @pytest.mark.parametrize("n", range(120))
        def test_value(n):
            assert n == -1
    """
}

DETACHED = {
    "test_slow.py": """
        import time

        def test_a_fails():
            assert 2 + 2 == 5

        def test_b_slow():
            time.sleep(3)
    """
}


async def test_a_clean_run_shows_its_counts_as_a_bar_and_nothing_to_fix(page: ReportPage, tmp_path: Path) -> None:
    async with serve(write_project(tmp_path / "p", CLEAN)) as client:
        await show(page, client, "execute_tests", {})
        assert page.counts() == {"passed": 5}
        assert page.text("#headline").startswith("5 passed in ")
        assert page.text("#headline").endswith("(exit code 0)")
        assert page.in_view("return document.querySelectorAll('#bar span.passed').length") == 1
        for section in ("failures", "collection", "reasons", "slowest", "coverage", "omitted"):
            assert not page.visible(section), section
        page.screenshot("clean")

        # With every report listed, the slowest come first.
        await show(page, client, "execute_tests", {"detail": "all"})
        assert page.texts("#slow-rows tr td:nth-child(2)")[0] == "test_clean.py::test_takes_a_while"
        assert page.text("#slow-rows tr td.n").startswith("0.3")

        # discover_tests: what was collected, nothing run.
        await show(page, client, "discover_tests", {})
        assert page.text("#headline") == "5 tests collected"
        assert [text.split("  ")[0] for text in page.texts("#collected-tests li")] == [
            *(f"test_clean.py::test_fine[{n}]" for n in range(4)),
            "test_clean.py::test_takes_a_while",
        ]
        assert page.counts() == {}


async def test_coverage_shows_the_total_and_the_worst_files(page: ReportPage, tmp_path: Path) -> None:
    """pytest-cov is not in the development environment: this answer comes from the test double."""
    hostile_file = f"src/{PAYLOADS['img-onerror']}.py"
    runner = FakeTestRunner(root=tmp_path).script("tests/test_cart.py::test_total")
    runner.script_coverage(81.5, {"src/cart.py": 62.0, hostile_file: 90.0}, missing={"src/cart.py": "12-15, 40"})
    async with connect(runner) as client:
        await show(page, client, "execute_tests", {"coverage": True})
    assert page.text("#coverage-total") == "81.5%"
    rows = page.in_view(
        "return [...document.querySelectorAll('#coverage-rows tr')].map((r) => [...r.cells].map((c) => c.textContent))"
    )
    assert rows == [["62%", "src/cart.py", "12-15, 40"], ["90%", hostile_file, ""]]
    assert page.in_view("return [window.__pwned, document.images.length]") == [None, 0]
    assert page.host("other") == []


async def test_three_failures_show_each_group_its_evidence_and_the_assertion_diff(
    page: ReportPage, tmp_path: Path
) -> None:
    async with serve(write_project(tmp_path / "p", THREE_FAILURES)) as client:
        await show(page, client, "execute_tests", {"show_capture": True})
    assert page.counts() == {"failed": 3, "passed": 2, "skipped": 1, "xfailed": 1}
    assert page.text("#failure-count") == "3 reports in 3 groups"
    titles = page.texts("#groups .title")
    assert "AssertionError: assert 'alpha\\nbeta\\ngamma' == 'alpha\\nbeta\\ndelta'" in titles
    assert "KeyError: 'missing-key'" in titles
    assert page.in_view("return [...document.querySelectorAll('#groups details')].every((d) => !d.open)")
    page.in_view("document.querySelector('#groups details').open = true")
    page.screenshot("three-failures", above="#reproduce")  # the README's picture
    page.open_groups()
    assert page.texts("#groups .message .del") == ["  - delta\n"]
    assert page.texts("#groups .message .add") == ["  + gamma\n"]
    assert "captured line for the view" in page.text("#groups .stdout")
    assert "test_three.py::test_text_diff" in page.texts("#groups .node-id")
    reasons = [
        row.split("\n")
        for row in page.in_view(
            "return [...document.querySelectorAll('#reason-rows tr')]"
            ".map((r) => [...r.cells].map((c) => c.textContent).join('\\n'))"
        )
    ]
    assert sorted(reasons) == [["1", "skipped", "needs a database"], ["1", "xfailed", "bug 42"]]
    assert "-m pytest" in page.text("#command")


async def test_hundreds_of_failures_stay_collapsed_filterable_and_paged(
    page: ReportPage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_project(tmp_path / "p", MANY_FAILURES)
    monkeypatch.setenv("PYTEST_MCP_MAX_RESPONSE_BYTES", "1000000")  # every report in the answer
    async with serve(root) as client:
        result = await show(page, client, "execute_tests", {})
    structured = result.structured_content or {}
    assert len(structured["tests"]) == 300
    assert page.counts() == {"failed": 300}
    assert page.text("#failure-count") == "300 reports in 121 groups"
    assert page.in_view("return document.querySelectorAll('#groups > li').length") == 40
    assert page.in_view("return [...document.querySelectorAll('#groups details')].every((d) => !d.open)")
    assert page.text("#groups .title") == "ConnectionError: database unavailable"  # the largest first
    assert page.text("#groups .times") == "180\u00d7"
    assert page.text("#more-groups") == "Show 40 more of 81"
    page.in_view("document.getElementById('more-groups').click()")
    assert page.in_view("return document.querySelectorAll('#groups > li').length") == 80
    page.in_view("const f = document.getElementById('filter'); f.value = '== -1'; f.dispatchEvent(new Event('input'))")
    assert page.text("#groups-hidden") == "120 of 121 groups match"
    page.in_view("const f = document.getElementById('filter'); f.value = '[17]'; f.dispatchEvent(new Event('input'))")
    assert page.texts("#groups .title") == ["ConnectionError: database unavailable", "assert 17 == -1"]
    page.screenshot("many-failures")

    # Within the default size budget the answer holds some reports; the view says how many it has not,
    # and fetches the next ones from the stored run through get_test_run, without running the tests again.
    monkeypatch.delenv("PYTEST_MCP_MAX_RESPONSE_BYTES")
    async with serve(root) as client:
        result = await show(page, client, "execute_tests", {})
        first = result.structured_content or {}
        omitted = first["omitted_tests"]
        assert omitted > 200
        assert page.text("#omitted-note").startswith(f"{omitted} more reports were left out of this answer")
        assert page.visible("next-page")
        page.in_view("document.getElementById('next-page').click()")
        note = page.text("#omitted-note")
        await page.answer_calls(client, until=lambda: page.text("#omitted-note") != note, timeout=30)
    shown_first = len(first["tests"])
    left = int(page.text("#omitted-note").split()[0] or 0) if page.text("#omitted-note") else 0
    assert 0 <= left < omitted
    assert page.counts() == {"failed": 300}  # the run's counts, not the page's
    assert page.visible("next-page") == (left > 0)
    assert shown_first + (omitted - left) <= 300


async def test_a_collection_error_shows_the_module_and_its_message(page: ReportPage, tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        {"test_fine.py": "def test_fine():\n    pass\n", "test_broken.py": "import no_such_module_for_the_view\n"},
    )
    async with serve(root) as client:
        result = await show(page, client, "execute_tests", {})
    assert result.is_error
    assert page.text("#headline") == "pytest was interrupted: 1 error during collection"
    assert page.texts("#collection-errors .title") == ["test_broken.py"]
    assert "No module named 'no_such_module_for_the_view'" in page.text("#collection-errors .where")
    assert "-m pytest" in page.text("#command")
    page.screenshot("collection-error")


async def test_a_detached_run_is_followed_live_until_it_ends_and_then_polling_stops(
    page: ReportPage, tmp_path: Path
) -> None:
    async with serve(write_project(tmp_path / "p", DETACHED), detach_after=0.5) as client:
        result = await show(page, client, "execute_tests", {})
        running = result.structured_content or {}
        assert running["status"] == "running"
        assert page.text("#headline").startswith("Running: ")
        await page.answer_calls(client, until=lambda: "exit code" in page.text("#headline"))
        calls = page.host("calls")
        await anyio.sleep(1.5)  # a view that kept polling would have asked again by now
        assert page.host("calls") == calls
    assert page.text("#headline").startswith("1 failed, 1 passed in ")
    assert page.counts() == {"failed": 1, "passed": 1}
    assert len(calls) >= 2
    # Only get_test_run, only for this answer's run, only with arguments built from it.
    assert {call["params"]["name"] for call in calls} == {"get_test_run"}
    assert {call["params"]["arguments"]["run_id"] for call in calls} == {running["run_id"]}
    assert all(set(call["params"]["arguments"]) <= {"run_id", "wait"} for call in calls)
    page.screenshot("detached-run")


async def test_no_hostile_report_executes_script_and_each_shows_as_text(page: ReportPage, tmp_path: Path) -> None:
    root = write_hostile_project(tmp_path / "p")
    async with serve(root) as client:
        await show(page, client, "execute_tests", {"show_capture": True})
        page.open_groups()
        page.screenshot("hostile")
        seen = page.in_view("return document.body.textContent")
        runs = page.in_view(
            "return [window.__pwned, document.scripts.length,"
            " document.querySelectorAll('img, a, iframe, object, embed').length, document.styleSheets.length]"
        )
        assert page.host("other") == []
        assert runs == [None, 1, 0, 1]
        for payload in PAYLOADS.values():
            assert f"test_message[{payload}]" in seen
            assert f"stdout {payload}" in seen
            assert f"stderr {payload}" in seen
        assert page.counts() == {"failed": 4, "errors": 4, "skipped": 4}
        # A collection error carrying every payload, through discover_tests and execute_tests.
        write_hostile_project(root, collection_error=True)
        for tool in ("discover_tests", "execute_tests"):
            await show(page, client, tool, {})
            page.open_groups()
            assert page.host("other") == []
            assert page.in_view("return window.__pwned") is None
            assert all(payload in page.text("#collection-errors") for payload in PAYLOADS.values())


def test_the_harness_would_see_a_payload_that_ran(page: ReportPage) -> None:
    """The detector works: the same payloads, written as HTML into a frame without the view, are caught."""
    page.driver.get(HARNESS.as_uri())
    page.driver.execute_script(
        "host.load(arguments[0], 'none', {}, {})", "<body>" + "".join(PAYLOADS.values()) + "</body>"
    )
    page.wait_until(lambda: page.host("other"), "no payload ran in a frame that renders them as HTML")
    assert any("pwned" in message for message in page.host("other"))
    assert HOOK in PAYLOADS["script"]


async def test_groups_and_reasons_in_the_agreed_wire_shape_are_drawn_when_an_answer_carries_them(
    page: ReportPage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The grouping issue's answer (RunResult.groups, .reasons), written here onto a real answer until the server
    sends it: the view draws the server's groups, titles and member lists, not its own grouping of `tests`."""
    monkeypatch.setenv("PYTEST_MCP_MAX_RESPONSE_BYTES", "1000000")
    async with serve(write_project(tmp_path / "p", MANY_FAILURES)) as client:
        result = await client.call_tool("execute_tests", {})
        html = await view_html(client)
    answer = dict(result.structured_content or {})
    database = next(test for test in answer["tests"] if test["node_id"].startswith("test_many.py::test_database"))
    value = next(test for test in answer["tests"] if test["node_id"].startswith("test_many.py::test_value"))
    answer["groups"] = [
        {
            "id": "g1",
            "count": 180,
            "outcome": "failed",
            "phase": "call",
            "exception": "ConnectionError",
            "message": "database unavailable",
            "crash": "test_many.py:4",
            "title": "database unavailable in test_database",
            "representative": database,
            "members": ["test_many.py::test_database[*] (180)"],
            "compressed": True,
        },
        {
            "id": "g2",
            "count": 120,
            "outcome": "failed",
            "phase": "call",
            "exception": "AssertionError",
            "message": "assert 0 == -1",
            "crash": "test_many.py:8",
            "title": "assert n == -1 in test_value",
            "representative": value,
            "members": [test["node_id"] for test in answer["tests"] if "test_value" in test["node_id"]],
            "compressed": False,
        },
    ]
    answer["reasons"] = [{"outcome": "skipped", "reason": "needs a database", "count": 7}]
    page.show(html, "execute_tests", {}, result.model_copy(update={"structured_content": answer}))
    assert page.texts("#groups .title") == ["database unavailable in test_database", "assert n == -1 in test_value"]
    assert page.texts("#groups .times") == ["180\u00d7", "120\u00d7"]
    assert page.text("#failure-count") == "300 reports in 2 groups"
    page.open_groups()
    members = page.texts("#groups .members")
    assert members[0] == "test_many.py::test_database[*] (180)"
    assert members[1].splitlines() == [f"test_many.py::test_value[{n}]" for n in range(120)]
    assert page.texts("#reason-rows tr td:last-child") == ["needs a database"]
    page.in_view(
        "const f = document.getElementById('filter'); f.value = 'test_value[7]'; f.dispatchEvent(new Event('input'))"
    )
    assert page.texts("#groups .title") == ["assert n == -1 in test_value"]
