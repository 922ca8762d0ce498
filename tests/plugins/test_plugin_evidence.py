"""What plugins do to a run is visible in the answer (issue 19): flaky passes, failures that used
every rerun, and failure evidence without other threads' stacks. Newest pytest only: the
statuses and counts on both majors are plugin_matrix.py's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.plugins.plugin_matrix import CASES
from tests.plugins.support import Project, execute, ready, same_project_twice

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_a_pass_after_a_rerun_is_listed_as_flaky_and_a_failure_says_its_attempts(tmp_path: Path) -> None:
    [env] = ready("pytest9").values()
    _, root = same_project_twice(CASES["rerunfailures"].project, tmp_path)

    [answer] = await execute(env, root, tmp_path, {})  # detail "failures", the default

    listed = {test["node_id"].split("::")[1]: test for test in answer.reports}
    flaky = listed["test_flaky_passes_on_its_second_attempt"]
    assert (flaky["outcome"], flaky["reruns"]) == ("passed", 1)
    assert flaky["first_failure"].startswith("AssertionError: the first attempt fails")
    failed = listed["test_always_fails"]
    assert (failed["outcome"], failed["reruns"]) == ("failed", 2)
    assert "test_passes" not in listed
    assert "FLAKY test_reruns.py::test_flaky_passes_on_its_second_attempt: passed on attempt 2" in answer.text
    assert "[failed all 3 attempts]" in answer.text


TIMEOUT_WITH_A_SERVER_THREAD = Project(
    {
        "test_hangs.py": """
            import threading
            import time

            import pytest


            def serve_forever():
                while True:
                    time.sleep(0.05)


            threading.Thread(target=serve_forever, name="plugin-server", daemon=True).start()


            def wait_for_the_network():
                time.sleep(10)


            @pytest.mark.timeout(1)
            def test_hangs():
                print("connecting")
                wait_for_the_network()
        """
    },
    ini="addopts = -p no:randomly",
)


async def test_a_timeout_keeps_the_tests_own_stack_and_leaves_other_threads_out(tmp_path: Path) -> None:
    [env] = ready("pytest9").values()
    _, root = same_project_twice(TIMEOUT_WITH_A_SERVER_THREAD, tmp_path)

    [answer] = await execute(env, root, tmp_path, {}, seeded=False)

    [test] = answer.reports
    assert test["message"].startswith("Failed: Timeout")
    assert "wait_for_the_network" in test["traceback"]
    assert "connecting" in test["stdout"]
    assert "Timeout" in test["stdout"]
    assert "serve_forever" not in test["stdout"]
    assert "plugin-server" not in test["stdout"]
    assert "other thread(s)' stacks left out by pytest-mcp" in test["stdout"]
