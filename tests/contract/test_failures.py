"""Every way a run can fail: the fake's scripted failure is the real failure, code, message and data.

On the real side the fixture project fails for real (`failures/`); on the fake side the test
scripts the same failure with `fail_with`, as an agent developer would.
"""

from __future__ import annotations

import pytest

from tests.contract.conftest import Side, normalized, terminal_lines
from tests.contract.script import CONTRACT_ROOT, OUTCOMES, SELECTION

pytestmark = pytest.mark.anyio

BASE_DATA = {"reason", "exit_code", "command", "duration", "stdout_tail", "stderr_tail"}


def last_line(text: str) -> str:
    return normalized(text.rstrip().splitlines()[-1])


async def test_a_collection_error_interrupts_the_run_and_names_the_module(side: Side) -> None:
    module = "failures/test_collection_error.py"
    exception = "ModuleNotFoundError: No module named 'module_that_does_not_exist_contract'"
    if side.fake:
        side.fake.fail_with("collection_error", exception, node_id=module)

    error = await side.error("execute_tests", {"node_ids": [module]})

    assert error.code == -32000
    assert error.message == f"pytest was interrupted: 1 error during collection\n- {module}: {exception}"
    data = error.data
    assert set(data) == BASE_DATA | {"collection_errors"}
    assert (data["reason"], data["exit_code"]) == ("interrupted", 2)
    assert [(e["node_id"], e["message"]) for e in data["collection_errors"]] == [(module, exception)]
    assert data["collection_errors"][0]["traceback"].startswith(
        f"ImportError while importing test module '{CONTRACT_ROOT}/{module}'.\n"
        "Hint: make sure your test modules/packages have valid Python names.\nTraceback:\n"
    )
    assert data["collection_errors"][0]["traceback"].endswith(f"\nE   {exception}")
    assert terminal_lines(data["stdout_tail"], start="= short test summary info") == [
        "= short test summary info",
        f"ERROR {module}",
        "! Interrupted: 1 error during collection",
        "1 error in Ns",
    ]
    assert data["stderr_tail"] == ""
    assert data["command"][1:] == ["-m", "pytest", "--color=no", "-q", "--", module]


async def test_a_collection_error_is_part_of_a_discovery_answer(side: Side) -> None:
    module = "failures/test_collection_error.py"
    exception = "ModuleNotFoundError: No module named 'module_that_does_not_exist_contract'"
    if side.fake:
        side.fake.fail_with("collection_error", exception, node_id=module)

    result = await side.result("discover_tests", {"path": module})

    assert (result["exit_code"], result["total"], result["tests"]) == (2, 0, [])
    assert [(e["node_id"], e["message"]) for e in result["collection_errors"]] == [(module, exception)]


async def test_a_crash_names_the_signal_and_the_test_that_was_running(side: Side) -> None:
    if side.fake:
        side.fake.script("failures/test_crash.py::test_segfaults", line=4).fail_with("crash")

    error = await side.error("execute_tests", {"node_ids": ["failures/test_crash.py"]})

    assert error.code == -32000
    assert error.message == (
        "pytest was killed by SIGSEGV while running test_segfaults (test_crash.py:5); no results are available"
    )
    data = error.data
    assert set(data) == BASE_DATA | {"signal"}
    assert (data["reason"], data["exit_code"], data["signal"]) == ("crashed", None, "SIGSEGV")
    assert data["stderr_tail"].startswith("Fatal Python error: Segmentation fault\n\nCurrent thread 0x")
    assert f'File "{CONTRACT_ROOT}/failures/test_crash.py", line 5 in test_segfaults\n' in data["stderr_tail"]
    assert data["stdout_tail"] == ""  # -q prints nothing before the first test's letter


