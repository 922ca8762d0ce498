"""The reporter does no per-test work for a plain pass beyond what pytest itself does.

The target is bare_python (pytest alone, linked): what is counted here is the reporter's own work
beside pytest's, which the dev venv's other plugins would only add a second of imports to each run.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio
import pytest

from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.runner import SubprocessPytestRunner
from pytest_mcp.domain.runs import RunSpec
from tests.integration.support import run

pytestmark = pytest.mark.anyio

COUNTING_CONFTEST = """
from pathlib import Path

CALLS = []


def pytest_report_teststatus(report, config):
    CALLS.append(report.when)


def pytest_unconfigure(config):
    (Path(__file__).parent / "status-calls.txt").write_text(str(len(CALLS)))
"""

TESTS = """
import pytest


@pytest.mark.parametrize("i", range(20))
def test_passes(i):
    assert i >= 0


def test_fails():
    assert 1 == 2


@pytest.mark.xfail(reason="maybe fixed")
def test_xpasses():
    pass
"""


@pytest.fixture
def counting_project(tmp_path: Path) -> Path:
    (tmp_path / "conftest.py").write_text(COUNTING_CONFTEST)
    (tmp_path / "test_many.py").write_text(TESTS)
    return tmp_path


def status_calls(root: Path) -> int:
    return int((root / "status-calls.txt").read_text())


async def test_plain_passes_cost_the_reporter_no_status_hook_call(bare_python: Path, counting_project: Path) -> None:
    raw = subprocess.run(
        [str(bare_python), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=counting_project,
        capture_output=True,
        timeout=120,
    )
    assert raw.returncode == 1, raw.stdout
    pytest_alone = status_calls(counting_project)

    report = await run(SubprocessPytestRunner(TargetInterpreter.given(bare_python), root=counting_project), RunSpec())

    assert report.summary is not None
    assert (report.summary.passed, report.summary.failed, report.summary.xpassed) == (20, 1, 1)
    assert [(t.node_id, t.outcome) for t in report.tests] == [
        ("test_many.py::test_fails", "failed"),
        ("test_many.py::test_xpasses", "xpassed"),
    ]
    # pytest's terminal asks about every report (3 per test, and again for its short summary); the
    # reporter asks again only for the two it lists: the failed call and the xpass.
    assert pytest_alone >= 66
    assert status_calls(counting_project) == pytest_alone + 2


HOOK_LISTING_CONFTEST = """
from pathlib import Path


def pytest_sessionfinish(session):
    hook = session.config.pluginmanager.hook.pytest_runtest_logfinish
    names = sorted(session.config.pluginmanager.get_name(impl.plugin) or "" for impl in hook.get_hookimpls())
    (Path(__file__).parent / "logfinish-plugins.txt").write_text(",".join(names))
"""


@pytest.mark.parametrize("progress", [False, True], ids=["without-progress", "with-progress"])
async def test_the_reporter_hooks_every_finished_test_only_to_report_progress(
    bare_python: Path, tmp_path: Path, progress: bool
) -> None:
    (tmp_path / "conftest.py").write_text(HOOK_LISTING_CONFTEST)
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    runner = SubprocessPytestRunner(TargetInterpreter.given(bare_python), root=tmp_path)

    with anyio.fail_after(120):
        report = await runner.run(RunSpec(progress=progress), _Ignore() if progress else None)

    assert report.summary is not None
    assert report.summary.passed == 1
    hooked = (tmp_path / "logfinish-plugins.txt").read_text().split(",")
    assert ("pytest-mcp-reporter" in hooked) is progress


class _Ignore:
    async def update(self, done: int, total: int, failed: int) -> None:
        pass


LOADER_TESTS = """
import sys


def test_the_reporter_was_imported_plainly():
    assert type(sys.modules["_pytest_mcp_reporter"].__loader__).__name__ == "SourceFileLoader"
"""


async def test_the_reporter_is_imported_without_pytests_assertion_rewriting(bare_python: Path, tmp_path: Path) -> None:
    # pytest rewrites the asserts of every module `-p` names. The reporter is copied fresh into
    # each run, so pytest parsed it into AST objects every time, and the garbage collections those
    # caused cost about 35 ms of a 0.6 s run. It has no asserts to rewrite.
    (tmp_path / "test_loader.py").write_text(LOADER_TESTS)
    runner = SubprocessPytestRunner(TargetInterpreter.given(bare_python), root=tmp_path)

    report = await run(runner, RunSpec())

    assert report.summary is not None
    assert report.tests == ()
    # Importing a module before `-p` names it makes pytest warn, unless the module opts out of rewriting.
    assert (report.summary.passed, report.summary.warnings) == (1, 0)


GUARD_LOADER_TESTS = """
import sys


def test_the_guard_was_imported_plainly():
    assert type(sys.modules["_pytest_mcp_guard"].__loader__).__name__ == "SourceFileLoader"
"""


async def test_the_guard_is_imported_without_pytests_assertion_rewriting_too(bare_python: Path, tmp_path: Path) -> None:
    # The guard is a plugin of its own beside the reporter, and loaded the same way.
    (tmp_path / "test_loader.py").write_text(GUARD_LOADER_TESTS)
    runner = SubprocessPytestRunner(TargetInterpreter.given(bare_python), root=tmp_path)

    report = await run(runner, RunSpec())

    assert report.summary is not None
    assert report.tests == ()
    assert (report.summary.passed, report.summary.warnings) == (1, 0)


NODEID_COUNTING_CONFTEST = """
from pathlib import Path

from _pytest.reports import TestReport

READS = []
_get = TestReport.__getattribute__


def _counting(self, name):
    if name == "nodeid":
        READS.append(name)
    return _get(self, name)


TestReport.__getattribute__ = _counting


def pytest_unconfigure(config):
    (Path(__file__).parent / "nodeid-reads.txt").write_text(str(len(READS)))
"""


async def test_plain_passes_cost_the_reporter_no_read_of_their_node_id(bare_python: Path, tmp_path: Path) -> None:
    # On pytest 9 a report's node id is a property that makes its NodeId a string: two calls, three
    # reports a test (issue 41). A plain pass lists nothing, and no test ran again: nothing to look up.
    (tmp_path / "conftest.py").write_text(NODEID_COUNTING_CONFTEST)
    (tmp_path / "test_many.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('i', range(20))\ndef test_passes(i):\n    assert i >= 0\n"
    )
    reads = tmp_path / "nodeid-reads.txt"
    raw = subprocess.run([str(bare_python), "-m", "pytest", "-q"], cwd=tmp_path, capture_output=True, timeout=120)
    assert raw.returncode == 0, raw.stdout
    pytest_alone = int(reads.read_text())

    report = await run(SubprocessPytestRunner(TargetInterpreter.given(bare_python), root=tmp_path), RunSpec())

    assert report.summary is not None
    assert report.summary.passed == 20
    assert int(reads.read_text()) == pytest_alone  # 0 on pytest 8 and 9: -q lists no pass by its node id
