"""FakeTestRunner as a product: building scripts, scripted endings, what it records, and its limits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_mcp.domain.runs import CollectSpec, RunSpec
from pytest_mcp.testing import RECORDING_FORMAT, FakeTestRunner, ScriptedTest, ScriptError

pytestmark = pytest.mark.anyio

A = "tests/test_a.py::test_one"
B = "tests/test_a.py::TestB::test_two"
C = "tests/sub/test_c.py::test_three[x::y]"


def runner() -> FakeTestRunner:
    return FakeTestRunner.from_dict(
        {A: "passed", B: {"outcome": "failed", "message": "assert 1 == 2", "line": 7}, C: {"markers": ["slow"]}}
    )


def test_from_dict_takes_an_outcome_or_the_fields_of_script() -> None:
    built = runner()

    assert [(t.node_id, t.outcome, t.phase) for t in built.tests] == [
        (A, "passed", "call"),
        (B, "failed", "call"),
        (C, "passed", "call"),
    ]
    assert built.tests[1].line == 7


def test_a_bad_script_names_every_bad_node_id_and_field() -> None:
    with pytest.raises(ScriptError) as caught:
        FakeTestRunner.from_dict(
            {A: "flaky", B: {"outcome": "failed", "colour": "red"}, C: {"outcome": "failed", "phase": "setup"}}
        )

    message = str(caught.value)
    assert f"[{A!r}].outcome: input should be 'passed', 'failed', 'skipped', 'xfailed', 'xpassed' or 'error'" in message
    assert "(got 'flaky')" in message
    assert f"[{B!r}].colour: unknown field; the fields are node_id, outcome" in message
    assert f"[{C!r}]: phase 'setup' is impossible for outcome 'failed'" in message


def test_script_refuses_an_impossible_value_naming_the_field() -> None:
    with pytest.raises(ScriptError, match=r"invalid test 'tests/x.py::t': duration: .*greater than or equal to 0"):
        FakeTestRunner().script("tests/x.py::t", duration=-1)


def test_script_replaces_a_test_in_place_so_a_fix_keeps_the_order() -> None:
    built = runner().script(A, "failed")

    assert [t.node_id for t in built.tests] == [A, B, C]
    assert built.tests[0].outcome == "failed"


def test_keywords_include_directories_module_classes_parameters_and_markers() -> None:
    assert ScriptedTest(node_id=C, markers=("slow",)).keywords() == {
        "tests",
        "sub",
        "test_c.py",
        "test_three[x::y]",
        "slow",
    }
    assert ScriptedTest(node_id=B).keywords() == {"tests", "test_a.py", "TestB", "test_two"}


async def test_calls_record_every_spec_in_order() -> None:
    built = runner()
    run = RunSpec(node_ids=(A,), keywords="one", maxfail=2, timeout=9)
    collect = CollectSpec(path="tests", markers="slow")

    await built.run(run)
    await built.collect(collect)

    assert built.calls == [run, collect]


async def test_failures_queue_and_on_keeps_a_run_failure_past_a_discovery() -> None:
    built = runner().fail_with("timeout", on="run").fail_with("usage_error", "ERROR: nope")

    collected = await built.collect(CollectSpec())
    timed_out = await built.run(RunSpec())
    refused = await built.run(RunSpec())
    normal = await built.run(RunSpec())

    assert collected.termination.exit_code == 4
    assert "ERROR: nope" in collected.stderr
    assert timed_out.termination.kind == "timed_out"
    assert refused.termination.kind == "exited"
    assert normal.termination.exit_code == 1


async def test_fail_with_refuses_an_unknown_kind() -> None:
    with pytest.raises(ScriptError, match="kind: 'segfault' is not one of timeout, crash"):
        FakeTestRunner().fail_with("segfault")  # type: ignore[arg-type]


async def test_a_timeout_keeps_the_reports_of_tests_that_finished_before_the_hanging_one() -> None:
    built = runner().fail_with("timeout", node_id=C)

    report = await built.run(RunSpec(timeout=7, include_passed=True))
    plain = await runner().fail_with("timeout", node_id=C).run(RunSpec(timeout=7, verbosity=0))

    assert report.termination.kind == "timed_out"
    assert report.duration == 7
    assert [t.node_id for t in report.tests] == [A, B]
    assert report.stdout == ".F"  # -q: a letter per finished test
    assert plain.stdout.endswith("\ntests/sub/test_c.py ")  # verbosity 0 names the file it is in


async def test_a_kill_by_a_signal_faulthandler_does_not_handle_leaves_no_dump() -> None:
    report = await runner().fail_with("crash", signal="SIGKILL").run(RunSpec())

    assert (report.termination.kind, report.termination.signal, report.stderr) == ("signalled", "SIGKILL", "")


async def test_a_crash_names_the_line_it_is_told() -> None:
    report = await runner().fail_with("crash", node_id=B, line=42).run(RunSpec())

    assert 'test_a.py", line 42 in test_two' in report.stderr


async def test_a_collection_error_during_discovery_keeps_the_tests_that_did_collect() -> None:
    built = runner().fail_with("collection_error", "NameError: name 'x' is not defined", node_id="tests/sub/test_c.py")

    report = await built.collect(CollectSpec())

    assert (report.termination.exit_code, report.finished) == (2, True)
    assert [t.node_id for t in report.tests] == [A, B]
    assert (
        report.collection_errors[0].traceback
        == "tests/sub/test_c.py:1: in <module>\n    ???\nE   NameError: name 'x' is not defined"
    )


async def test_markers_with_arguments_never_match_because_scripts_carry_none() -> None:
    report = await runner().collect(CollectSpec(markers="slow(reason='x')"))

    assert report.tests == ()
    assert report.deselected == 3


async def test_a_failing_test_without_a_traceback_gets_one_in_pytests_layout() -> None:
    report = await runner().run(RunSpec())

    assert report.tests[0].traceback == "def test_two():\nE       assert 1 == 2\n\ntests/test_a.py:7: AssertionError"


async def test_default_messages_are_pytests_words() -> None:
    built = FakeTestRunner().script("t.py::f", "failed").script("t.py::s", "skipped").script("t.py::e", "error")

    report = await built.run(RunSpec())

    assert [(t.outcome, t.message) for t in report.tests] == [
        ("failed", "assert False"),
        ("skipped", "Skipped: unconditional skip"),
        ("error", "RuntimeError: fixture failed"),
    ]


def write(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document))
    return path


def test_a_recording_round_trips(tmp_path: Path) -> None:
    built = runner()
    path = write(tmp_path / "run.json", built.to_recording())

    replayed = FakeTestRunner.from_recording(path)

    assert replayed.tests == built.tests
    assert json.loads(path.read_text())["format"] == RECORDING_FORMAT


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([], "a recording is a JSON object, not list"),
        ({"format": "junit"}, "format: expected 'pytest-mcp-recording', got 'junit'"),
        ({"format": RECORDING_FORMAT, "version": 2}, "version: this pytest-mcp reads version 1 recordings, not 2"),
        ({"format": RECORDING_FORMAT, "version": 1, "root": "/p", "tests": [], "when": 1}, "when: unknown field"),
        ({"format": RECORDING_FORMAT, "version": 1, "tests": []}, "root: must be the recorded project's root"),
        ({"format": RECORDING_FORMAT, "version": 1, "root": "/p", "tests": {}}, "tests: must be a list of tests"),
        (
            {
                "format": RECORDING_FORMAT,
                "version": 1,
                "root": "/p",
                "tests": [{"node_id": "t.py::a", "outcome": "boom"}],
            },
            "tests[0].outcome: input should be 'passed', 'failed'",
        ),
        (
            {"format": RECORDING_FORMAT, "version": 1, "root": "/p", "tests": [{"outcome": "passed"}]},
            "tests[0].node_id: field required",
        ),
    ],
    ids=["not-an-object", "format", "version", "unknown-field", "root", "tests", "outcome", "node-id"],
)
def test_a_bad_recording_is_refused_naming_the_field(tmp_path: Path, document: Any, problem: str) -> None:
    path = write(tmp_path / "run.json", document)

    with pytest.raises(ScriptError) as caught:
        FakeTestRunner.from_recording(path)

    assert str(caught.value).startswith(f"{path}: ")
    assert problem in str(caught.value)


def test_a_missing_or_broken_recording_file_says_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no recording at .*run.json; make one with `pytest-mcp record"):
        FakeTestRunner.from_recording(tmp_path / "run.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(ScriptError, match=r"broken\.json: not valid JSON"):
        FakeTestRunner.from_recording(broken)


def test_a_recording_can_be_passed_already_loaded() -> None:
    replayed = FakeTestRunner.from_recording(runner().to_recording())

    assert [t.node_id for t in replayed.tests] == [A, B, C]