async def test_a_timeout_names_the_limit_and_keeps_what_pytest_printed(side: Side) -> None:
    if side.fake:
        side.fake.script("failures/test_hang.py::test_hangs", line=4).fail_with("timeout")

    # At verbosity 0 pytest names the file before its first test starts; -q would print nothing yet.
    # 4 s: time for pytest to start and print the file's name on a loaded machine (1 s was not, at load 12).
    arguments = {"node_ids": ["failures/test_hang.py"], "timeout": 4, "verbosity": 0}
    error = await side.error("execute_tests", arguments)

    assert error.code == -32000
    assert error.message == (
        "pytest did not finish within 4s and was stopped with all its child processes while running "
        "test_hangs (test_hang.py:5); run fewer tests or pass a larger timeout"
    )
    data = error.data
    assert set(data) == BASE_DATA
    assert (data["reason"], data["exit_code"]) == ("timeout", None)
    assert 4 <= data["duration"] < 15
    assert data["stdout_tail"].endswith("collected 1 item\n\nfailures/test_hang.py ")
    # faulthandler's dump of every thread, which the runner asks for before it kills the run.
    assert data["stderr_tail"].startswith("Current thread 0x")
    assert f'File "{CONTRACT_ROOT}/failures/test_hang.py", line 5 in test_hangs\n' in data["stderr_tail"]


async def test_an_internal_error_quotes_pytests_last_internalerror_line(side: Side) -> None:
    if side.fake:
        side.fake.fail_with("internal_error", "RuntimeError: boom in a hook")

    error = await side.error("execute_tests", {"node_ids": ["failures/internal"]})

    assert error.code == -32000
    assert error.message == "pytest hit an internal error: RuntimeError: boom in a hook"
    data = error.data
    assert set(data) == BASE_DATA
    assert (data["reason"], data["exit_code"], data["stderr_tail"]) == ("internal_error", 3, "")
    lines = [normalized(line) for line in data["stdout_tail"].rstrip().splitlines()]
    assert lines[-3:] == ["INTERNALERROR> RuntimeError: boom in a hook", "", "no tests ran in Ns"]
    assert lines[0].startswith(("INTERNALERROR> Traceback", "[... "))


@pytest.mark.parametrize("how", ["derived", "scripted"])
async def test_a_missing_file_is_pytests_usage_error(side: Side, how: str) -> None:
    if side.fake and how == "scripted":
        side.fake.fail_with("usage_error", "ERROR: file or directory not found: tests/test_missing.py")

    error = await side.error("execute_tests", {"node_ids": ["tests/test_missing.py"]})

    assert error.code == -32000
    assert error.message == "pytest reported a usage error: ERROR: file or directory not found: tests/test_missing.py"
    data = error.data
    assert set(data) == BASE_DATA
    assert (data["reason"], data["exit_code"]) == ("usage_error", 4)
    assert data["stderr_tail"] == "ERROR: file or directory not found: tests/test_missing.py\n\n"
    assert terminal_lines(data["stdout_tail"], start="") == ["", "no tests ran in Ns"]


async def test_an_unknown_test_in_a_known_file_is_not_found_with_its_absolute_path(side: Side) -> None:
    error = await side.error(
        "execute_tests",
        {"node_ids": ["tests/test_outcomes.py::test_nope", "tests/test_selection.py::TestCart::test_nope"]},
    )

    assert error.message == (
        f"pytest reported a usage error: ERROR: not found: {CONTRACT_ROOT}/tests/test_selection.py::TestCart::test_nope"
    )
    assert error.data["stderr_tail"] == (
        f"ERROR: not found: {CONTRACT_ROOT}/tests/test_outcomes.py::test_nope\n"
        "(no match in any of [<Module test_outcomes.py>])\n\n"
        f"ERROR: not found: {CONTRACT_ROOT}/tests/test_selection.py::TestCart::test_nope\n"
        "(no match in any of [<Class TestCart>])\n\n"
    )


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        ({"keywords": "a,b"}, "Wrong expression passed to '-k': a,b: at column 2: expected end of input; got ,"),
        (
            {"keywords": "(slow"},
            "Wrong expression passed to '-k': (slow: at column 6: expected right parenthesis; got end of input",
        ),
        ({"keywords": "slow(x=1)"}, "Keyword expressions do not support call parameters."),
        (
            {"markers": "slow and"},
            (
                "Wrong expression passed to '-m': slow and: at column 9: "
                "expected not OR left parenthesis OR identifier; got end of input"
            ),
        ),
        ({"markers": "db$"}, "Wrong expression passed to '-m': db$: at column 3: unexpected character \"$\""),
        (
            {"markers": "slow(reason='x)"},
            "Wrong expression passed to '-m': slow(reason='x): at column 13: closing quote \"'\" is missing",
        ),
    ],
    ids=["k-comma", "k-parenthesis", "k-call", "m-dangling-and", "m-bad-character", "m-open-quote"],
)
async def test_a_malformed_expression_is_pytests_usage_error_with_its_column(
    side: Side, arguments: dict[str, str], line: str
) -> None:
    error = await side.error("execute_tests", arguments)

    assert error.message == f"pytest reported a usage error: ERROR: {line}"
    assert error.data["stderr_tail"] == f"ERROR: {line}\n\n"
    assert terminal_lines(error.data["stdout_tail"], start="") == ["", "no tests ran in Ns"]
    assert last_line(error.data["stdout_tail"]) == "no tests ran in Ns"


