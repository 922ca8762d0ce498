"""Interpreter detection: each rule, in its order, with the reasons earlier rules were passed over."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter, detect_interpreter, poetry_env_name
from pytest_mcp.domain.environment import InterpreterChoice

SERVER = Path("/opt/server/bin/python")


def make_venv(env_dir: Path, *, python: str = "python") -> Path:
    """A virtualenv as detection sees one: pyvenv.cfg and bin/python, here a link to a real interpreter."""
    (env_dir / "bin").mkdir(parents=True)
    (env_dir / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n")
    link = env_dir / "bin" / python
    link.symlink_to(sys.executable)
    return link


def fake_python3(directory: Path, *, has_pytest: bool) -> Path:
    """A `python3` for PATH whose `-c FIND_PYTEST` (find_spec) succeeds or fails, as asked."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "python3"
    script.write_text(f"#!/bin/sh\nexit {0 if has_pytest else 1}\n")
    script.chmod(0o755)
    return script


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    """No VIRTUAL_ENV, no python3 on PATH, and a HOME with no Poetry configuration."""
    home = tmp_path / "home"
    home.mkdir()
    empty = tmp_path / "empty-path"
    empty.mkdir()
    return {"PATH": str(empty), "HOME": str(home)}


def detect(root: Path, environ: dict[str, str], explicit: Path | None = None) -> InterpreterChoice:
    return detect_interpreter(root, explicit, environ=environ, server_python=SERVER)


def test_python_option_wins_over_every_other_rule(root: Path, environ: dict[str, str], tmp_path: Path) -> None:
    active = make_venv(tmp_path / "active")
    make_venv(root / ".venv")
    environ["VIRTUAL_ENV"] = str(active.parents[1])

    choice = detect(root, environ, explicit=Path("/opt/py/bin/python"))

    assert (choice.path, choice.rule) == (Path("/opt/py/bin/python"), "explicit")
    assert choice.passed_over == ()


def test_an_active_virtual_env_comes_before_the_project_venv(
    root: Path, environ: dict[str, str], tmp_path: Path
) -> None:
    active = make_venv(tmp_path / "active")
    make_venv(root / ".venv")
    environ["VIRTUAL_ENV"] = str(tmp_path / "active")

    choice = detect(root, environ)

    assert (choice.path, choice.rule) == (active, "virtual_env")
    assert choice.reason == f"$VIRTUAL_ENV={tmp_path / 'active'}"
    assert choice.passed_over == ("--python: not given",)


def test_virtual_env_is_read_from_the_process_environment_by_default(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    active = make_venv(tmp_path / "active")
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "active"))

    choice = detect_interpreter(root, None)

    assert (choice.path, choice.rule) == (active, "virtual_env")


def test_a_virtual_env_without_an_interpreter_is_passed_over_with_the_reason(
    root: Path, environ: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "gone").mkdir()
    venv_python = make_venv(root / ".venv")
    environ["VIRTUAL_ENV"] = str(tmp_path / "gone")

    choice = detect(root, environ)

    assert (choice.path, choice.rule, choice.reason) == (venv_python, "project_venv", "ROOT/.venv")
    assert f"$VIRTUAL_ENV={tmp_path / 'gone'}: has no bin/python" in choice.passed_over


def test_the_project_venv_keeps_its_symlink_unresolved(root: Path, environ: dict[str, str]) -> None:
    venv_python = make_venv(root / ".venv")

    choice = detect(root, environ)

    assert choice.path == venv_python
    assert choice.path.is_symlink(), "resolving the link would leave the virtualenv"


