"""The report view in a real browser, fed answers from the real server and the real pytest.

Each case loads the `ui://` resource as the server serves it (resources/read) into the harness
host's sandboxed iframe, hands it a real tools/call answer, and asserts on the DOM. The view's
own tools/call requests are answered by the same server.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult

from pytest_mcp.adapters.mcp.report_view import VIEW_URI
from pytest_mcp.domain.models import AffectedRun
from pytest_mcp.testing import FakeTestRunner, connect
from tests.answers import signature_row
from tests.browser.conftest import HARNESS, ReportPage
from tests.contract.conftest import project_with_a_regression
from tests.security.hostile_reports import HELPER, HOOK, PAYLOADS, write_hostile_project

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


REPOSITORY = Path(__file__).resolve().parents[2]


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

# 180 failures of one cause, and 120 of a cause each (each assertion on its own line): 121 groups.
MANY_FAILURES = {
    "test_many.py": "import pytest\n\n\n@pytest.mark.parametrize('n', range(180))\ndef test_database(n):\n"
    "    raise ConnectionError('database unavailable')\n"
    + "".join(f"\n\ndef test_value_{n}():\n    assert {n} == -1\n" for n in range(120))
}

# Two causes, 180 and 120 failures, and a skip.
TWO_CAUSES = {
    "test_many.py": """
        import pytest

        @pytest.mark.parametrize("n", range(180))
        def test_database(n):
            raise ConnectionError("database unavailable")

        @pytest.mark.parametrize("n", range(120))
        def test_value(n):
            assert n == -1

        @pytest.mark.skip(reason="needs a database")
        def test_skipped():
            pass
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
        result = await show(page, client, "execute_tests", {"show_capture": True})
    assert page.counts() == {"failed": 3, "passed": 2, "skipped": 1, "xfailed": 1}
    assert page.text("#failure-count") == "3 reports in 3 groups"
    groups = (result.structured_content or {})["groups"]
    assert page.texts("#groups .title") == [title_of(group) for group in groups]  # the server's groups
    assert {signature_row(group)[3] for group in groups} == {"AssertionError", "KeyError"}
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
    groups = structured["groups"]
    assert (len(groups), sum(group["count"] for group in groups)) == (121, 300)
    assert page.counts() == {"failed": 300}
    assert page.text("#failure-count") == "300 reports in 121 groups"
    assert page.in_view("return document.querySelectorAll('#groups > li').length") == 40
    assert page.in_view("return [...document.querySelectorAll('#groups details')].every((d) => !d.open)")
    assert page.text("#groups .title") == title_of(groups[0])  # the largest first
    assert page.text("#groups .times") == "180\u00d7"
    assert page.text("#more-groups") == "Show 40 more of 81"
    page.in_view("document.getElementById('more-groups').click()")
    assert page.in_view("return document.querySelectorAll('#groups > li').length") == 80
    page.in_view(
        "const f = document.getElementById('filter'); f.value = 'test_value_17'; f.dispatchEvent(new Event('input'))"
    )
    assert page.text("#groups-hidden") == "1 of 121 groups match"
    page.screenshot("many-failures")

    # Within the default size budget the answer holds some groups; the view says what it left out, and
    # fetches the reports from the stored run through get_test_run, without running the tests again.
    monkeypatch.delenv("PYTEST_MCP_MAX_RESPONSE_BYTES")
    async with serve(root) as client:
        result = await show(page, client, "execute_tests", {})
        first = result.structured_content or {}
        assert first.get("omitted_groups", 0) > 0
        assert "more failure groups were left out of this answer" in page.text("#omitted-note")
        assert page.visible("next-page")
        page.in_view("document.getElementById('next-page').click()")
        note = page.text("#omitted-note")
        await page.answer_calls(client, until=lambda: page.text("#omitted-note") != note, timeout=30)
    left = int(page.text("#omitted-note").split()[0])  # "N more reports were left out ..."
    assert 0 < left < 300
    assert page.visible("failures")  # the page's reports, grouped by the view (a page carries no groups)
    assert page.in_view("return document.querySelectorAll('#groups > li').length") > 0
    assert page.counts() == {"failed": 300}  # the run's counts, not the page's
    assert page.visible("next-page")


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


