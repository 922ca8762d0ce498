"""What plugins add to a run, in the domain and the presenter: statuses, flaky tests, seeds, other threads."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mcp.adapters.mcp.presenter import render_run
from pytest_mcp.adapters.pytest_subprocess.runner import _reproducible
from pytest_mcp.domain.check_environment import plugin_effect
from pytest_mcp.domain.execute_tests import _listed
from pytest_mcp.domain.groups import failure_groups
from pytest_mcp.domain.models import ReportedTest, RunResult, Summary
from pytest_mcp.domain.requests import ExecuteTestsRequest, RequestPolicy
from pytest_mcp.domain.text import current_thread_only


def test_rerun_and_any_other_plugin_status_are_counted_in_pytests_words_and_order() -> None:
    counts = {"failed": 4, "passed": 9, "skipped": 1, "xfailed": 1, "rerun": 2, "flaky": 3, "error": 1}

    summary = Summary.from_counts(counts, total=15, duration=1.234)

    assert (summary.rerun, summary.other_statuses) == (2, {"flaky": 3})
    assert summary.line() == "4 failed, 9 passed, 1 skipped, 1 xfailed, 1 error, 2 rerun, 3 flaky in 1.23s"
    assert summary.wire()["rerun"] == 2
    assert "other_statuses" not in Summary.from_counts({"passed": 1}, total=1, duration=0).wire()


def flaky(reruns: int, outcome: str = "passed") -> ReportedTest:
    return ReportedTest(
        node_id="tests/test_a.py::test_net",
        outcome=outcome,  # type: ignore[arg-type]
        phase="call",
        location="tests/test_a.py:3",
        message=None if outcome == "passed" else "ConnectionError: refused",
        reruns=reruns,
        first_failure="ConnectionError: timed out",
    )


def test_a_test_that_passed_after_a_rerun_is_listed_by_default_as_flaky() -> None:
    policy = RequestPolicy(root=Path("/"))
    plain = ReportedTest(node_id="tests/test_a.py::test_ok", outcome="passed", phase="call")

    tests, groups, reasons = _listed(ExecuteTestsRequest.parse({}, policy), (plain, flaky(2)))

    assert (tests, groups, reasons) == ((flaky(2),), (), ())
    assert _listed(ExecuteTestsRequest.parse({"detail": "summary"}, policy), (plain, flaky(2))) == ((), (), ())


def test_the_text_says_a_pass_was_flaky_and_how_a_failure_ended_after_its_reruns() -> None:
    summary = Summary.from_counts({"passed": 1, "failed": 1, "rerun": 4}, total=2, duration=0.5)
    result = RunResult(exit_code=1, summary=summary, tests=(flaky(2),), groups=failure_groups([flaky(2, "failed")]))

    text = render_run(result)

    assert text.splitlines()[0] == "1 failed, 1 passed, 4 rerun in 0.50s (exit code 1)"
    assert "FAILED tests/test_a.py::test_net (tests/test_a.py:3) [failed all 3 attempts]" in text
    assert "FLAKY tests/test_a.py::test_net: passed on attempt 3; first failure: ConnectionError: timed out" in text


def test_the_command_reproduces_a_seeded_run_with_the_seed_before_the_node_ids() -> None:
    command = ("python", "-m", "pytest", "-q", "--", "tests/test_a.py")
    seed = ("-p", "randomly", "--randomly-seed=42")

    assert _reproducible(command, seed) == ("python", "-m", "pytest", "-q", *seed, "--", "tests/test_a.py")
    assert _reproducible(command, ()) == command


@pytest.mark.parametrize(
    ("distribution", "says"),
    [
        ("pytest-randomly", "shuffles the test order"),
        ("pytest_rerunfailures", "runs failed tests again"),
        ("pytest-xdist", "parallel"),
        ("pytest-order", "reorders"),
        ("pytest-repeat", "several times"),
        ("pytest-mock", None),
    ],
)
def test_check_environment_says_which_plugins_change_order_or_outcomes(distribution: str, says: str | None) -> None:
    effect = plugin_effect(distribution)
    assert (effect is None) if says is None else (effect is not None and says in effect)


DUMP = """\
Timeout (0:00:05)!
Thread 0x00007f0000000002 (most recent call first):
  File "/usr/lib/python3.11/socketserver.py", line 232 in serve_forever
  File "/venv/site-packages/pytest_rerunfailures.py", line 410 in run_server

Current thread 0x00007f0000000001 (most recent call first):
  File "/project/tests/test_slow.py", line 7 in test_sleeps
  File "/venv/site-packages/_pytest/python.py", line 159 in pytest_pyfunc_call
"""


def test_a_dump_keeps_the_tests_own_thread_and_says_what_it_left_out() -> None:
    kept = current_thread_only(DUMP)

    assert "rerunfailures" not in kept
    assert "serve_forever" not in kept
    assert 'File "/project/tests/test_slow.py", line 7 in test_sleeps' in kept
    assert kept.startswith("Timeout (0:00:05)!\n")
    assert kept.endswith("[... 1 other thread(s)' stacks left out ...]\n")
    assert current_thread_only("no dump here\n") == "no dump here\n"
