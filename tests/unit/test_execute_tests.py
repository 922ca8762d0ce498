from __future__ import annotations

from typing import Any

import pydantic_core
import pytest

from pytest_mcp.adapters.fake.runner import FakeTestRunner
from pytest_mcp.domain.errors import ExecutionFailed
from pytest_mcp.domain.execute_tests import REPRESENTATIVE_BYTES, ExecuteTests, representative
from pytest_mcp.domain.models import ReportedTest, RunResult
from pytest_mcp.domain.requests import ExecuteTestsRequest, RequestPolicy
from pytest_mcp.domain.runs import RunReport, RunSpec, Termination
from tests.unit import test_presenter
from tests.unit.support import KeepResult

pytestmark = pytest.mark.anyio


async def run(runner: Any, policy: RequestPolicy, **arguments: Any) -> RunResult:
    use_case = ExecuteTests(runner, KeepResult(), policy)
    return await use_case.execute(ExecuteTestsRequest.parse(arguments, policy))


async def test_test_failures_are_a_result_with_exact_counts(runner: FakeTestRunner, policy: RequestPolicy) -> None:
    result = await run(runner, policy)

    assert result.exit_code == 1
    summary = result.summary
    assert (summary.total, summary.passed, summary.failed, summary.skipped, summary.errors, summary.xfailed) == (
        5,
        1,
        1,
        1,
        1,
        1,
    )


async def test_failures_detail_answers_failures_by_group_and_skips_by_reason_and_lists_no_test_twice(
    runner: FakeTestRunner, policy: RequestPolicy
) -> None:
    result = await run(runner, policy)

    # A group of one is its report under an id: outcome and node id are the representative's.
    assert [(g.count, g.representative.outcome, g.representative.node_id, g.members) for g in result.groups] == [
        (1, "failed", "tests/test_math.py::test_div", ()),
        (1, "error", "tests/test_io.py::TestFiles::test_write", ()),
    ]
    assert [(r.outcome, r.count) for r in result.reasons] == [("skipped", 1), ("xfailed", 1)]
    assert result.tests == ()  # the groups and reasons say it all


async def test_detail_all_lists_passing_tests_and_summary_lists_none(
    runner: FakeTestRunner, policy: RequestPolicy
) -> None:
    everything = await run(runner, policy, detail="all")
    counts_only = await run(runner, policy, detail="summary")

    assert "tests/test_math.py::test_add" in {t.node_id for t in everything.tests}
    assert len(everything.tests) == 5
    assert counts_only.tests == ()
    assert counts_only.summary == everything.summary


async def test_show_capture_off_strips_captured_output(runner: FakeTestRunner, policy: RequestPolicy) -> None:
    shown = await run(runner, policy)
    hidden = await run(runner, policy, show_capture=False)

    assert any(g.representative.stdout == "setup log" for g in shown.groups)
    assert all(g.representative.stdout is None and g.representative.stderr is None for g in hidden.groups)


async def test_failfast_is_passed_to_the_runner_as_maxfail_one(runner: FakeTestRunner, policy: RequestPolicy) -> None:
    await run(runner, policy, failfast=True)

    spec = runner.calls[-1]
    assert isinstance(spec, RunSpec)
    assert spec.maxfail == 1


async def test_timeout_defaults_to_the_policy_and_can_be_raised_up_to_the_maximum(
    runner: FakeTestRunner, policy: RequestPolicy
) -> None:
    await run(runner, policy)
    await run(runner, policy, timeout=120)

    assert [spec.timeout for spec in runner.calls] == [30, 120]


async def test_selection_reaches_the_runner_and_deselected_tests_are_counted(
    runner: FakeTestRunner, policy: RequestPolicy
) -> None:
    result = await run(runner, policy, node_ids=["tests/test_math.py"], keywords="add or div", markers="not io")

    assert result.summary.deselected == 0
    assert result.summary.total == 2
    narrowed = await run(runner, policy, node_ids=["tests/test_math.py"], keywords="add")
    assert (narrowed.summary.total, narrowed.summary.deselected, narrowed.exit_code) == (1, 1, 0)