EDGE = "edge/test_edge.py"


@pytest.mark.parametrize(
    ("node_id", "line"),
    [
        (f"{OUTCOMES}::", f"not found: {CONTRACT_ROOT}/{OUTCOMES}::\n(no match in any of [<Module test_outcomes.py>])"),
        (f"{OUTCOMES}::test_passes::x", f"found no collectors for {CONTRACT_ROOT}/{OUTCOMES}::test_passes::x"),
        (
            f"{SELECTION}::TestCart::test_total::x",
            f"found no collectors for {CONTRACT_ROOT}/{SELECTION}::TestCart::test_total::x",
        ),
        (
            f"{EDGE}::test_edge[x",
            f"not found: {CONTRACT_ROOT}/{EDGE}::test_edge\n(no match in any of [<Module test_edge.py>])",
        ),
        (
            f"./{SELECTION}::TestCart::nope",
            f"not found: {CONTRACT_ROOT}/{SELECTION}::TestCart::nope\n(no match in any of [<Class TestCart>])",
        ),
        ("tests::test_passes", "directory argument cannot contain :: selection parts: tests::test_passes"),
        ("tests/test_outcomes.py[1]", "path cannot contain [] parametrization: tests/test_outcomes.py[1]"),
    ],
    ids=[
        "an-empty-name",
        "a-name-below-a-test",
        "a-name-below-a-method",
        "half-a-parameter-id",
        "a-dot-relative-path",
        "parts-after-a-directory",
        "a-parameter-id-on-a-path",
    ],
)
async def test_node_ids_pytest_cannot_match_are_its_usage_errors_word_for_word(
    side: Side, node_id: str, line: str
) -> None:
    if side.fake:
        side.fake.script(f"{EDGE}::test_edge[x::y]", line=7).script(f"{EDGE}::test_edge[z]", line=7)

    error = await side.error("execute_tests", {"node_ids": [node_id]})

    assert error.data["stderr_tail"] == f"ERROR: {line}\n\n"
    assert (error.reason, error.data["exit_code"]) == ("usage_error", 4)


async def test_a_parameter_id_holding_double_colons_is_matched_whole(side: Side) -> None:
    if side.fake:
        side.fake.script(f"{EDGE}::test_edge[x::y]", line=7).script(f"{EDGE}::test_edge[z]", line=7)

    one = await side.result("execute_tests", {"node_ids": [f"{EDGE}::test_edge[x::y]"], "detail": "all"})
    both = await side.result("execute_tests", {"node_ids": [f"{EDGE}::test_edge"], "detail": "all"})

    assert [t["node_id"] for t in one["tests"]] == [f"{EDGE}::test_edge[x::y]"]
    assert [t["node_id"] for t in both["tests"]] == [f"{EDGE}::test_edge[x::y]", f"{EDGE}::test_edge[z]"]
