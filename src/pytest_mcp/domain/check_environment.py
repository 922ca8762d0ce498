"""The check_environment use case: a preflight of the interpreter that tests would run with."""

from __future__ import annotations

import re
from typing import Generic, TypeVar

from pytest_mcp.domain.environment import (
    DetectionRule,
    EnvironmentResult,
    InterpreterChoice,
    ProbeFacts,
    ProbeReport,
    recorder_for,
)
from pytest_mcp.domain.errors import ExecutionFailed, FailureDetails
from pytest_mcp.domain.requests import CheckEnvironmentRequest, RequestPolicy
from pytest_mcp.domain.text import keep_tail, last_line
from pytest_mcp.ports.environment_presenter import EnvironmentPresenter
from pytest_mcp.ports.environment_probe import EnvironmentProbe

T = TypeVar("T")

MIN_PYTHON = (3, 9)
MIN_PYTEST = (7, 0)
PROBE_TIMEOUT = 60
_TAIL_CHARS = 4000

RULE_DESCRIPTIONS: dict[DetectionRule, str] = {
    "explicit": "--python",
    "virtual_env": "$VIRTUAL_ENV",
    "project_venv": "the project's ROOT/.venv or ROOT/venv",
    "uv": "the uv project's environment",
    "poetry": "the Poetry project's environment",
    "path": "python3 on PATH, which had pytest",
    "server": "the server's own interpreter, as no project environment was found",
}
_SERVER_FALLBACK_FIX = "pass --python with the project's interpreter, or create ROOT/.venv and install pytest into it"


class CheckEnvironment(Generic[T]):
    """Report, without running any test, whether and how pytest would run: a preflight.

    Rules:
    - Only a probe runs, in the target interpreter: no test, no conftest, no installation.
    - A probe that completed is a result, ready or not. pytest missing, Python older than 3.9,
      pytest older than 7, or configuration pytest refuses are `problems`, each naming the
      environment and what to do; `ready` is true when there are none. The fix for a missing
      pytest depends on the rule that chose the interpreter (uv, Poetry, pip), and pytest-mcp
      never applies it itself.
    - A probe that did not complete (the interpreter cannot start, the deadline passed, it was
      killed, it exited without an answer) raises ExecutionFailed naming the interpreter and
      the rule that chose it; `data.interpreter` carries the choice.
    - The probe's deadline is the policy's default timeout, at most 60 s.
    - A probe is a process like a test run, so it takes one of the same run slots: with none
      free within its deadline, the call is busy and nothing is started.
    """

    def __init__(self, probe: EnvironmentProbe, presenter: EnvironmentPresenter[T], policy: RequestPolicy) -> None:
        self._probe = probe
        self._presenter = presenter
        self._policy = policy

    async def execute(self, request: CheckEnvironmentRequest) -> T:
        timeout = min(self._policy.default_timeout, PROBE_TIMEOUT)
        report = await self._probe.probe(timeout)
        facts = report.facts
        if facts is None or report.interpreter is None:
            raise _probe_failure(report, timeout)
        problems = tuple(_problems(report.interpreter, facts))
        result = EnvironmentResult(
            ready=not problems,
            problems=problems,
            interpreter=report.interpreter,
            python=facts.python,
            pytest=facts.pytest,
            plugins=tuple(
                plugin.model_copy(update={"changes": plugin_effect(plugin.name)}) for plugin in facts.plugins
            ),
            plugin_autoload=facts.plugin_autoload,
            rootdir=facts.rootdir,
            configfile=facts.configfile,
            testpaths=facts.testpaths,
            process_containment=report.containment,
            localization=recorder_for(facts.python) if self._policy.localize > 0 else "off",
            sandbox=report.sandbox,
            sandbox_withheld=report.sandbox_withheld,
        )
        return self._presenter.present_environment(result)


# Plugins that change which tests run, in what order, or how their outcomes are reached: an agent
# reading a run's results needs to know (issue 19). By normalised distribution name.
_EFFECTS = {
    "pytest-randomly": "shuffles the test order and reseeds random; `command` holds the seed that reproduces a run",
    "pytest-random-order": "shuffles the test order",
    "pytest-order": "reorders tests by their order marks",
    "pytest-ordering": "reorders tests by their run marks",
    "pytest-rerunfailures": "runs failed tests again; counted in `rerun`, and a pass after a rerun is listed as flaky",
    "flaky": "runs failed tests again, and passes those that pass on a rerun",
    "pytest-repeat": "runs each test several times (--count)",
    "pytest-xdist": "runs tests in parallel worker processes, in an order that varies",
    "pytest-timeout": "fails a test that runs longer than its limit",
    "pytest-check": "lets a test continue after a failed check, and fails it at the end",
    "pytest-testmon": "with affected=true, runs only the tests affected by changes since the last affected run",
}


