"""check_environment through the installed console script and a real MCP client over stdio."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.answers import call_error
from tests.e2e.e2e_support import Server, clean_env, structured, text_of, write_project

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


def make_venv(env_dir: Path, *, with_pytest: bool) -> Path:
    """A virtualenv without pip; with pytest visible through a .pth line to this suite's site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=60)
    if with_pytest:
        (site_packages,) = env_dir.glob("lib/python*/site-packages")
        (site_packages / "dev_site_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env_dir / "bin" / "python"


def server(root: Path, tmp_path: Path, *args: str) -> Server:
    """The server with no active virtualenv and no python3 on PATH, so only the project decides."""
    env = clean_env()
    env.pop("VIRTUAL_ENV", None)
    empty = tmp_path / "empty-path"
    empty.mkdir(exist_ok=True)
    env["PATH"] = str(empty)
    return Server(root, tmp_path / f"server-stderr-{uuid.uuid4().hex[:8]}.log", list(args), env)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = write_project(tmp_path / "proj", {"tests/test_x.py": "def test_x():\n    pass\n"})
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    return root


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_project_venv_is_reported_ready_with_what_pytest_sees(
    mode: str, project: Path, tmp_path: Path
) -> None:
    make_venv(project / ".venv", with_pytest=True)

    async with server(project, tmp_path).client(mode) as client:
        result = await client.call_tool("check_environment", {})

    answer: dict[str, Any] = structured(result)
    assert answer["ready"] is True
    assert answer["interpreter"]["rule"] == "project_venv"
    assert answer["interpreter"]["path"] == str(project / ".venv" / "bin" / "python")
    assert answer["python"]["prefix"] == str(project / ".venv")
    assert answer["pytest"]["version"] == pytest.__version__
    assert (answer["rootdir"], answer["configfile"], answer["testpaths"]) == (
        str(project),
        str(project / "pytest.ini"),
        ["tests"],
    )
    assert "pytest-json-report" in {plugin["name"] for plugin in answer["plugins"]}
    text = text_of(result)
    assert text.startswith(f"ready: pytest {pytest.__version__} on CPython")
    assert "rule project_venv: ROOT/.venv" in text
    assert f"rootdir: {project}, configfile: pytest.ini, testpaths: tests" in text
    # Which recorder a failing run's second pass would use in this interpreter (ADR 0020).
    recorder = "sys.monitoring" if sys.version_info >= (3, 12) else "sys.setprofile"
    assert answer["localization"] == recorder
    assert f"records the functions each test runs with {recorder}" in text


async def test_an_interpreter_without_pytest_is_a_result_saying_where_to_install_it(
    project: Path, tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "bare", with_pytest=False)

    async with server(project, tmp_path, "--python", str(python)).client() as client:
        result = await client.call_tool("check_environment", {})
        run_refused = await call_error(client, "execute_tests", {})

    answer = structured(result)
    assert answer["ready"] is False
    assert answer["pytest"] is None
    assert answer["interpreter"]["rule"] == "explicit"
    (problem,) = answer["problems"]
    assert f"install pytest into {tmp_path / 'bare'}" in problem
    assert f"`{python} -m pip install pytest`" in problem
    assert text_of(result).startswith("NOT READY: no pytest")
    assert (run_refused.code, run_refused.reason) == (-32000, "pytest_unavailable"), (
        "a run in the same environment is still an execution error"
    )


async def test_without_a_project_environment_the_servers_own_interpreter_is_chosen(
    project: Path, tmp_path: Path
) -> None:
    async with server(project, tmp_path).client() as client:
        answer = structured(await client.call_tool("check_environment", {}))

    assert answer["interpreter"]["rule"] == "server"
    assert answer["interpreter"]["passed_over"][-1] == "python3 on PATH: not found"
    assert answer["python"]["prefix"] == sys.prefix, "the console script runs in this suite's environment"


async def test_arguments_are_invalid_params(project: Path, tmp_path: Path) -> None:
    async with server(project, tmp_path).client() as client:
        refused = await call_error(client, "check_environment", {"python": "/usr/bin/python3"})

    assert refused.code == -32602
    assert "python: unknown parameter; this tool takes no parameters" in refused.message


async def test_concurrent_calls_start_no_more_probes_than_the_run_limit(project: Path, tmp_path: Path) -> None:
    """200 concurrent check_environment calls once started 77 probe interpreters (about 1.9 GB)."""
    import anyio

    log = tmp_path / "probes.log"
    wrapper = tmp_path / "python-counting"
    wrapper.write_text(
        f'#!/bin/sh\necho start >> {log}\n"{sys.executable}" "$@"\ncode=$?\necho end >> {log}\nexit $code\n'
    )
    wrapper.chmod(0o755)
    answers: list[dict[str, Any]] = []

    async with server(project, tmp_path, "--python", str(wrapper), "--max-concurrent-runs", "2").client() as client:

        async def check() -> None:
            answers.append(structured(await client.call_tool("check_environment", {})))

        async with anyio.create_task_group() as group:
            for _ in range(30):
                group.start_soon(check)

    running = most = 0
    for line in log.read_text().split():
        running += 1 if line == "start" else -1
        most = max(most, running)
    assert len(answers) == 30
    assert all(answer["ready"] for answer in answers)
    assert most == 2, f"{most} probes ran at once"