async def test_no_tests_collected_is_exit_code_5_and_still_a_result(
    runner: FakeTestRunner, policy: RequestPolicy
) -> None:
    result = await run(runner, policy, keywords="nothing_matches_this")

    assert result.exit_code == 5
    assert result.summary.total == 0


@pytest.mark.parametrize(
    ("kind", "reason", "essential"),
    [
        ("timeout", "timeout", "did not finish within 30s"),
        ("crash", "crashed", "SIGSEGV"),
        ("collection_error", "interrupted", "tests/test_broken.py: ModuleNotFoundError"),
        ("usage_error", "usage_error", "file or directory not found: tests/missing.py"),
        ("internal_error", "internal_error", "RuntimeError: scripted internal error"),
    ],
)
async def test_runs_without_a_trustworthy_result_raise_with_the_essentials_in_the_message(
    runner: FakeTestRunner, policy: RequestPolicy, kind: Any, reason: str, essential: str
) -> None:
    runner.fail_with(kind)

    with pytest.raises(ExecutionFailed) as caught:
        await run(runner, policy)

    assert caught.value.reason == reason
    assert essential in caught.value.message
    assert caught.value.details.command[0] == "fake"


class ScriptedEnding:
    """A runner that ends every run the same way, for endings the fake does not script."""

    def __init__(self, report: RunReport) -> None:
        self.report = report

    async def run(self, spec: RunSpec, progress: Any = None) -> RunReport:
        return self.report

    async def collect(self, spec: Any) -> Any:
        raise NotImplementedError

    async def localize(self, spec: Any) -> str:
        return "a scripted ending repeats no test"


@pytest.mark.parametrize("exit_code", [0, 1, 5])
async def test_a_result_exit_code_without_a_finished_session_is_an_error(policy: RequestPolicy, exit_code: int) -> None:
    report = RunReport(termination=Termination(kind="exited", exit_code=exit_code), command=("py",), duration=0.1)

    with pytest.raises(ExecutionFailed) as caught:
        await run(ScriptedEnding(report), policy)

    assert f"exited with code {exit_code} without finishing its session" in caught.value.message


async def test_pytest_unavailable_explains_how_to_fix_it(policy: RequestPolicy) -> None:
    detail = "pytest cannot be run with the target interpreter /venv/bin/python (No module named 'pytest')"
    report = RunReport(termination=Termination(kind="pytest_unavailable", detail=detail), command=("py",), duration=0.0)

    with pytest.raises(ExecutionFailed) as caught:
        await run(ScriptedEnding(report), policy)

    assert caught.value.reason == "pytest_unavailable"
    assert caught.value.message == detail


async def test_crash_message_names_the_test_faulthandler_saw(policy: RequestPolicy) -> None:
    stderr = (
        "Fatal Python error: Segmentation fault\n\nCurrent thread 0x01 (most recent call first):\n"
        '  File "/usr/lib/python3.11/ctypes/__init__.py", line 519 in string_at\n'
        '  File "/proj/tests/test_crash.py", line 4 in test_segfault\n'
    )
    report = RunReport(
        termination=Termination(kind="signalled", signal="SIGSEGV"), command=("py",), duration=0.0, stderr=stderr
    )

    with pytest.raises(ExecutionFailed) as caught:
        await run(ScriptedEnding(report), policy)

    assert caught.value.message == (
        "pytest was killed by SIGSEGV while running test_segfault (test_crash.py:4); no results are available"
    )


@pytest.mark.parametrize(
    ("stderr", "where"),
    [
        (
            "Thread 0x02 (most recent call first):\n"
            '  File "/usr/lib/python3.11/threading.py", line 320 in wait\n\n'
            "Current thread 0x01 (most recent call first):\n"
            '  File "/usr/lib/python3.11/socket.py", line 706 in readinto\n'
            '  File "/proj/tests/test_net.py", line 9 in test_download\n',
            " while running test_download (test_net.py:9)",
        ),
        ("", ""),  # no dump: the signal went unanswered (an xdist controller, a test's own handler)
    ],
    ids=["dumped", "no-dump"],
)
async def test_timeout_message_names_the_test_faulthandler_dumped_when_there_is_one(
    policy: RequestPolicy, stderr: str, where: str
) -> None:
    report = RunReport(termination=Termination(kind="timed_out"), command=("py",), duration=30.0, stderr=stderr)

    with pytest.raises(ExecutionFailed) as caught:
        await run(ScriptedEnding(report), policy)

    assert caught.value.message == (
        f"pytest did not finish within 30s and was stopped with all its child processes{where}; "
        "run fewer tests or pass a larger timeout"
    )


