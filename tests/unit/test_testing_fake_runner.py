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


def runner(root: str | None = None) -> FakeTestRunner:
    return FakeTestRunner.from_dict(
        {A: "passed", B: {"outcome": "failed", "message": "assert 1 == 2", "line": 7}, C: {"markers": ["slow"]}},
        root=root,
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
    assert f"[{C!r}].phase: 'setup' is impossible for outcome 'failed'" in message


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
        (
            {"format": RECORDING_FORMAT, "version": 4},
            "version: this pytest-mcp reads version 1 to 3 recordings, not 4",
        ),
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


# -- scoped failures: they behave like the project they stand for (issue 20, finding 1) ----------------


async def test_a_scoped_failure_fires_only_on_calls_that_select_it_and_until_it_is_cleared() -> None:
    built = runner().fail_with("timeout", node_id=B, on="run")

    elsewhere = await built.run(RunSpec(node_ids=(A,)))
    first = await built.run(RunSpec(node_ids=("tests/test_a.py",)))
    second = await built.run(RunSpec())
    built.clear_failures(B)
    fixed = await built.run(RunSpec())

    assert elsewhere.termination.exit_code == 0
    assert [first.termination.kind, second.termination.kind] == ["timed_out", "timed_out"]
    assert fixed.termination.exit_code == 1  # B's own scripted failure, no longer a hang


async def test_a_broken_module_breaks_the_calls_that_collect_it_and_hides_its_tests() -> None:
    broken = "tests/sub/test_c.py"
    built = runner().fail_with("collection_error", "NameError: name 'x' is not defined", node_id=broken)

    elsewhere = await built.run(RunSpec(node_ids=("tests/test_a.py",)))
    everything = await built.run(RunSpec())
    discovery = await built.collect(CollectSpec(path="tests"))
    built.clear_failures()
    fixed = await built.collect(CollectSpec(path="tests"))

    assert elsewhere.termination.exit_code == 1  # B fails; C's module is never imported
    assert (everything.termination.exit_code, [e.node_id for e in everything.collection_errors]) == (2, [broken])
    assert [t.node_id for t in discovery.tests] == [A, B]
    assert [t.node_id for t in fixed.tests] == [A, B, C]


async def test_times_limits_how_many_calls_a_failure_fires_on() -> None:
    built = runner().fail_with("crash", node_id=C, times=2).fail_with("usage_error", times=2, on="collect")

    runs = [await built.run(RunSpec(node_ids=(C,))) for _ in range(3)]
    collections = [await built.collect(CollectSpec()) for _ in range(3)]

    assert [r.termination.kind for r in runs] == ["signalled", "signalled", "exited"]
    assert [c.termination.exit_code for c in collections] == [4, 4, 0]


async def test_an_unscoped_failure_affects_the_next_call_only() -> None:
    built = runner().fail_with("crash")

    crashed = await built.run(RunSpec(node_ids=(A,)))
    after = await built.run(RunSpec(node_ids=(A,)))

    assert (crashed.termination.kind, after.termination.kind) == ("signalled", "exited")


def test_clearing_a_node_id_without_a_failure_names_the_ones_there_are() -> None:
    built = runner().fail_with("crash", node_id=B)

    with pytest.raises(ScriptError, match=r"node_id: no failure is scripted for 'tests/x.py'; scripted for: \['tests/"):
        built.clear_failures("tests/x.py")


# -- every argument is checked when it is given (finding 5) -----------------------------------------


@pytest.mark.parametrize(
    ("misuse", "problem"),
    [
        (
            lambda r: r.fail_with("crash", signal=11),
            r"signal: give the signal's name, like 'SIGSEGV', not the number 11",
        ),
        (lambda r: r.fail_with("crash", signal="SIGFOO"), r"signal: 'SIGFOO' is not a signal that kills a process"),
        (lambda r: r.fail_with("timeout", signal="SIGKILL"), r"signal: only a crash is a signal; a timeout is not"),
        (lambda r: r.fail_with("timeout", "too slow"), r"message: a timeout has no message of its own"),
        (lambda r: r.fail_with("crash", "boom"), r"message: a crash has no message of its own"),
        (
            lambda r: r.fail_with("crash", node_id="tests/test_a.py::nope"),
            r"node_id: 'tests/test_a.py::nope' selects no",
        ),
        (lambda r: r.fail_with("usage_error", node_id=A), r"node_id: a usage error ends the whole call"),
        (lambda r: r.fail_with("collection_error", node_id=A), r"node_id: a collection error is a test module's"),
        (
            lambda r: r.fail_with("timeout", node_id=A, on="collect"),
            r"on: a timeout in a test happens when the test runs",
        ),
        (lambda r: r.fail_with("crash", line=0), r"line: must be a line number, 1 or more; got 0"),
        (lambda r: r.fail_with("usage_error", line=3), r"line: only a timeout or a crash names a line"),
        (lambda r: r.fail_with("crash", times=0), r"times: must be a number of calls, 1 or more"),
        (lambda r: r.fail_with("crash", on="always"), r"on: 'always' is not 'run', 'collect' or None"),
        (
            lambda r: r.script("tests/x.py::t", markers="slow"),
            r"markers: must be a list of marker names, not the string",
        ),
        (lambda r: r.script("test_a"), r"node_id: 'test_a' names no test: a test's node id is its file, then `::`"),
        (lambda r: r.script("tests/x.py::t", "failed", phase="setup"), r"phase: 'setup' is impossible for outcome"),
        (lambda r: r.script("/abs/x.py::t"), r"node_id: must be a node id relative to the root"),
        (lambda r: r.install("pytest xdist"), r"distributions\[0\]: 'pytest xdist' is not a distribution name"),
        (lambda r: r.script_coverage(120), r"percent: must be a percentage from 0 to 100; got 120"),
        (lambda r: r.script_coverage(50, {"a.py": 10}, missing={"b.py": "1"}), r"missing: 'b.py' is not in files"),
        (lambda r: r.script_environment(pytest_version="latest"), r"pytest_version: must be a version like"),
        (lambda r: r.script_environment(pytest_error="x"), r"pytest_error: only an environment without pytest"),
        (lambda r: r.hold(after=-1), r"after: must be a number of tests, 0 or more"),
        (lambda r: r.hold(after=2, collecting=True), r"after: a run held while collecting has run no test"),
        (lambda r: r.script(A, "passed", crash="tests/test_a.py:3"), r"crash: only a failed or error test has a crash"),
        (lambda r: r.script(A, "failed", crash="../a.py:3"), r"crash: '../a.py:3' is not a crash site"),
    ],
    ids=[
        "signal-number",
        "signal-unknown",
        "signal-not-a-crash",
        "message-of-a-timeout",
        "message-of-a-crash",
        "node-id-never-scripted",
        "node-id-of-a-usage-error",
        "node-id-of-a-collection-error-names-a-test",
        "a-hang-while-collecting",
        "line-zero",
        "line-of-a-usage-error",
        "times-zero",
        "on-unknown",
        "markers-as-a-string",
        "node-id-without-a-file",
        "phase-names-its-field",
        "node-id-absolute",
        "distribution-name",
        "coverage-percent",
        "coverage-missing-file",
        "pytest-version",
        "pytest-error-with-pytest",
        "hold-negative",
        "hold-collecting-after-tests",
        "crash-of-a-pass",
        "crash-outside-the-root",
    ],
)
def test_a_wrong_argument_is_refused_where_it_is_given_naming_it(misuse: Any, problem: str) -> None:
    with pytest.raises(ScriptError, match=problem):
        misuse(runner())


def test_a_list_of_mappings_is_not_a_script_and_says_what_is() -> None:
    with pytest.raises(ScriptError, match=r"tests\[0\]: must be a ScriptedTest, not dict; .*FakeTestRunner.from_dict"):
        FakeTestRunner([{"node_id": A}])  # type: ignore[list-item]
    with pytest.raises(ScriptError, match=r"tests: must be an iterable of ScriptedTest, not dict; .*from_dict"):
        FakeTestRunner({A: "passed"})  # type: ignore[arg-type]


def test_json_text_given_as_a_recording_path_is_refused_naming_the_argument() -> None:
    text = json.dumps(runner().to_recording())

    with pytest.raises(ScriptError, match=r"source: this is JSON text, not the path of a recording"):
        FakeTestRunner.from_recording(text)


# -- the environment: plugins, coverage, pytest itself (findings 3 and 7) ---------------------------


async def test_workers_and_coverage_need_their_plugin_installed() -> None:
    bare = runner()
    refused = [await bare.run(RunSpec(workers=2)), await bare.run(RunSpec(coverage=True))]
    equipped = runner().install("pytest-xdist==3.8.0", "Pytest_Cov")

    parallel = await equipped.run(RunSpec(workers=2))
    covered = await equipped.run(RunSpec(coverage=True))

    assert [(r.termination.kind, r.termination.detail) for r in refused] == [
        ("plugin_missing", "pytest-xdist"),
        ("plugin_missing", "pytest-cov"),
    ]
    assert parallel.termination.exit_code == covered.termination.exit_code == 1
    assert covered.coverage is None  # pytest-cov measured nothing that was scripted


async def test_a_scripted_coverage_report_comes_back_from_a_coverage_run_only() -> None:
    built = runner().script_coverage(81.5, {"src/cart.py": 62.0, "src/tax.py": 100}, missing={"src/cart.py": "12-15"})

    covered = await built.run(RunSpec(coverage=True))
    plain = await built.run(RunSpec())

    assert covered.coverage is not None
    assert covered.coverage.percent == 81.5
    assert [(f.file, f.percent, f.missing) for f in covered.coverage.files] == [
        ("src/cart.py", 62.0, "12-15"),
        ("src/tax.py", 100.0, ""),
    ]
    assert plain.coverage is None


async def test_without_pytest_every_call_is_refused_as_the_real_runner_refuses_it() -> None:
    built = runner().script_environment(pytest_version=None)

    run = await built.run(RunSpec())
    collection = await built.collect(CollectSpec())

    assert run.termination.kind == collection.termination.kind == "pytest_unavailable"
    assert run.termination.detail is not None
    assert run.termination.detail.startswith("pytest cannot be run with the target interpreter fake (No module named")


def test_a_version_1_recording_is_read_with_its_root_taken_out_of_its_texts() -> None:
    document = {
        "format": RECORDING_FORMAT,
        "version": 1,
        "root": "/old/machine/project",
        "tests": [
            {"node_id": A, "outcome": "failed", "traceback": "file /old/machine/project/tests/test_a.py, line 3"}
        ],
    }

    replayed = FakeTestRunner.from_recording(document)

    assert replayed.root is None
    assert replayed.tests[0].traceback == "file <root>/tests/test_a.py, line 3"
    assert replayed.tests[0].reports("/new/root")[0].traceback == "file /new/root/tests/test_a.py, line 3"


def test_a_recording_keeps_the_modules_broken_until_cleared() -> None:
    built = runner(root="/p").fail_with("collection_error", "ImportError: x", node_id="tests/test_broken.py")

    document = built.to_recording()
    replayed = FakeTestRunner.from_recording(document)

    assert document["collection_errors"][0]["traceback"].startswith(
        "ImportError while importing test module '<root>/tests/test_broken.py'."
    )
    assert replayed.to_recording() == document