def plugin_effect(distribution: str) -> str | None:
    """What a known plugin changes about a run's order or outcomes; None for any other."""
    return _EFFECTS.get(re.sub(r"[-_.]+", "-", distribution).lower())


def _version(text: str) -> tuple[int, ...]:
    """The leading numeric release of a version string: `9.0.0rc1` -> (9, 0, 0)."""
    match = re.match(r"\d+(\.\d+)*", text.strip())
    return tuple(int(part) for part in match.group(0).split(".")) if match else ()


def _chosen(choice: InterpreterChoice) -> str:
    return f"{choice.path} (chosen by {RULE_DESCRIPTIONS[choice.rule]})"


def _install_hint(choice: InterpreterChoice, *, upgrade: bool = False) -> str:
    if choice.rule == "uv":
        return "`uv add --dev pytest` in the project"
    if choice.rule == "poetry":
        return "`poetry add --group dev pytest` in the project"
    flag = "-U " if upgrade else ""
    return f"`{choice.path} -m pip install {flag}pytest` (or `uv pip install --python {choice.path} {flag}pytest`)"


def _problems(choice: InterpreterChoice, facts: ProbeFacts) -> list[str]:
    problems = []
    python = facts.python
    if _version(python.version) < MIN_PYTHON:
        problems.append(
            f"Python {python.version} at {_chosen(choice)} is older than 3.9, the oldest Python pytest-mcp can "
            "run tests with; point --python at a newer interpreter"
        )
    if facts.pytest is None:
        why = f" ({facts.pytest_error})" if facts.pytest_error else ""
        if choice.rule == "server":
            problems.append(
                f"pytest is not installed for {_chosen(choice)}{why}: {_SERVER_FALLBACK_FIX}. "
                "pytest-mcp never installs anything itself"
            )
        else:
            problems.append(
                f"pytest is not installed for {_chosen(choice)}{why}: install pytest into {python.prefix}, "
                f"e.g. with {_install_hint(choice)}, or point --python at an interpreter that has it. "
                "pytest-mcp never installs anything itself"
            )
        return problems
    if _version(facts.pytest.version) < MIN_PYTEST:
        problems.append(
            f"pytest {facts.pytest.version} in {python.prefix} is older than 7.0, the oldest pytest-mcp supports: "
            f"upgrade it, e.g. with {_install_hint(choice, upgrade=True)}"
        )
    if facts.config_error:
        where = facts.configfile or "its configuration"
        problems.append(f"pytest cannot start in this project: {facts.config_error}; fix {where} or PYTEST_ADDOPTS")
    return problems


def _probe_failure(report: ProbeReport, timeout: float) -> ExecutionFailed:
    choice = report.interpreter
    if report.busy is not None or choice is None:
        return ExecutionFailed(
            "busy",
            f"the server is busy: {report.busy or 'other runs are in progress'}; no run slot freed up within "
            f"{timeout:g}s, so the environment was not probed. Retry later",
            FailureDetails(exit_code=None, command=(), duration=report.duration),
        )
    who = f"the target interpreter {choice.path} (chosen by {RULE_DESCRIPTIONS[choice.rule]}: {choice.reason})"
    details = FailureDetails(
        exit_code=report.exit_code,
        command=report.command,
        duration=report.duration,
        stdout_tail=keep_tail(report.stdout, _TAIL_CHARS),
        stderr_tail=keep_tail(report.stderr, _TAIL_CHARS),
        signal=report.signal,
        extra={"interpreter": choice.model_dump(mode="json")},
    )
    if report.start_error is not None:
        return ExecutionFailed(
            "pytest_unavailable",
            f"{who} cannot be started ({report.start_error}); point --python at a working interpreter",
            details,
        )
    if report.timed_out:
        return ExecutionFailed(
            "timeout",
            f"{who} did not finish pytest-mcp's environment probe within {timeout:g}s and was stopped; "
            "something it imports at start-up (a .pth file, sitecustomize, a pytest plugin) may hang",
            details,
        )
    if report.signal is not None:
        return ExecutionFailed(
            "crashed",
            f"{who} was killed by {report.signal} while pytest-mcp probed it; no facts are available",
            details,
        )
    why = last_line(report.stderr) or f"exit code {report.exit_code}"
    return ExecutionFailed(
        "pytest_unavailable",
        f"{who} could not run pytest-mcp's environment probe ({why}); pytest-mcp needs Python 3.9 or newer "
        "in the target environment",
        details,
    )