def long_run(exit_code: int, *, failed: int = 0, collection_errors: int = 0) -> RunReport:
    from pytest_mcp.domain.models import CollectionError, Summary

    return RunReport(
        termination=Termination(kind="exited", exit_code=exit_code),
        command=("py", "-m", "pytest"),
        duration=0.0,
        summary=Summary(total=1, passed=1 - failed, failed=failed),
        stdout="\n".join(f"line {i}" for i in range(1000)),
        collection_errors=tuple(CollectionError(node_id="t.py", message="E") for _ in range(collection_errors)),
    )


@pytest.mark.parametrize(
    ("report", "detail", "limit"),
    [
        (long_run(0), "all", 40),  # a clean run keeps a short tail when everything is asked for
        (long_run(1, failed=1), "failures", 120),
        (long_run(1, failed=1), "summary", 120),
        (long_run(0, collection_errors=1), "failures", 120),  # not clean: a file was not collected
    ],
)
async def test_text_output_keeps_a_short_tail_when_clean_and_a_longer_one_otherwise(
    tmp_path: Any, report: RunReport, detail: str, limit: int
) -> None:
    policy = RequestPolicy(root=tmp_path, text_output_chars=120, text_output_chars_when_passing=40)

    result = await run(ScriptedEnding(report), policy, detail=detail)

    assert result.command == ("py", "-m", "pytest")
    assert result.text_output.endswith("line 999")
    assert "characters cut" in result.text_output
    kept = result.text_output.split("...]\n", 1)[1]
    assert limit - 10 < len(kept) <= limit


@pytest.mark.parametrize("exit_code", [0, 5])
@pytest.mark.parametrize("detail", ["failures", "summary"])
async def test_a_clean_run_is_answered_with_counts_only(tmp_path: Any, exit_code: int, detail: str) -> None:
    result = await run(ScriptedEnding(long_run(exit_code)), RequestPolicy(root=tmp_path), detail=detail)

    assert (result.exit_code, result.summary.passed) == (exit_code, 1)
    assert (result.command, result.text_output) == ((), "")


FAILURE_SECTIONS = "\n".join(f"E   assertion detail {i}" for i in range(200))
SHORT_SUMMARY = (
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_a.py::test_one - assert 1 == 2\n"
    "============================== 1 failed in 0.10s ==============================="
)


@pytest.mark.parametrize(("detail", "starts_at_short_summary"), [("all", True), ("summary", False)])
async def test_a_cut_tail_starts_at_the_short_test_summary_when_the_failures_are_listed(
    tmp_path: Any, detail: str, starts_at_short_summary: bool
) -> None:
    from pytest_mcp.domain.models import ReportedTest, Summary

    policy = RequestPolicy(root=tmp_path, text_output_chars=800)
    report = RunReport(
        termination=Termination(kind="exited", exit_code=1),
        command=("py",),
        duration=0.0,
        summary=Summary(total=1, failed=1),
        tests=(
            ReportedTest(
                node_id="tests/test_a.py::test_one", outcome="failed", phase="call", traceback=FAILURE_SECTIONS
            ),
        ),
        stdout=f"{FAILURE_SECTIONS}\n{SHORT_SUMMARY}",
    )

    result = await run(ScriptedEnding(report), policy, detail=detail)

    kept = result.text_output.split("...]\n", 1)[1]
    assert result.text_output.endswith(SHORT_SUMMARY)
    if starts_at_short_summary:
        # The failure sections above it are in `tests`, in full: the text does not repeat them.
        assert kept == SHORT_SUMMARY
    else:
        # With detail='summary' nothing else shows the failures: the whole 800-character tail stays.
        assert 760 < len(kept) <= 800
        assert "assertion detail" in kept


