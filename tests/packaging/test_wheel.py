"""CI installs what users install: the sdist and wheel built, checked, installed bare and driven over MCP.

Then every install line of the README runs against those files (ADR 0013).
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_mcp import __version__
from tests.answers import TOOLS
from tests.e2e.e2e_support import bound_port
from tests.packaging.packaging_support import (
    Artifacts,
    build,
    clean_copy,
    commands_dir,
    counts,
    distribution_name,
    install_lines,
    placed,
    run,
    session,
    tiny_project,
    tool,
    user_env,
    version_line,
)

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

VERSION_LINE = f"pytest-mcp {__version__}"
COMMANDS = (distribution_name(), "pytest-mcp")
# Files the server cannot run without; a wheel that lacks one fails here, not on a user's machine.
PACKAGE_DATA = (
    "pytest_mcp/py.typed",
    "pytest_mcp/adapters/mcp/tool_schemas.json",
    "pytest_mcp/adapters/pytest_subprocess/_plugin/_pytest_mcp_reporter.py",
    "pytest_mcp/adapters/pytest_subprocess/_plugin/_pytest_mcp_guard.py",
    "pytest_mcp/adapters/pytest_subprocess/_plugin/_pytest_mcp_bootstrap.py",
    "pytest_mcp/adapters/pytest_subprocess/_plugin/_pytest_mcp_probe.py",
    "pytest_mcp/adapters/pytest_subprocess/_plugin/_pytest_mcp_protocol.py",
    "pytest_mcp/adapters/pytest_subprocess/_plugin/_pytest_mcp_warden.py",
    "pytest_mcp/adapters/pytest_subprocess/_plugin/_pytest_mcp_testmon.py",
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("packaging")


@pytest.fixture(scope="module")
def artifacts(scratch: Path) -> Artifacts:
    return build(clean_copy(scratch / "clone"), scratch / "dist")


@pytest.fixture(scope="module")
def bare_venv(scratch: Path, artifacts: Artifacts) -> Path:
    """A new virtual environment where the README's `pip install` line ran: the wheel and its
    dependencies only, not editable, no dev extra.

    One venv for the tests of the installed commands and for the README's pip line: each install
    took 90 to 116 s here under load, and both installed the same wheel into a fresh venv. pip is told to
    take our package from the wheel only (not the sdist beside it), as the tests below assume.
    """
    (line,) = [line for line in install_lines().installs if line.startswith("pip ")]
    venv = scratch / "bare-venv"
    run([sys.executable, "-m", "venv", str(venv)])
    env = user_env(artifacts, scratch)
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env["PATH"]])  # the user's pip is this environment's
    env["PIP_ONLY_BINARY"] = distribution_name()

    run(["bash", "-c", line], env=env)
    return venv


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return tiny_project(tmp_path / "project")


def test_the_metadata_passes_twine_check(artifacts: Artifacts) -> None:
    output = run([tool("twine"), "check", "--strict", str(artifacts.sdist), str(artifacts.wheel)])

    assert output.count("PASSED") == 2, output


def test_the_wheel_is_this_distribution_with_its_commands_and_data(artifacts: Artifacts) -> None:
    metadata, entry_points, names = artifacts.wheel_metadata()

    assert (metadata["Name"], metadata["Version"]) == (distribution_name(), __version__)
    assert metadata["Description-Content-Type"] == "text/markdown"
    for command in COMMANDS:
        assert f"{command} = pytest_mcp.cli:main" in entry_points
    assert "pytest11" not in entry_points
    missing = [name for name in PACKAGE_DATA if name not in names]
    assert not missing, f"the wheel lacks {missing}"
    assert not [name for name in names if name.startswith("tests/")]


def test_the_sdist_carries_what_the_wheel_is_built_from(artifacts: Artifacts) -> None:
    with tarfile.open(artifacts.sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}

    assert {"pyproject.toml", "README.md"} <= names
    assert {f"src/{name}" for name in PACKAGE_DATA} <= names


def test_the_bare_environment_has_no_development_tools(bare_venv: Path) -> None:
    # The server runs without pytest of its own: the project's interpreter runs the tests. An
    # import of a dev-only module anywhere on the server's path fails in the sessions below.
    python = str(bare_venv / "bin" / "python")
    probe = "import importlib.util as u; print([m for m in ('pytest', 'xdist', 'hypothesis') if u.find_spec(m)])"
    found = run([python, "-c", probe])

    assert found.strip() == "[]"


@pytest.mark.parametrize("command", COMMANDS)
def test_each_installed_command_prints_the_version(bare_venv: Path, command: str) -> None:
    assert version_line([str(bare_venv / "bin" / command)]) == VERSION_LINE


@pytest.mark.anyio
@pytest.mark.parametrize("command", COMMANDS)
async def test_each_installed_command_serves_an_mcp_session(
    bare_venv: Path, artifacts: Artifacts, scratch: Path, project: Path, tmp_path: Path, command: str
) -> None:
    argv = [str(bare_venv / "bin" / command), "--root", str(project)]
    async with session(argv, user_env(artifacts, scratch), tmp_path / "server.log") as client:
        info = client.server_info
        listing = await client.list_tools()
        result = await client.call_tool("execute_tests", {})

    assert info is not None
    assert info.version == __version__
    assert {tool.name for tool in listing.tools} == TOOLS
    assert counts(result) == {"passed": 1, "failed": 1}


# --- the README's install lines -----------------------------------------------------------------


def test_every_readme_line_that_installs_or_starts_the_package_is_run_below() -> None:
    lines = install_lines()

    assert not lines.unrun, f"README lines no test runs: {lines.unrun}"
    assert lines.installs
    assert lines.servers
    assert lines.http
    assert all(argv[0] == "uvx" for _, argv in lines.servers), "client configurations start the server with uvx"
    assert [line.split()[0] for line in lines.installs] == ["pipx", "pip"], "uvx first, then pipx, then pip"


@pytest.mark.anyio
@pytest.mark.parametrize(("where", "argv"), install_lines().servers, ids=[w for w, _ in install_lines().servers])
async def test_each_readme_server_line_starts_a_working_server(
    artifacts: Artifacts, scratch: Path, project: Path, tmp_path: Path, where: str, argv: list[str]
) -> None:
    async with session(placed(argv, project), user_env(artifacts, scratch), tmp_path / "server.log") as client:
        info = client.server_info
        listing = await client.list_tools()
        result = await client.call_tool("execute_tests", {})

    assert info is not None
    assert info.version == __version__
    assert {tool.name for tool in listing.tools} == TOOLS
    assert counts(result) == {"passed": 1, "failed": 1}


def test_readme_pipx_install_line_installs_both_commands(artifacts: Artifacts, scratch: Path, tmp_path: Path) -> None:
    (line,) = [line for line in install_lines().installs if line.startswith("pipx ")]
    env = user_env(artifacts, scratch)
    env |= {
        name: str(tmp_path / where)
        for name, where in (("PIPX_HOME", "pipx"), ("PIPX_BIN_DIR", "bin"), ("PIPX_MAN_DIR", "man"))
    }
    env["PATH"] = os.pathsep.join([str(commands_dir(scratch, "pipx")), env["PATH"]])

    run(["bash", "-c", line], env=env)

    for command in COMMANDS:
        assert version_line([str(tmp_path / "bin" / command)]) == VERSION_LINE


def test_readme_pip_install_line_installs_both_commands(bare_venv: Path) -> None:
    # bare_venv is where the README's pip line ran.
    for command in COMMANDS:
        assert version_line([str(bare_venv / "bin" / command)]) == VERSION_LINE


@pytest.fixture
def served(artifacts: Artifacts, scratch: Path, project: Path, tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """The README's HTTP example run as written, but for the project and a port the OS picks."""
    (block,) = install_lines().http
    port_file = tmp_path / "http-server.port"
    script = block.replace("/srv/project", str(project)).replace("--port 8000", f"--port 0 --port-file {port_file}")
    log = tmp_path / "http-server.log"
    with log.open("w") as errlog:
        process = subprocess.Popen(
            ["bash", "-c", script],
            stdin=subprocess.DEVNULL,
            stdout=errlog,
            stderr=subprocess.STDOUT,
            env=user_env(artifacts, scratch),
            start_new_session=True,  # uvx and the server it starts are one process group
        )
    try:
        yield bound_port(process, port_file, log, within=120), log  # uvx may first install the package
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_readme_http_example_serves_and_healthz_reports_the_version(served: tuple[int, Path]) -> None:
    port, log = served
    deadline = time.monotonic() + 120  # uvx may first install the package and its dependencies
    while True:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/healthz")
            response = connection.getresponse()
            body = json.loads(response.read())
            break
        except OSError:
            assert time.monotonic() < deadline, f"the README's HTTP example never answered:\n{log.read_text()}"
            time.sleep(0.2)

    assert response.status == 200
    assert body == {"status": "ok", "version": __version__}