def test_root_venv_counts_only_when_it_is_a_virtualenv(root: Path, environ: dict[str, str]) -> None:
    package = root / "venv" / "bin"
    package.mkdir(parents=True)
    (package / "python").write_text("not a virtualenv, just a package called venv\n")
    assert detect(root, environ).rule == "server"

    (root / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    choice = detect(root, environ)

    assert (choice.path, choice.rule, choice.reason) == (package / "python", "project_venv", "ROOT/venv")


def test_a_broken_venv_link_is_not_an_interpreter(root: Path, environ: dict[str, str]) -> None:
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "bin" / "python").symlink_to(root / "removed-python")

    assert detect(root, environ).rule == "server"


def test_a_uv_project_environment_comes_from_uv_project_environment_relative_to_the_project(
    root: Path, environ: dict[str, str]
) -> None:
    (root / "uv.lock").write_text("version = 1\n")
    env_python = make_venv(root / "envs" / "dev")
    environ["UV_PROJECT_ENVIRONMENT"] = "envs/dev"

    choice = detect(root, environ)

    assert (choice.path, choice.rule) == (env_python, "uv")
    assert choice.reason == "uv project (uv.lock), UV_PROJECT_ENVIRONMENT=envs/dev"


def test_uv_project_environment_may_be_absolute_and_tool_uv_marks_a_project(
    root: Path, environ: dict[str, str], tmp_path: Path
) -> None:
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n\n[tool.uv]\ndev-dependencies = []\n")
    env_python = make_venv(tmp_path / "elsewhere")
    environ["UV_PROJECT_ENVIRONMENT"] = str(tmp_path / "elsewhere")

    choice = detect(root, environ)

    assert (choice.path, choice.rule) == (env_python, "uv")


def test_a_uv_workspace_member_uses_the_workspace_environment(root: Path, environ: dict[str, str]) -> None:
    (root / "pyproject.toml").write_text("[tool.uv.workspace]\nmembers = ['packages/*']\n")
    (root / "uv.lock").write_text("version = 1\n")
    member = root / "packages" / "lib"
    member.mkdir(parents=True)
    (member / "pyproject.toml").write_text("[project]\nname = 'lib'\n")
    workspace_python = make_venv(root / ".venv")

    choice = detect(member, environ)

    assert (choice.path, choice.rule) == (workspace_python, "uv")
    assert f"member of the workspace at {root}" in choice.reason


def test_uv_project_environment_is_ignored_outside_a_uv_project(root: Path, environ: dict[str, str]) -> None:
    make_venv(root / "envs" / "dev")
    environ["UV_PROJECT_ENVIRONMENT"] = "envs/dev"

    choice = detect(root, environ)

    assert choice.rule == "server"
    assert "uv: not a uv project (no uv.lock or [tool.uv])" in choice.passed_over


def test_an_unsynced_uv_project_says_to_sync(root: Path, environ: dict[str, str]) -> None:
    (root / "uv.lock").write_text("version = 1\n")

    choice = detect(root, environ)

    assert choice.rule == "server"
    assert "uv: uv project (uv.lock) whose ROOT/.venv does not exist yet (run `uv sync`)" in choice.passed_over


def test_poetry_env_name_follows_poetrys_generate_env_name() -> None:
    # The hash was computed independently: printf %s /srv/projects/demo | openssl dgst -sha256 -binary
    #   | base64 | tr '+/' '-_' | cut -c1-8
    assert poetry_env_name("My.Project_Name", Path("/srv/projects/demo")) == "my-project-name-n-L7f6T5"


def poetry_project(root: Path, name: str = "demo-app") -> str:
    (root / "pyproject.toml").write_text(f"[tool.poetry]\nname = '{name}'\nversion = '0.1.0'\n")
    (root / "poetry.lock").write_text("# locked\n")
    return poetry_env_name(name, root)


def test_a_poetry_project_environment_is_found_in_poetrys_virtualenvs_path(
    root: Path, environ: dict[str, str], tmp_path: Path
) -> None:
    base = poetry_project(root)
    env_python = make_venv(tmp_path / "venvs" / f"{base}-py3.11")
    environ["POETRY_VIRTUALENVS_PATH"] = str(tmp_path / "venvs")

    choice = detect(root, environ)

    assert (choice.path, choice.rule) == (env_python, "poetry")


