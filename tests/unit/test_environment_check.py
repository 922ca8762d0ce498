"""check_environment: the use case judging probe facts for each detection rule, its presenter and its tool."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from mcp import Client

from pytest_mcp.adapters.fake.environment import FakeEnvironmentProbe
from pytest_mcp.adapters.mcp.environment_presenter import McpEnvironmentPresenter
from pytest_mcp.container import Container, create_container
from pytest_mcp.domain.check_environment import CheckEnvironment
from pytest_mcp.domain.environment import (
    DetectionRule,
    EnvironmentResult,
    InterpreterChoice,
    PluginInfo,
    ProbeFacts,
    ProbeReport,
    PytestInfo,
    PythonInfo,
)
from pytest_mcp.domain.errors import ExecutionFailed, InvalidArguments
from pytest_mcp.domain.requests import CheckEnvironmentRequest, RequestPolicy
from pytest_mcp.settings import Settings
from tests.answers import call_error
from tests.unit.support import KeepResult

pytestmark = pytest.mark.anyio

PREFIX = "/work/project/.venv"
PYTHON = PythonInfo(
    executable=f"{PREFIX}/bin/python", version="3.12.4", implementation="CPython", prefix=PREFIX, virtual_env=True
)
RULES: tuple[DetectionRule, ...] = ("explicit", "virtual_env", "project_venv", "uv", "poetry", "path", "server")


def choice(rule: DetectionRule = "project_venv") -> InterpreterChoice:
    return InterpreterChoice(path=Path(f"{PREFIX}/bin/python"), rule=rule, reason=f"found by {rule}")


def facts(**changes: Any) -> ProbeFacts:
    fields: dict[str, Any] = {
        "python": PYTHON,
        "pytest": PytestInfo(version="8.3.2", location=f"{PREFIX}/lib/python3.12/site-packages/pytest"),
        "plugins": (PluginInfo(name="pytest-xdist", version="3.6.1", entry_points=("xdist",), loaded=True),),
        "rootdir": "/work/project",
        "configfile": "/work/project/pyproject.toml",
        "testpaths": ("tests",),
    }
    return ProbeFacts(**{**fields, **changes})


class ScriptedProbe:
    """An EnvironmentProbe that returns one report and remembers the deadline it was given."""

    def __init__(self, report: ProbeReport) -> None:
        self.report = report
        self.timeouts: list[float] = []

    async def probe(self, timeout: float) -> ProbeReport:
        self.timeouts.append(timeout)
        return self.report


def use_case(probe: Any, tmp_path: Path, default_timeout: int = 300) -> CheckEnvironment[Any]:
    policy = RequestPolicy(root=tmp_path, default_timeout=default_timeout, max_timeout=3600)
    return CheckEnvironment(probe=probe, presenter=KeepResult(), policy=policy)


def request(tmp_path: Path) -> CheckEnvironmentRequest:
    return CheckEnvironmentRequest.parse({}, RequestPolicy(root=tmp_path))


async def check(report: ProbeReport, tmp_path: Path) -> EnvironmentResult:
    result: EnvironmentResult = await use_case(ScriptedProbe(report), tmp_path).execute(request(tmp_path))
    return result


def reported(rule: DetectionRule = "project_venv", **changes: Any) -> ProbeReport:
    return ProbeReport(interpreter=choice(rule), command=("python", "-c", "<probe>"), facts=facts(**changes))


@pytest.mark.parametrize("rule", RULES)
async def test_an_environment_with_pytest_is_ready_whichever_rule_chose_it(rule: DetectionRule, tmp_path: Path) -> None:
    result = await check(reported(rule), tmp_path)

    assert result.ready is True
    assert result.problems == ()
    assert result.interpreter.rule == rule
    assert result.pytest is not None
    assert result.pytest.version == "8.3.2"
    assert (result.rootdir, result.configfile, result.testpaths) == (
        "/work/project",
        "/work/project/pyproject.toml",
        ("tests",),
    )
    assert [plugin.name for plugin in result.plugins] == ["pytest-xdist"]


@pytest.mark.parametrize(
    ("rule", "fix"),
    [
        ("explicit", f"`{PREFIX}/bin/python -m pip install pytest`"),
        ("virtual_env", f"`{PREFIX}/bin/python -m pip install pytest`"),
        ("project_venv", f"`{PREFIX}/bin/python -m pip install pytest`"),
        ("uv", "`uv add --dev pytest` in the project"),
        ("poetry", "`poetry add --group dev pytest` in the project"),
        ("path", f"`{PREFIX}/bin/python -m pip install pytest`"),
    ],
)
async def test_missing_pytest_is_a_result_saying_where_to_install_it(
    rule: DetectionRule, fix: str, tmp_path: Path
) -> None:
    result = await check(
        reported(rule, pytest=None, pytest_error="ModuleNotFoundError: No module named 'pytest'", plugins=()),
        tmp_path,
    )

    assert result.ready is False
    assert result.pytest is None
    (problem,) = result.problems
    assert f"install pytest into {PREFIX}" in problem
    assert fix in problem
    assert "No module named 'pytest'" in problem
    assert "never installs anything" in problem


async def test_missing_pytest_with_the_server_fallback_asks_for_the_projects_interpreter(tmp_path: Path) -> None:
    result = await check(reported("server", pytest=None), tmp_path)

    (problem,) = result.problems
    assert "the server's own interpreter, as no project environment was found" in problem
    assert "pass --python with the project's interpreter, or create ROOT/.venv" in problem
    assert f"install pytest into {PREFIX}" not in problem, "the server's environment is not the project's"


async def test_too_old_python_and_pytest_and_refused_configuration_are_problems(tmp_path: Path) -> None:
    old_python = PYTHON.model_copy(update={"version": "3.8.18"})
    result = await check(
        reported(
            python=old_python,
            pytest=PytestInfo(version="6.2.5", location="x"),
            config_error="ERROR: Missing required plugins: pytest-xdist",
        ),
        tmp_path,
    )

    assert result.ready is False
    assert len(result.problems) == 3
    assert "Python 3.8.18" in result.problems[0]
    assert "older than 3.9" in result.problems[0]
    assert "pytest 6.2.5" in result.problems[1]
    assert "-m pip install -U pytest" in result.problems[1]
    assert "Missing required plugins: pytest-xdist" in result.problems[2]
    assert "fix /work/project/pyproject.toml or PYTEST_ADDOPTS" in result.problems[2]


async def test_prerelease_versions_compare_by_their_release(tmp_path: Path) -> None:
    result = await check(reported(pytest=PytestInfo(version="9.0.0rc1", location="x")), tmp_path)

    assert result.ready is True


@pytest.mark.parametrize(
    ("observed", "reason", "words"),
    [
        ({"start_error": "Permission denied"}, "pytest_unavailable", "cannot be started (Permission denied)"),
        ({"timed_out": True}, "timeout", "within 60s"),
        ({"signal": "SIGSEGV"}, "crashed", "killed by SIGSEGV"),
        (
            {"exit_code": 1, "stderr": "Traceback ...\nSyntaxError: invalid syntax\n"},
            "pytest_unavailable",
            "(SyntaxError: invalid syntax); pytest-mcp needs Python 3.9 or newer",
        ),
    ],
)
async def test_a_probe_that_did_not_complete_is_an_error_naming_the_interpreter_and_rule(
    observed: dict[str, Any], reason: str, words: str, tmp_path: Path
) -> None:
    report = ProbeReport(interpreter=choice("uv"), command=("python", "-c", "<probe>"), **observed)

    with pytest.raises(ExecutionFailed) as failed:
        await check(report, tmp_path)

    assert failed.value.reason == reason
    assert words in failed.value.message
    assert f"{PREFIX}/bin/python (chosen by the uv project's environment: found by uv)" in failed.value.message
    data = failed.value.details.as_dict()
    assert data["interpreter"]["rule"] == "uv"
    assert data["command"] == ["python", "-c", "<probe>"]


async def test_the_probe_deadline_is_the_default_timeout_at_most_a_minute(tmp_path: Path) -> None:
    quick, slow = ScriptedProbe(reported()), ScriptedProbe(reported())

    await use_case(quick, tmp_path, default_timeout=20).execute(request(tmp_path))
    await use_case(slow, tmp_path, default_timeout=300).execute(request(tmp_path))

    assert (quick.timeouts, slow.timeouts) == ([20], [60])


def test_the_request_takes_no_parameters_and_names_each_one_given(tmp_path: Path) -> None:
    with pytest.raises(InvalidArguments) as invalid:
        CheckEnvironmentRequest.parse({"python": "/usr/bin/python3", "install": True}, RequestPolicy(root=tmp_path))

    assert {(error.field, error.reason) for error in invalid.value.errors} == {
        ("install", "unknown parameter; this tool takes no parameters"),
        ("python", "unknown parameter; this tool takes no parameters"),
    }
    assert CheckEnvironmentRequest.parse(None, RequestPolicy(root=tmp_path)) == CheckEnvironmentRequest()


def test_the_text_says_ready_or_not_then_each_problem_then_what_pytest_sees() -> None:
    result = EnvironmentResult(
        ready=False,
        problems=("pytest is not installed ...",),
        interpreter=choice("poetry"),
        python=PYTHON,
        pytest=None,
        plugin_autoload=False,
    )
    ready = result.model_copy(
        update={
            "ready": True,
            "problems": (),
            "pytest": PytestInfo(version="8.3.2", location="x"),
            "plugins": (PluginInfo(name="pytest-cov", version="5.0.0", entry_points=("pytest_cov",), loaded=False),),
            "plugin_autoload": True,
            "rootdir": "/work/project",
            "configfile": "/work/project/pyproject.toml",
            "testpaths": ("tests", "docs"),
            "process_containment": "subreaper",
        }
    )

    presented = McpEnvironmentPresenter().present_environment(result)
    text = presented.content[0].text  # type: ignore[union-attr]
    assert text.splitlines()[:3] == [
        "NOT READY: no pytest; CPython 3.12.4",
        "PROBLEM pytest is not installed ...",
        f"interpreter: {PREFIX}/bin/python (rule poetry: found by poetry)",
    ]
    assert "plugin autoloading is off" in text
    assert presented.structured_content is not None
    assert presented.structured_content["pytest"] is None, "null, not left out: an agent can test for it"
    assert presented.structured_content["process_containment"] == "process_group"
    assert "a process a test starts in a session of its own can outlive it" in text

    text = McpEnvironmentPresenter().present_environment(ready).content[0].text  # type: ignore[union-attr]
    assert text.splitlines()[0] == "ready: pytest 8.3.2 on CPython 3.12.4"
    assert "rootdir: /work/project, configfile: pyproject.toml, testpaths: tests, docs" in text
    assert "plugins: pytest-cov 5.0.0 (not loaded)" in text
    assert "processes: every process a run starts is stopped at its end (child subreaper)" in text


@pytest.fixture
def container(tmp_path: Path) -> Container:
    return create_container(Settings(root=tmp_path, runner="fake", timeout=30, max_timeout=60))


@pytest.fixture
async def client(container: Container) -> AsyncIterator[Client]:
    async with Client(container.tool_server().server) as client:
        yield client


async def test_the_tool_is_listed_with_no_parameters_and_the_result_schema(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    schema = tools["check_environment"].input_schema
    assert schema["properties"] == {}
    assert schema["additionalProperties"] is False
    output = tools["check_environment"].output_schema
    assert output is not None
    assert {"ready", "problems", "interpreter", "python", "pytest", "plugins", "rootdir"} <= set(output["properties"])


async def test_with_the_fake_runner_the_tool_answers_from_the_fake_probe(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("check_environment", {})

    assert result.is_error is False
    assert result.structured_content is not None
    assert result.structured_content["ready"] is True
    assert result.structured_content["rootdir"] == str(tmp_path)
    assert result.structured_content["interpreter"]["path"] == "fake"


async def test_a_scripted_environment_without_pytest_reaches_the_agent_as_data(
    container: Container, tmp_path: Path
) -> None:
    no_pytest = facts(pytest=None, plugins=())
    container.fake_probe.override(FakeEnvironmentProbe(facts=no_pytest, interpreter=choice("virtual_env")))

    async with Client(container.tool_server().server, mode="auto") as client:
        with structlog.testing.capture_logs() as logs:
            result = await client.call_tool("check_environment", {})

    assert result.structured_content is not None
    assert result.structured_content["pytest"] is None
    assert result.structured_content["interpreter"]["rule"] == "virtual_env"
    assert f"install pytest into {PREFIX}" in result.content[0].text  # type: ignore[union-attr]
    events = [entry for entry in logs if entry["event"] == "tool_call"]
    assert [(event["tool"], event["outcome"]) for event in events] == [("check_environment", "ok")]


async def test_arguments_are_refused_as_invalid_params(client: Client) -> None:
    refused = await call_error(client, "check_environment", {"install": "pytest"})

    assert refused.code == -32602
    assert "install: unknown parameter; this tool takes no parameters" in refused.message