async def test_an_error_lists_twenty_collection_errors_and_counts_the_rest(policy: RequestPolicy) -> None:
    from pytest_mcp.domain.models import CollectionError

    errors = tuple(CollectionError(node_id=f"t{i}.py", message="E" * 5000) for i in range(1000))
    report = RunReport(
        termination=Termination(kind="exited", exit_code=2), command=("py",), duration=0.1, collection_errors=errors
    )

    with pytest.raises(ExecutionFailed) as caught:
        await run(ScriptedEnding(report), policy)

    message, data = caught.value.message, caught.value.details.as_dict()
    assert message.startswith("pytest was interrupted: 1000 errors during collection\n- t0.py: EEE")
    assert message.endswith("- ... and 980 more")
    assert len(message) < 8000
    assert len(data["collection_errors"]) == 20
    assert data["collection_errors_omitted"] == 980


async def test_the_echoed_command_is_cut_and_says_how_much(policy: RequestPolicy) -> None:
    """500 node ids of 2,000 characters would echo 1 MB of command in every answer and error."""
    command = ("python", "-m", "pytest", "--", *(f"tests/test_{i}.py::" + "x" * 1990 for i in range(500)))
    ended = RunReport(termination=Termination(kind="exited", exit_code=4), command=command, duration=0.1)
    finished = long_run(1, failed=1).model_copy(update={"command": command})

    with pytest.raises(ExecutionFailed) as caught:
        await run(ScriptedEnding(ended), policy)
    result = await run(ScriptedEnding(finished), policy)

    for shown in (tuple(caught.value.details.as_dict()["command"]), result.command):
        assert sum(map(len, shown)) < 6000
        assert shown[:4] == ("python", "-m", "pytest", "--")
        assert shown[-1].startswith("[... 499 more arguments, ")
        assert shown[-1].endswith(" characters, cut by pytest-mcp]")


async def test_no_output_tail_when_the_groups_carry_the_failures(tmp_path: Any) -> None:
    from pytest_mcp.domain.models import ReportedTest, Summary

    report = RunReport(
        termination=Termination(kind="exited", exit_code=1),
        command=("py",),
        duration=0.0,
        summary=Summary(total=1, failed=1),
        tests=(ReportedTest(node_id="tests/test_a.py::test_one", outcome="failed", phase="call", message="boom"),),
        stdout=f"{FAILURE_SECTIONS}\n{SHORT_SUMMARY}",
    )

    result = await run(ScriptedEnding(report), RequestPolicy(root=tmp_path), detail="failures")

    assert len(result.groups) == 1
    assert result.text_output == ""
    assert result.command == ("py",)


def test_a_representative_with_a_full_diff_and_a_long_message_keeps_the_failing_line() -> None:
    message = "\n".join(line[2:] for line in test_presenter.FULL_DIFF.splitlines() if line.startswith("E "))
    report = ReportedTest(
        node_id="tests/test_deep.py::test_deep",
        outcome="failed",
        phase="call",
        traceback=test_presenter.FULL_DIFF,
        message=message,
    )

    shown = representative(report)

    assert len(pydantic_core.to_json(shown.wire())) <= REPRESENTATIVE_BYTES
    assert shown.traceback is not None
    assert shown.traceback.splitlines()[0] == ">       assert nested == [[0] * 8] * 20"
    assert shown.message is not None
    assert shown.message.splitlines()[0] == message.splitlines()[0]  # what failed, said first


def test_a_signed_groups_representative_leaves_out_a_message_its_e_lines_say_whole() -> None:
    """tomlkit's parser error was said three times: in the message, in the traceback's E line and in the text."""
    error = "tomlkit.exceptions.InvalidCharInStringError: Invalid character 'f' in string at line 45 col 2"
    traceback = f">       raise self.parse_error(Invalid)\nE       {error}\ntomlkit/parser.py:835: Error"
    raising = ReportedTest(node_id="t.py::test_a", outcome="failed", phase="call", traceback=traceback, message=error)
    explained = raising.model_copy(update={"message": f"{error}\nand a line the traceback does not hold"})
    subtest = raising.model_copy(update={"message": f"subtest (prefix='x'): {error}"})

    assert representative(raising, signed=True).message is None
    assert representative(raising, signed=True).traceback == traceback  # the evidence is whole
    assert representative(raising).message == error  # a group of one: its message is its signature's
    assert representative(explained, signed=True).message == explained.message
    assert representative(subtest, signed=True).message == subtest.message  # it names the subtest