def test_poetrys_default_cache_dir_holds_its_virtualenvs(root: Path, environ: dict[str, str]) -> None:
    base = poetry_project(root)
    cache = Path(environ["HOME"]) / ".cache" / "pypoetry"
    if sys.platform == "darwin":
        cache = Path(environ["HOME"]) / "Library" / "Caches" / "pypoetry"
    env_python = make_venv(cache / "virtualenvs" / f"{base}-py3.12")

    assert detect(root, environ).path == env_python

    environ["POETRY_CACHE_DIR"] = str(Path(environ["HOME"]) / "elsewhere")
    assert detect(root, environ).rule == "server", "POETRY_CACHE_DIR moves the default virtualenvs path"


def test_poetrys_global_config_file_sets_the_virtualenvs_path(
    root: Path, environ: dict[str, str], tmp_path: Path
) -> None:
    base = poetry_project(root)
    config_dir = tmp_path / "poetry-config"
    config_dir.mkdir()
    (config_dir / "config.toml").write_text(f"[virtualenvs]\npath = '{tmp_path / 'from-config'}'\n")
    env_python = make_venv(tmp_path / "from-config" / f"{base}-py3.11")
    environ["POETRY_CONFIG_DIR"] = str(config_dir)

    assert detect(root, environ).path == env_python


def test_poetrys_envs_file_picks_the_active_python_of_several(
    root: Path, environ: dict[str, str], tmp_path: Path
) -> None:
    base = poetry_project(root)
    venvs = tmp_path / "venvs"
    older = make_venv(venvs / f"{base}-py3.10")
    newer = make_venv(venvs / f"{base}-py3.12")
    environ["POETRY_VIRTUALENVS_PATH"] = str(venvs)

    assert detect(root, environ).path == newer, "without envs.toml, the newest Python"

    (venvs / "envs.toml").write_text(f'[{base}]\nminor = "3.10"\npatch = "3.10.13"\n')
    assert detect(root, environ).path == older


def test_poetry_prefers_the_project_name_of_pep_621(root: Path, environ: dict[str, str], tmp_path: Path) -> None:
    (root / "pyproject.toml").write_text("[project]\nname = 'modern'\n\n[tool.poetry]\npackage-mode = false\n")
    env_python = make_venv(tmp_path / "venvs" / f"{poetry_env_name('modern', root)}-py3.11")
    environ["POETRY_VIRTUALENVS_PATH"] = str(tmp_path / "venvs")

    assert detect(root, environ).path == env_python


@pytest.mark.parametrize(
    ("setting", "local_file", "said"),
    [
        ("POETRY_VIRTUALENVS_IN_PROJECT", "", "virtualenvs.in-project, but ROOT/.venv does not exist"),
        ("POETRY_VIRTUALENVS_CREATE", "", "virtualenvs.create = false"),
        (None, "[virtualenvs]\nin-project = true\n", "virtualenvs.in-project, but ROOT/.venv does not exist"),
    ],
)
def test_poetry_settings_that_rule_out_a_cached_environment_are_respected(
    root: Path, environ: dict[str, str], tmp_path: Path, setting: str | None, local_file: str, said: str
) -> None:
    base = poetry_project(root)
    make_venv(tmp_path / "venvs" / f"{base}-py3.11")
    environ["POETRY_VIRTUALENVS_PATH"] = str(tmp_path / "venvs")
    if setting == "POETRY_VIRTUALENVS_CREATE":
        environ[setting] = "false"
    elif setting is not None:
        environ[setting] = "true"
    if local_file:
        (root / "poetry.toml").write_text(local_file)

    choice = detect(root, environ)

    assert choice.rule == "server"
    assert any(said in reason for reason in choice.passed_over), choice.passed_over


