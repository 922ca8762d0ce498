"""check_environment for real: each detection rule picks a real interpreter, and the real probe reads it.

Everything goes through the production container (detection, SubprocessEnvironmentProbe, the
use case, McpPresenter-side rendering), with the process environment set the way each rule needs.
Virtualenvs are made with `python -m venv --without-pip`; one "with pytest" gets it through a
.pth line pointing at this suite's own site-packages, so nothing is downloaded or installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_mcp.adapters.pytest_subprocess.interpreter import poetry_env_name
from pytest_mcp.container import create_container
from pytest_mcp.domain.errors import ExecutionFailed
from pytest_mcp.domain.requests import CheckEnvironmentRequest
from pytest_mcp.settings import Settings
from tests.integration.support import snapshot

pytestmark = pytest.mark.anyio

OUR_SITE_PACKAGES = sysconfig.get_paths()["purelib"]
PYENV = Path(os.environ.get("PYENV_ROOT", "/root/.pyenv")) / "versions"


def make_venv(env_dir: Path, *, with_pytest: bool) -> Path:
    """A real virtualenv without pip; with pytest (and this suite's plugins) visible through a .pth file."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=60)
    if with_pytest:
        (site_packages,) = env_dir.glob("lib/python*/site-packages")
        (site_packages / "dev_site_packages.pth").write_text(OUR_SITE_PACKAGES + "\n")
    return env_dir / "bin" / "python"


def interpreter(version: str) -> Path:
    """A pyenv interpreter `version` (e.g. 3.9), or skip: they exist on the development image only."""
    found = sorted(PYENV.glob(f"{version}.*/bin/python"))
    if not found:
        pytest.skip(f"no Python {version} under {PYENV}")
    return found[-1]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [project]
            name = "demo-app"
            version = "0.1.0"

            [tool.pytest.ini_options]
            testpaths = ["tests"]
            """
        )
    )
    (root / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    return root


@pytest.fixture
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A process environment in which no rule applies by accident: no venv, no python3 on PATH, a bare HOME."""
    for name in list(os.environ):
        if name == "VIRTUAL_ENV" or name.startswith(("POETRY_", "UV_", "PYTEST_")):
            monkeypatch.delenv(name)
    (tmp_path / "home").mkdir()
    (tmp_path / "empty-path").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    return monkeypatch


async def check(root: Path, python: Path | None = None) -> dict[str, Any]:
    container = create_container(Settings(root=root, python=python))
    result = await container.check_environment().execute(CheckEnvironmentRequest())
    assert result.structured_content is not None
    structured: dict[str, Any] = result.structured_content
    # The runner is wired with the interpreter the check reports on: one detection, shared.
    assert str((await container.interpreter().choice()).path) == structured["interpreter"]["path"]
    assert container.subprocess_runner()._interpreter is container.interpreter()
    structured["text"] = result.content[0].text  # type: ignore[union-attr]
    return structured


def assert_ready_with_our_pytest(answer: dict[str, Any], env_dir: Path, root: Path) -> None:
    assert answer["ready"] is True, answer["problems"]
    assert answer["python"]["prefix"] == str(env_dir)
    assert answer["python"]["virtual_env"] is True
    assert answer["pytest"]["version"] == pytest.__version__
    assert answer["pytest"]["location"].startswith(OUR_SITE_PACKAGES)
    assert (answer["rootdir"], answer["configfile"], answer["testpaths"]) == (
        str(root),
        str(root / "pyproject.toml"),
        ["tests"],
    )
    plugins = {plugin["name"]: plugin for plugin in answer["plugins"]}
    assert plugins["pytest-json-report"]["entry_points"] == ["pytest_jsonreport"]
    assert plugins["pytest-json-report"]["loaded"] is True


async def test_rule_explicit_python_without_pytest_says_install_pytest_into_it(
    project: Path, tmp_path: Path, environment: pytest.MonkeyPatch
) -> None:
    make_venv(project / ".venv", with_pytest=True)
    python = make_venv(tmp_path / "bare", with_pytest=False)

    answer = await check(project, python)

    assert answer["interpreter"]["rule"] == "explicit"
    assert answer["interpreter"]["path"] == str(python)
    assert answer["ready"] is False
    assert answer["pytest"] is None
    assert answer["plugins"] == []
    (problem,) = answer["problems"]
    assert f"install pytest into {tmp_path / 'bare'}" in problem
    assert "No module named 'pytest'" in problem
    assert answer["text"].startswith("NOT READY: no pytest; CPython")


async def test_rule_virtual_env(project: Path, tmp_path: Path, environment: pytest.MonkeyPatch) -> None:
    make_venv(tmp_path / "active", with_pytest=True)
    make_venv(project / ".venv", with_pytest=False)
    environment.setenv("VIRTUAL_ENV", str(tmp_path / "active"))

    answer = await check(project)

    assert answer["interpreter"]["rule"] == "virtual_env"
    assert_ready_with_our_pytest(answer, tmp_path / "active", project)


@pytest.mark.parametrize("name", [".venv", "venv"])
async def test_rule_project_venv(name: str, project: Path, environment: pytest.MonkeyPatch) -> None:
    make_venv(project / name, with_pytest=True)

    answer = await check(project)

    assert (answer["interpreter"]["rule"], answer["interpreter"]["reason"]) == ("project_venv", f"ROOT/{name}")
    assert_ready_with_our_pytest(answer, project / name, project)


async def test_rule_uv_project_environment(project: Path, environment: pytest.MonkeyPatch) -> None:
    (project / "uv.lock").write_text("version = 1\n")
    make_venv(project / "envs" / "dev", with_pytest=True)
    environment.setenv("UV_PROJECT_ENVIRONMENT", "envs/dev")

    answer = await check(project)

    assert answer["interpreter"]["rule"] == "uv"
    assert_ready_with_our_pytest(answer, project / "envs" / "dev", project)


async def test_rule_uv_without_pytest_suggests_uv_add(project: Path, environment: pytest.MonkeyPatch) -> None:
    (project / "uv.lock").write_text("version = 1\n")
    make_venv(project / "envs" / "dev", with_pytest=False)
    environment.setenv("UV_PROJECT_ENVIRONMENT", "envs/dev")

    answer = await check(project)

    assert answer["interpreter"]["rule"] == "uv"
    (problem,) = answer["problems"]
    assert f"install pytest into {project / 'envs' / 'dev'}, e.g. with `uv add --dev pytest`" in problem


async def test_rule_poetry_environment(project: Path, tmp_path: Path, environment: pytest.MonkeyPatch) -> None:
    (project / "poetry.lock").write_text("# locked\n")
    minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    env_dir = tmp_path / "poetry-venvs" / f"{poetry_env_name('demo-app', project)}-py{minor}"
    make_venv(env_dir, with_pytest=True)
    environment.setenv("POETRY_VIRTUALENVS_PATH", str(tmp_path / "poetry-venvs"))

    answer = await check(project)

    assert answer["interpreter"]["rule"] == "poetry"
    assert_ready_with_our_pytest(answer, env_dir, project)


async def test_rule_python3_on_path(project: Path, tmp_path: Path, environment: pytest.MonkeyPatch) -> None:
    python = make_venv(tmp_path / "on-path", with_pytest=True)
    environment.setenv("PATH", str(python.parent))

    answer = await check(project)

    assert (answer["interpreter"]["rule"], answer["interpreter"]["path"]) == ("path", str(python.parent / "python3"))
    assert_ready_with_our_pytest(answer, tmp_path / "on-path", project)


async def test_rule_server_interpreter_is_the_last_resort(project: Path, environment: pytest.MonkeyPatch) -> None:
    answer = await check(project)

    assert (answer["interpreter"]["rule"], answer["interpreter"]["path"]) == ("server", sys.executable)
    assert len(answer["interpreter"]["passed_over"]) == 6
    assert answer["ready"] is True
    assert answer["python"]["prefix"] == sys.prefix


async def test_python3_on_path_without_pytest_is_passed_over(
    project: Path, tmp_path: Path, environment: pytest.MonkeyPatch
) -> None:
    python = make_venv(tmp_path / "on-path", with_pytest=False)
    environment.setenv("PATH", str(python.parent))

    answer = await check(project)

    assert answer["interpreter"]["rule"] == "server"
    assert f"python3 on PATH ({python.parent / 'python3'}): no pytest" in answer["interpreter"]["passed_over"]


async def test_the_probe_imports_no_conftest_and_leaves_the_project_untouched(
    project: Path, tmp_path: Path, environment: pytest.MonkeyPatch
) -> None:
    (project / "conftest.py").write_text(f"open({str(tmp_path / 'conftest-ran')!r}, 'w').close()\n")
    before = snapshot(project)

    answer = await check(project, Path(sys.executable))

    assert answer["ready"] is True
    assert not (tmp_path / "conftest-ran").exists()
    assert snapshot(project) == before
    assert not (project / ".pytest_cache").exists()


async def test_configuration_pytest_refuses_is_a_problem(project: Path, environment: pytest.MonkeyPatch) -> None:
    (project / "pytest.ini").write_text("[pytest]\nrequired_plugins = pytest-not-installed-anywhere\n")

    answer = await check(project, Path(sys.executable))

    assert answer["ready"] is False
    (problem,) = answer["problems"]
    assert "Missing required plugins: pytest-not-installed-anywhere" in problem


async def test_disabled_autoloading_shows_plugins_as_installed_but_not_loaded(
    project: Path, environment: pytest.MonkeyPatch
) -> None:
    environment.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    environment.setenv("PYTEST_ADDOPTS", "-p pytest_jsonreport")

    answer = await check(project, Path(sys.executable))

    assert answer["plugin_autoload"] is False
    plugins = {plugin["name"]: plugin["loaded"] for plugin in answer["plugins"]}
    assert plugins["pytest-json-report"] is True, "-p loads it anyway"
    assert plugins["hypothesis"] is False


async def test_an_interpreter_that_cannot_start_is_an_error_naming_it(
    project: Path, tmp_path: Path, environment: pytest.MonkeyPatch
) -> None:
    not_executable = tmp_path / "python"
    not_executable.write_text("")

    with pytest.raises(ExecutionFailed) as failed:
        await check(project, not_executable)

    assert failed.value.reason == "pytest_unavailable"
    assert f"{not_executable} (chosen by --python" in failed.value.message
    assert "cannot be started (Permission denied)" in failed.value.message


async def test_python_3_9_runs_the_probe(project: Path, environment: pytest.MonkeyPatch) -> None:
    python = interpreter("3.9")

    answer = await check(project, python)

    assert answer["python"]["version"].startswith("3.9.")
    if answer["pytest"] is None:
        assert f"install pytest into {answer['python']['prefix']}" in answer["problems"][0]


async def test_python_3_8_is_reported_as_too_old(project: Path, environment: pytest.MonkeyPatch) -> None:
    answer = await check(project, interpreter("3.8"))

    assert answer["python"]["version"].startswith("3.8.")
    assert "older than 3.9" in answer["problems"][0]


async def test_python_2_cannot_run_the_probe_and_the_error_says_so(
    project: Path, environment: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ExecutionFailed) as failed:
        await check(project, interpreter("2.7"))

    assert failed.value.reason == "pytest_unavailable"
    assert "pytest-mcp needs Python 3.9 or newer" in failed.value.message
