"""Start-up stays lean: serving over stdio loads only the stdio path, and detection imports no pytest."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_mcp.adapters.concurrency_limit import ConcurrencyLimitedProbe, ConcurrencyLimitedRunner
from pytest_mcp.adapters.fake.environment import FakeEnvironmentProbe
from pytest_mcp.adapters.fake.recording import DomainResults, RunRecorder
from pytest_mcp.adapters.fake.runner import FakeTestRunner
from pytest_mcp.adapters.mcp.environment_presenter import McpEnvironmentPresenter
from pytest_mcp.adapters.mcp.http_transport import HttpOptions, HttpTransport
from pytest_mcp.adapters.mcp.presenter import McpPresenter
from pytest_mcp.adapters.pytest_subprocess.environment import SubprocessEnvironmentProbe
from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter, pytest_is_installed
from pytest_mcp.adapters.pytest_subprocess.runner import ResourceLimits, SubprocessPytestRunner
from pytest_mcp.container import create_container
from pytest_mcp.domain.check_environment import CheckEnvironment
from pytest_mcp.domain.discover_tests import DiscoverTests
from pytest_mcp.domain.execute_tests import ExecuteTests
from pytest_mcp.settings import Settings

# Adapters the default path (stdio, subprocess runner) never needs; the container imports each
# one only when its provider is built. And pytest itself: the server runs it in a subprocess only.
OFF_THE_STDIO_PATH = (
    "pytest_mcp.adapters.mcp.http_transport",
    "pytest_mcp.adapters.fake.runner",
    "pytest_mcp.adapters.fake.environment",
    "pytest_mcp.adapters.fake.recording",
    "pytest_mcp.testing",
    "pytest",
    "_pytest",
)

# Runs `pytest-mcp` up to the moment it would start serving, then prints what was imported.
SERVE_UNTIL_READY = textwrap.dedent(
    """
    import json, sys
    import anyio
    from pydantic import BaseModel
    from pytest_mcp.cli import main

    def models(base):
        for model in base.__subclasses__():
            yield model
            yield from models(model)

    def ready(serving, serve, *args):
        built = sorted(
            f"{model.__module__}.{model.__qualname__}"
            for model in models(BaseModel)
            if model.__module__.startswith("pytest_mcp.domain") and model.__pydantic_complete__
        )
        print(json.dumps({"serving": type(serve.__self__).__name__, "modules": sorted(sys.modules), "built": built}))
        return 0

    anyio.run = ready
    main(sys.argv[1:])
    """
)


def _serve_until_ready(*args: str, cwd: Path, path: str | None = None) -> tuple[str, set[str]]:
    """The transport `pytest-mcp ARGS` would serve with, and every module imported by then."""
    return _serving_and_modules(_ready(*args, cwd=cwd, path=path))


def _serving_and_modules(ready: dict[str, Any]) -> tuple[str, set[str]]:
    return ready["serving"], set(ready["modules"])


def _ready(*args: str, cwd: Path, path: str | None = None) -> dict[str, Any]:
    """What `pytest-mcp ARGS` has done by the time it would start serving."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_MCP_")}
    if path is not None:  # detection reaches its python3-on-PATH rule
        env.pop("VIRTUAL_ENV", None)
        env["PATH"] = path
    completed = subprocess.run(
        [sys.executable, "-c", SERVE_UNTIL_READY, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    ready: dict[str, Any] = json.loads(completed.stdout.splitlines()[-1])
    return ready


# What the first call imports: the use cases, the result models, the runner and the presenters.
# Listing the tools needs none of them (about 12 ms of every start-up).
FIRST_CALL_ONLY = (
    "pytest_mcp.domain.execute_tests",
    "pytest_mcp.domain.discover_tests",
    "pytest_mcp.domain.check_environment",
    "pytest_mcp.domain.models",
    "pytest_mcp.domain.runs",
    "pytest_mcp.adapters.concurrency_limit",
    "pytest_mcp.adapters.pytest_subprocess.runner",
    "pytest_mcp.adapters.pytest_subprocess.interpreter",
    "pytest_mcp.adapters.mcp.presenter",
    "pytest_mcp.adapters.mcp.environment_presenter",
)


@pytest.fixture(scope="module")
def default_start(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What `pytest-mcp --root EMPTY --python OURS` (stdio, the default) has done when it would serve.

    The tests below read different parts of this one start-up, each a start of the whole server
    (about 3 s of an idle machine), so the module starts it once; the tests only read it.
    """
    root = tmp_path_factory.mktemp("default-start")
    return _ready("--root", str(root), "--python", sys.executable, cwd=root)


def test_serving_builds_no_domain_model_until_a_call_needs_it(default_start: dict[str, Any]) -> None:
    # The tool listing comes from tool_schemas.json; building the models' validators would cost
    # every start-up about 5 ms, so they are built (defer_build) on first use.
    assert list(default_start["built"]) == []


def test_serving_imports_no_use_case_runner_or_result_model_until_a_call_needs_them(
    default_start: dict[str, Any],
) -> None:
    _, modules = _serving_and_modules(default_start)

    assert "pytest_mcp.domain.requests" in modules  # the tool listing's input schemas need it
    assert sorted(modules.intersection(FIRST_CALL_ONLY)) == []


@pytest.mark.parametrize("runner", ["subprocess", "fake"])
def test_every_provider_the_container_defers_still_builds_what_it_names(tmp_path: Path, runner: str) -> None:
    container = create_container(Settings(root=tmp_path, runner=runner, python=Path(sys.executable), transport="http"))
    runners = {"subprocess": SubprocessPytestRunner, "fake": FakeTestRunner}
    probes = {"subprocess": SubprocessEnvironmentProbe, "fake": FakeEnvironmentProbe}

    assert isinstance(container.execute_tests(), ExecuteTests)
    assert isinstance(container.discover_tests(), DiscoverTests)
    assert isinstance(container.check_environment(), CheckEnvironment)
    # One use case of each per server, built by the first call that needs it.
    assert container.execute_tests() is container.execute_tests()
    assert container.check_environment() is container.check_environment()
    assert isinstance(container.runner(), ConcurrencyLimitedRunner)
    assert isinstance(container.runner().inner, runners[runner])
    assert isinstance(container.presenter(), McpPresenter)
    assert isinstance(container.environment_probe(), ConcurrencyLimitedProbe)
    assert isinstance(container.environment_probe().inner, probes[runner])
    assert container.environment_probe().slots is container.runner().slots, "one limit for every process"
    assert isinstance(container.environment_presenter(), McpEnvironmentPresenter)
    assert isinstance(container.interpreter(), TargetInterpreter)
    assert isinstance(container.resource_limits(), ResourceLimits)
    assert isinstance(container.recorder(), RunRecorder)
    assert isinstance(container.domain_results(), DomainResults)
    assert isinstance(container.transport(), HttpTransport)
    assert isinstance(container.http_options(), HttpOptions)


def test_serving_over_stdio_imports_no_http_fake_or_recording_adapter_and_no_pytest(
    default_start: dict[str, Any],
) -> None:
    serving, modules = _serving_and_modules(default_start)

    assert serving == "StdioTransport"
    assert "pytest_mcp.adapters.mcp.stdio_transport" in modules
    assert sorted(modules.intersection(OFF_THE_STDIO_PATH)) == []


def test_serving_does_not_import_rich_although_structlog_would(default_start: dict[str, Any]) -> None:
    # import-linter installs rich here, as many users' environments do; structlog imports it if it can.
    assert importlib.util.find_spec("rich") is not None, "this test needs rich installed to mean anything"

    _, modules = _serving_and_modules(default_start)

    assert "structlog" in modules
    assert "rich" not in modules


@pytest.mark.parametrize(
    "argv",
    [["--max-sessions", "0"], ["--port", "abc"], ["call", "execute_tests", "--root", "/nonexistent-root"]],
    ids=["setting", "flag", "call"],
)
def test_a_refused_command_line_is_refused_before_the_sdk_is_imported(argv: list[str]) -> None:
    # The SDK's import is most of a start-up (1.6 s of CPU): a refusal took 2.7 s, now under 1.
    code = (
        "import sys\nfrom pytest_mcp.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit as exc:\n    code = exc.code\n"
        "print(json.dumps({'code': code, 'sdk': 'mcp' in sys.modules}))\n"
    )
    done = subprocess.run([sys.executable, "-c", "import json\n" + code], capture_output=True, text=True, timeout=60)

    assert json.loads(done.stdout.splitlines()[-1]) == {"code": 2, "sdk": False}, done.stderr
    assert "pytest-mcp:" in done.stderr


FIRST_CALL_AFTER_THE_WARM_UP = textwrap.dedent(
    """
    import json, sys
    import anyio, anyio.to_thread
    from mcp import Client
    from pytest_mcp.container import create_container
    from pytest_mcp.settings import Settings

    container = create_container(Settings(root=sys.argv[1], python=sys.executable))
    server = container.tool_server().server  # built before serving, as _serve does

    async def main():
        await anyio.to_thread.run_sync(container.first_call_imports())
        before = set(sys.modules)
        async with Client(server) as client:
            result = await client.call_tool("execute_tests", {})
        new = sorted(name for name in set(sys.modules) - before if name.startswith("pytest_mcp"))
        print(json.dumps({"new": new, "error": result.is_error}))

    anyio.run(main)
    """
)


def test_once_serving_a_thread_imports_all_that_the_first_call_would_import_on_the_event_loop(tmp_path: Path) -> None:
    # The first run's steps imported the runner's modules on the loop: 89 and 45 ms of CPU, once
    # per server, in which no client was answered (ADR 0022). Start-up leaves them out (above).
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert 1 == 2\n")
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CALL_AFTER_THE_WARM_UP, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )

    assert json.loads(done.stdout.splitlines()[-1]) == {"new": [], "error": False}, done.stderr[-2000:]


@pytest.mark.parametrize("runner", ["subprocess", "fake"])
def test_what_the_first_call_imports_can_be_imported_for_each_runner(tmp_path: Path, runner: str) -> None:
    container = create_container(Settings(root=tmp_path, python=sys.executable, runner=runner))

    container.first_call_imports()()  # raises if a module it names is gone


def test_rich_stays_importable_after_the_server_imported_structlog() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", "from pytest_mcp import cli; cli._import_structlog_without_rich(); import rich"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr


def test_serving_starts_without_waiting_for_a_slow_python3_on_path(tmp_path: Path) -> None:
    # The python3 on PATH writes its pid, then blocks until the test opens the gate, which it does
    # only after the server said it would serve. A server that waited for it could only have got
    # there by killing it when PYTEST_CHECK_TIMEOUT ran out; one that does not wait leaves it
    # unstarted (detection starts with the first call) or still blocked.
    slow = tmp_path / "slow-bin"
    slow.mkdir()
    started, gate = tmp_path / "python3.pid", tmp_path / "gate"
    os.mkfifo(gate)
    (slow / "python3").write_text(f"#!/bin/sh\necho $$ > {started}\nread _ < {gate}\n")
    (slow / "python3").chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()

    try:
        serving, _ = _serve_until_ready("--root", str(project), cwd=project, path=f"{slow}{os.pathsep}{os.defpath}")

        assert serving == "StdioTransport"
        if started.exists():
            pid = int(started.read_text())
            assert Path(f"/proc/{pid}").exists(), "start-up waited for python3 on PATH until it had to kill it"
    finally:
        with contextlib.suppress(OSError):  # ENXIO: nothing reads the gate, so there is nothing to release
            os.close(os.open(gate, os.O_WRONLY | os.O_NONBLOCK))


def test_the_python3_on_path_check_finds_pytest_without_importing_it(tmp_path: Path) -> None:
    # python3 starts in ROOT, so ROOT/pytest.py is what it finds; importing it would leave a mark.
    mark = tmp_path / "imported"
    (tmp_path / "pytest.py").write_text(f"open({str(mark)!r}, 'w').close()\n")

    assert pytest_is_installed(Path(sys.executable), tmp_path)
    assert not mark.exists()