def test_python3_on_path_is_chosen_only_if_it_can_import_pytest(
    root: Path, environ: dict[str, str], tmp_path: Path
) -> None:
    without = fake_python3(tmp_path / "without", has_pytest=False)
    with_pytest = fake_python3(tmp_path / "with", has_pytest=True)

    environ["PATH"] = os.pathsep.join([str(without.parent), str(with_pytest.parent)])
    choice = detect(root, environ)
    assert choice.rule == "server", "the first python3 on PATH is the one asked, and it has no pytest"
    assert f"python3 on PATH ({without}): no pytest" in choice.passed_over

    environ["PATH"] = str(with_pytest.parent)
    choice = detect(root, environ)
    assert (choice.path, choice.rule, choice.reason) == (with_pytest, "path", f"python3 on PATH: {with_pytest}")


def test_the_server_interpreter_is_the_last_resort_and_says_what_was_tried(root: Path, environ: dict[str, str]) -> None:
    choice = detect(root, environ)

    assert (choice.path, choice.rule) == (SERVER, "server")
    assert choice.passed_over == (
        "--python: not given",
        "$VIRTUAL_ENV: not set",
        "ROOT/.venv, ROOT/venv: no virtualenv with a python",
        "uv: not a uv project (no uv.lock or [tool.uv])",
        "poetry: not a Poetry project (no poetry.lock or [tool.poetry])",
        "python3 on PATH: not found",
    )
    assert detect_interpreter(root, None, environ=environ).path == Path(sys.executable)


def test_unreadable_project_files_do_not_stop_detection(root: Path, environ: dict[str, str]) -> None:
    (root / "pyproject.toml").write_text("[tool.poetry\nname = ")
    (root / "poetry.toml").write_bytes(b"\xff\xfe")

    assert detect(root, environ).rule == "server"


def slow_detection(seconds: float, choice: InterpreterChoice | Exception) -> Any:
    def detect(root: Path, explicit: Path | None) -> InterpreterChoice:
        time.sleep(seconds)
        if isinstance(choice, Exception):
            raise choice
        return choice

    return detect


PATH_CHOICE = InterpreterChoice(path=Path("/usr/bin/python3"), rule="path", reason="python3 on PATH")


@pytest.mark.anyio
async def test_detection_runs_in_the_background_and_the_first_call_waits_for_it(root: Path) -> None:
    started = time.perf_counter()
    interpreter = TargetInterpreter(root, detect=slow_detection(0.5, PATH_CHOICE))
    built_in = time.perf_counter() - started

    assert built_in < 0.1, "building the container must not wait for detection"
    assert await interpreter.choice() == PATH_CHOICE
    assert time.perf_counter() - started >= 0.5
    assert await interpreter.choice() == PATH_CHOICE  # detected once


@pytest.mark.anyio
async def test_a_detection_that_failed_fails_the_call_that_needs_it(root: Path) -> None:
    interpreter = TargetInterpreter(root, detect=slow_detection(0.1, RuntimeError("rule crashed")))

    with pytest.raises(RuntimeError, match="rule crashed"):
        await interpreter.choice()


@pytest.mark.anyio
async def test_waiting_for_detection_can_be_cancelled(root: Path) -> None:
    interpreter = TargetInterpreter(root, detect=slow_detection(3.0, PATH_CHOICE))
    started = time.perf_counter()

    with anyio.move_on_after(0.2):
        await interpreter.choice()

    assert time.perf_counter() - started < 1.0


@pytest.mark.anyio
async def test_an_explicit_interpreter_needs_no_detection(root: Path) -> None:
    def never(root: Path, explicit: Path | None) -> InterpreterChoice:
        raise AssertionError("detection ran although --python was given")

    choice = await TargetInterpreter(root, Path("/srv/env/bin/python"), detect=never).choice()

    assert (choice.path, choice.rule) == (Path("/srv/env/bin/python"), "explicit")
    assert (await TargetInterpreter.given(Path("/x/python")).choice()).rule == "explicit"