async def test_no_hostile_report_executes_script_and_each_shows_as_text(
    page: ReportPage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_hostile_project(tmp_path / "p")
    monkeypatch.setenv("PYTEST_MCP_LOCALIZE", "10")  # a second pass with time to name the culprit
    async with serve(root) as client:
        result = await show(page, client, "execute_tests", {"show_capture": True})
        page.open_groups()
        page.screenshot("hostile")
        seen = page.in_view("return document.body.textContent")
        runs = page.in_view(
            "return [window.__pwned, document.scripts.length,"
            " document.querySelectorAll('img, a, iframe, object, embed').length, document.styleSheets.length]"
        )
        assert page.host("other") == []
        assert runs == [None, 1, 0, 1]
        # Each group shows its representative's captured output, as text.
        representatives = [group["representative"] for group in (result.structured_content or {})["groups"]]
        for test in representatives:
            for stream in ("stdout", "stderr"):
                if test.get(stream):
                    assert test[stream].strip().splitlines()[-1] in seen
        assert page.counts() == {"failed": 12, "errors": 4, "skipped": 4}
        # The culprit's file and its symptoms' messages carry payloads too, and show as text.
        answer = result.structured_content or {}
        assert [culprit["file"] for culprit in answer["culprits"]] == [HELPER]
        assert page.texts("#culprit-list .function") == [f"{HELPER}::price"]
        symptoms = answer["groups"][0]["symptoms"]
        assert len(symptoms) == 4  # eight signatures at two sites: four payload messages, each at both sites
        assert {symptom["sites"] for symptom in symptoms} == {2}
        # The view names each symptom's exception before its message, whose head leaves it out.
        shown = [f"{symptom['exception']}: {symptom['message']}" for symptom in symptoms]
        assert page.texts("#groups .symptom .message") == shown
        # A group lists its first members and get_test_run pages the others (issue 41): every payload's
        # node id shows as text, in the answer's view or in its group's page of member ids.
        for group in answer["groups"]:
            if group.get("omitted_members"):
                await show(page, client, "get_test_run", {"run_id": answer["run_id"], "group": group["id"]})
                assert page.host("other") == []
                assert page.in_view("return window.__pwned") is None
                seen += page.text("#member-ids")
        for payload in PAYLOADS.values():
            assert f"test_message[{payload}]" in seen
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


async def test_the_servers_groups_and_reasons_are_drawn_with_their_titles_and_members(
    page: ReportPage, tmp_path: Path
) -> None:
    """The view draws the server's failure groups (ADR 0014), titles and member lists, and its skip reasons."""
    async with serve(write_project(tmp_path / "p", TWO_CAUSES)) as client:
        result = await show(page, client, "execute_tests", {})
    answer = result.structured_content or {}
    groups = answer["groups"]
    assert [group["count"] for group in groups] == [180, 120]
    assert page.texts("#groups .title") == [title_of(group) for group in groups]
    assert page.texts("#groups .times") == ["180\u00d7", "120\u00d7"]
    assert page.text("#failure-count") == "300 reports in 2 groups"
    page.open_groups()
    assert [members.splitlines() for members in page.texts("#groups .members")] == [
        signature_row(group)[-1] for group in groups
    ]
    assert page.texts("#reason-rows tr td:last-child") == ["needs a database"]
    page.in_view(
        "const f = document.getElementById('filter'); f.value = 'test_value'; f.dispatchEvent(new Event('input'))"
    )
    assert page.texts("#groups .title") == [title_of(groups[1])]


LONG_MEMBERS = {
    "test_long.py": "def check(i):\n    assert i < 0\n\n\n"
    + "".join(
        f"def test_a_member_whose_name_runs_long_enough_that_two_do_not_fit_in_a_line_{i}():\n    check({i})\n\n\n"
        for i in range(5)
    )
}


async def test_a_group_whose_members_are_paged_says_how_many_more_there_are(page: ReportPage, tmp_path: Path) -> None:
    """A kept run's answer lists a group's first members (issue 41): the view says how many it left to paging."""
    async with serve(write_project(tmp_path / "p", LONG_MEMBERS)) as client:
        result = await show(page, client, "execute_tests", {})
    (group,) = (result.structured_content or {})["groups"]
    assert group["omitted_members"] == 4
    page.open_groups()
    (members,) = page.texts("#groups .members")
    assert members.splitlines() == [
        *group["members"],
        "\u2026 and 4 more: get_test_run with this group's id lists them",
    ]


async def test_culprits_lead_and_each_group_shows_its_cause_symptoms_and_labels(
    page: ReportPage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests/fixtures/culprits, a regression since git's HEAD: one cause in two ways, a raising helper, a flaky test."""
    root = project_with_a_regression(tmp_path)
    monkeypatch.setenv("PYTEST_MCP_LOCALIZE", "10")
    culprits = (
        "return [...document.querySelectorAll('#culprit-list li')].map((li) => [li.querySelector('.rank').textContent,"
        " li.querySelector('.function').textContent, li.querySelector('.lines').textContent,"
        " Boolean(li.querySelector('.label.changed')), li.querySelector('.culprit-evidence').textContent])"
    )
    labels = (
        "return [...document.querySelectorAll('#groups > li')]"
        ".map((li) => [...li.querySelectorAll('.label')].map((l) => [l.classList[1], l.textContent]))"
    )
    async with serve(root) as client:
        await show(page, client, "execute_tests", {})
        assert page.in_view(culprits) == [
            [
                "likely cause",
                "shop/price.py::gross_price",
                "lines 10-11",
                True,
                "run by 4 of 5 failing tests and 0 % of the 4 passing ones; score 0.89",
            ],
            [
                "also likely",
                "shop/stock.py::reserve",
                "lines 4-7",
                False,
                "run by 1 of 5 failing tests and 25 % of the 4 passing ones; score 0.32",
            ],
        ]
        assert page.text("#localization").startswith("10 tests repeated in ")
        # The server's first run of the project: nothing is known of before, but a repeat that passed.
        assert page.in_view(labels) == [
            [["unknown", "no earlier run"]],
            [["flaky", "is flaky"]],
            [["unknown", "no earlier run"]],
        ]
        assert page.texts("#groups .sub") == [
            "2 sites: 4 at 2 sites from tests/test_cart.py:8",
            "likely cause: shop/stock.py::reserve (lines 4-7)",
        ]
        page.in_view("document.querySelector('#groups details').open = true")
        rows = page.in_view(
            "return [...document.querySelectorAll('#groups .symptom')]"
            ".map((r) => [...r.cells].map((c) => c.textContent))"
        )
        assert rows == [["4", "tests/test_cart.py:8 and 1 more", "AssertionError: assert <n> == <n>"]]
        assert page.text("#groups .culprit-line") == (
            "shop/price.py::gross_price (lines 10-11): run by 4 of 5 failing tests and 0 % of the 4 passing ones"
        )
        page.screenshot("culprits", above="#reproduce")

        # The same call again: the failures were already failing, the flaky test passed, and gross_price's
        # tests have not passed since its edit: it is still the changed one.
        await show(page, client, "execute_tests", {})
        assert page.in_view(labels) == [
            [["preexisting", "were already failing"]],
            [["preexisting", "was already failing"]],
        ]
        assert page.in_view("return document.querySelectorAll('#culprit-list .label.changed').length") == 1
        page.screenshot("culprits-again", above="#reproduce")


async def test_a_test_that_fails_while_nothing_it_runs_changed_is_labelled_suspect_flaky(
    page: ReportPage, tmp_path: Path
) -> None:
    root = write_project(
        tmp_path / "project",
        {
            "test_flag.py": """
                import pathlib

                def test_flag():
                    assert pathlib.Path(__file__).with_name("flag.txt").read_text() == "on"

                def test_other():
                    assert True
            """,
            "flag.txt": "on",
        },
    )
    labels = "return [...document.querySelectorAll('#groups > li .label')].map((l) => [l.classList[1], l.textContent])"
    # On Python 3.12+ the run records itself: a second pass (3.11) cut short by a busy machine records
    # nothing of the failing test, and nothing is then claimed of it ("newly fails").
    python = subprocess.run(
        ["bash", str(REPOSITORY / "scripts" / "demo-python")], capture_output=True, text=True, check=True, timeout=600
    ).stdout.strip()
    async with connect(root=root, python=python) as client:
        await client.call_tool("execute_tests", {})
        (root / "flag.txt").write_text("off")  # data, not code: nothing the test runs changed
        await show(page, client, "execute_tests", {})

    assert page.in_view(labels) == [["suspect_flaky", "is suspect flaky (passed last run; nothing it runs changed)"]]


async def test_no_culprit_named_says_why(page: ReportPage, tmp_path: Path) -> None:
    runner = FakeTestRunner(root=tmp_path).script("tests/test_a.py::test_x", "failed", message="assert 1 == 2")
    async with connect(runner) as client:
        result = await show(page, client, "execute_tests", {})
    reason = (result.structured_content or {})["localization"]["reason"]
    assert page.text("#localization") == f"No likely cause named: {reason}"
    assert page.in_view("return document.getElementById('culprit-list').hidden")


async def test_an_affected_run_says_what_ran_and_what_did_not(page: ReportPage, tmp_path: Path) -> None:
    """pytest-testmon is not in the development environment: these answers come from the test double."""
    runner = FakeTestRunner(root=tmp_path).install("pytest-testmon")
    for name in ("test_total", "test_discount", "test_empty"):
        runner.script(f"tests/test_cart.py::{name}")
    runner.script("tests/test_tax.py::test_vat", "failed", message="assert 19 == 20")
    async with connect(runner) as client:
        lines = []
        for edit in (
            lambda: None,
            lambda: runner.edit("tests/test_cart.py::test_total"),
            lambda: runner.edit(files=["data/limits.json"]),
        ):
            edit()
            result = await show(page, client, "execute_tests", {"affected": True})
            affected = AffectedRun.model_validate((result.structured_content or {})["affected"])
            assert page.text("#affected") == affected.line()
            lines.append(affected.line())
            if len(lines) == 2:
                page.screenshot("affected", above="#reproduce")
    assert lines[0].startswith("first affected run, no data yet")
    assert lines[1].startswith("2 affected tests run; 2 unaffected not run")
    assert lines[2].startswith(
        "1 file pytest-testmon cannot see changed since the last affected run (data/limits.json)"
    )


async def test_a_groups_member_ids_are_paged_through_get_test_run(page: ReportPage, tmp_path: Path) -> None:
    runner = FakeTestRunner(root=tmp_path)
    for n in range(300):
        runner.script(f"tests/test_prices_of_every_product.py::test_gross_price[product-{n:04}]", "failed", line=3)
    async with connect(runner) as client:
        run = (await client.call_tool("execute_tests", {})).structured_content or {}
        group = run["groups"][0]["id"]
        await show(page, client, "get_test_run", {"run_id": run["run_id"], "group": group})
        first = page.text("#members-title")
        assert first.startswith(f"Group {group}: member ids 1\u2013")
        assert first.endswith(" of 300")
        shown = page.text("#member-ids").splitlines()
        assert shown[0] == "tests/test_prices_of_every_product.py::test_gross_price[product-0000]"
        assert page.visible("next-members")
        page.screenshot("group-members")
        page.in_view("document.getElementById('next-members').click()")
        await page.answer_calls(client, until=lambda: page.text("#members-title") != first, timeout=30)
    assert page.text("#members-title") == f"Group {group}: member ids {len(shown) + 1}\u2013300 of 300"
    assert page.text("#member-ids").splitlines()[-1].endswith("[product-0299]")
    assert not page.visible("next-members") or page.in_view("return document.getElementById('next-members').hidden")
    [call] = page.host("calls")
    assert call["params"] == {
        "name": "get_test_run",
        "arguments": {"run_id": run["run_id"], "group": group, "offset": len(shown)},
    }


def title_of(group: dict[str, Any]) -> str:
    """A group's title as the view shows it: the server's, or, for a group of one (ADR 0020), its test."""
    if group.get("title"):
        return str(group["title"])
    verb = {"error": "errors", "xpassed": "passes unexpectedly (XPASS)"}.get(
        group["representative"]["outcome"], "fails"
    )
    return f"1 test {verb}: {group['representative']['node_id']}"


async def test_a_cause_with_many_ways_to_fail_counts_the_rarer_ones(page: ReportPage, tmp_path: Path) -> None:
    """A cause lists its six most common ways of failing; the view counts the rest, as the answer does."""
    runner = FakeTestRunner(root=tmp_path)
    parse = "shop/parse.py::parse_price"
    for way in range(8):
        for n in range(8 - way):
            runner.script(
                f"tests/test_w{way}.py::test_{n}",
                "failed",
                message=f"ValueError: bad field {'abcdefgh'[way]}",
                crash=f"shop/h{way}.py:3",
                runs=[parse],
            )
    runner.script("tests/test_ok.py::test_ok", runs=["shop/other.py::helper"])
    runner.define(parse, "3-9").change(parse)
    async with connect(runner) as client:
        result = await show(page, client, "execute_tests", {})
    (group,) = (result.structured_content or {})["groups"]
    assert (len(group["symptoms"]), group["omitted_symptoms"]) == (6, 2)
    page.open_groups()
    rows = page.in_view(
        "return [...document.querySelectorAll('#groups .symptom')].map((r) => [...r.cells].map((c) => c.textContent))"
    )
    assert [row[0] for row in rows] == ["8", "7", "6", "5", "4", "3", "3"]  # the last: two ways, 2 and 1 tests
    assert rows[-1][1:] == ["\u2026", "2 rarer ways to fail, in the members"]
    assert "Symptoms: 8 ways to fail, by where" in page.texts("#groups h3")


async def test_a_culprit_read_by_its_most_telling_line_names_the_line(page: ReportPage, tmp_path: Path) -> None:
    """On Python 3.12 a run records the lines its tests run: `compare`, which every test enters, is named by
    the line only the failing ones ran, and the view says which (the fake plays a run that records lines)."""
    compare = "shop/version.py::compare"
    runner = FakeTestRunner()
    for case in range(3):
        runner.script(f"tests/test_v.py::test_compare[{case}]", runs=[f"{compare}:7", f"{compare}:8"])
    for case in range(2):
        runner.script(
            f"tests/test_v.py::test_pre[{case}]",
            "failed",
            message="assert 1 == -1",
            runs=[f"{compare}:7", f"{compare}:12"],
        )
    runner.define(compare, "6-12")
    async with connect(runner, root=tmp_path) as client:
        await show(page, client, "execute_tests", {})
    assert page.texts("#culprit-list .function") == [compare]
    assert page.texts("#culprit-list .lines") == ["lines 6-12, line 12"]
    assert page.texts("#culprit-list .culprit-evidence") == [
        "run by both failing tests and 0 % of the 3 passing ones; score 1.00"
    ]
    page.screenshot("culprit-line")
