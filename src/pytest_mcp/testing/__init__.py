"""Test your agent against pytest-mcp without running a suite or spawning a server.

`FakeTestRunner` plays back scripted tests with pytest's selection rules and endings, and
`connect()` yields an `mcp.Client` connected in-process to a fully wired pytest-mcp server:
the production container, validation and presenter, with your runner::

    from pytest_mcp.testing import FakeTestRunner, connect

    runner = FakeTestRunner().script("tests/test_cart.py::test_total", "failed", message="assert 90 == 85")
    async with connect(runner) as client:
        result = await client.call_tool("execute_tests", {})

The API (each name has its own docstring):

connect(runner=None, root=None, python=None, mode="legacy", *, timeout=None, max_timeout=None,
        error_mode=None, detach_after=None, log_level=None)
    Async context manager: a client connected to the server. One root for server and runner.
FakeTestRunner(tests=(), *, root=None, plugins=())
    .script(node_id, outcome="passed", message=None, traceback=None, duration=0.0, markers=(),
            stdout=None, *, stderr=None, line=None, phase=None, crash=None,
            runs=(), flaky=False, outcomes=(), starts_process=False)
        add or replace a test; `crash` ("src/cart.py:12") is where a failure happens, which its
        failure group's id is made of: script the site a real run names to get the real id
        `runs`: the project functions it runs ("shop/price.py::gross_price"),
        from which the server names culprits; `flaky`: a failure that passes when a second pass
        (Python < 3.12) repeats it; `outcomes` (["failed", "passed"]): its outcome in successive
        runs, the last repeated: a flip on the agent's re-run, a fix, a regression;
        `starts_process`: it runs code in a subprocess, unrecorded: never suspect flaky
    .trace(node_id, *functions), .define(function, lines), .change(*functions), .run_at_import(*functions),
    .cache(*functions)   the functions a test runs; where one is ("10-11"); an edit, from then on, as in a
        working tree; those run as tests are collected (module-level code); those behind a cache, which
        a test the cache answers does not enter. None scripted: `localization.reason` says how to script them
    .fail_with(kind, message=None, *, node_id=None, signal=None, line=None, on=None, times=None)
        a timeout, crash or collection error scoped to a test or module fires whenever it is
        selected, until cleared; unscoped, on the next call
    .clear_failures(node_id=None)                  the fix: forget every failure, or one test's
    .edit(*affects, files=())                      what an edit affects, for `affected` runs
    .install(*distributions)                       pytest plugins: "pytest-xdist", "pytest-cov==6.0"
    .script_coverage(percent, files=None, *, missing=None)      what a `coverage` run measures
    .script_environment(*, python_version="3.12.0", pytest_version="9.0.0", pytest_error=None,
                        config_error=None, prefix=None, containment="subreaper")
        what check_environment finds; containment="process_group" is a server without a subreaper
    .leave_running(*commands, node_id=None)        processes a test leaves, reported as stopped
    .hold(after=0, *, collecting=False, polls=None), .release()
        runs that outlast the call (detached runs): held after `after` tests, or still collecting;
        `polls`: released by itself once the agent has asked for the held run that many times
    .localize(spec)       the second pass after a failing run before Python 3.12 (ADR 0020), played
                          back; the server calls it. From 3.12 (the default) the run records itself
    .from_dict(script, *, root=None), .from_recording(source), .to_recording()
    .calls, .tests, .root                          what it was asked; what it plays; its root
ScriptedTest           one scripted test (a frozen pydantic model)
FailureGroup, SkipReason   an answer's `groups` and `reasons` entries: tests that fail the same way
    (same outcome, phase, exception, masked message and crash site) and skips by reason; scripted
    failures group as real ones do (ADR 0014), e.g. `FailureGroup.model_validate(answer["groups"][0])`
Outcome, Phase, FailureKind                        the literal types of script() and fail_with()
RunSpec, CollectSpec   what `calls` holds: one per execute_tests / discover_tests
ScriptError            any wrong argument, raised by the call that received it, naming it
RECORDING_FORMAT, RECORDING_VERSION               the recording format `pytest-mcp record` writes

Answers as the real server gives them: every test report carries `duration` (0 included). A
finished run's reports page with get_test_run's `offset`, whether all of them, `node_ids` or one
`group`; each page holds as many reports as fit the answer's size budget, so page sizes vary:
follow `page.next_offset` until it is null. A group's `id` depends only on its signature (outcome,
phase, exception, masked message and crash site), the same for the fake and the real server.

It is also a pytest plugin, never loaded unless asked for (`-p pytest_mcp.testing`, or
`pytest_plugins = ["pytest_mcp.testing"]` in a top-level conftest). Its fixtures:

pytest_mcp_runner
    A fresh, empty FakeTestRunner for each test. Script it in the test, or override the fixture.
pytest_mcp_client
    An mcp.Client connected in-process to a server running `pytest_mcp_runner`, rooted at the
    runner's root or else the test's `tmp_path`. Async: run by AnyIO's pytest plugin (mark tests
    `anyio` and provide `anyio_backend`).
"""

from __future__ import annotations

import typing as _typing

from pytest_mcp.adapters.fake.recording import RECORDING_FORMAT, RECORDING_VERSION
from pytest_mcp.adapters.fake.runner import FailureKind, FakeTestRunner, ScriptedTest, ScriptError
from pytest_mcp.domain.models import FailureGroup, Outcome, Phase, SkipReason
from pytest_mcp.domain.runs import CollectSpec, RunSpec
from pytest_mcp.testing._connect import connect

__all__ = [
    "RECORDING_FORMAT",
    "RECORDING_VERSION",
    "CollectSpec",
    "FailureGroup",
    "FailureKind",
    "FakeTestRunner",
    "Outcome",
    "Phase",
    "RunSpec",
    "ScriptError",
    "ScriptedTest",
    "SkipReason",
    "connect",
]


if _typing.TYPE_CHECKING:
    import pytest as _pytest  # noqa: PT013 - the alias keeps pytest out of the public namespace


def pytest_configure(config: _pytest.Config) -> None:
    """pytest hook: this module was asked for as a plugin, so register its fixtures.

    The fixtures live in a module of their own so that importing `pytest_mcp.testing` never
    imports pytest, and so that their `pytest_`-prefixed names are never mistaken for hooks.
    """
    from pytest_mcp.testing import _fixtures

    if not config.pluginmanager.is_registered(_fixtures):
        config.pluginmanager.register(_fixtures, "pytest-mcp-testing-fixtures")
