"""--sandbox through the real `pytest-mcp` command (issue 37): refused at start-up where it cannot be
had, with nothing on stdout (the protocol's); where it can, check_environment says what it is."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.e2e.e2e_support import clean_env, console_script, write_project


def pytest_mcp(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), *args], capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL
    )


def test_the_server_refuses_to_start_without_bubblewrap_and_says_how_to_install_it(tmp_path: Path) -> None:
    root = write_project(tmp_path / "project", {"test_a.py": "def test_a():\n    pass\n"})
    no_bwrap = tmp_path / "bin"
    no_bwrap.mkdir()
    os.symlink("/bin/sh", no_bwrap / "sh")

    served = pytest_mcp("--root", str(root), "--sandbox", env=clean_env({"PATH": str(no_bwrap)}))

    assert served.returncode == 2
    assert served.stdout == ""  # stdio: only the protocol may reach stdout
    assert served.stderr == (
        "pytest-mcp: not starting: sandbox: --sandbox needs bubblewrap, and bwrap is not on PATH; install it: "
        "apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora), pacman -S bubblewrap\n"
    )


def test_the_variable_asks_for_the_sandbox_as_the_flag_does(tmp_path: Path) -> None:
    root = write_project(tmp_path / "project", {"test_a.py": "def test_a():\n    pass\n"})

    refused = pytest_mcp("--root", str(root), env=clean_env({"PATH": str(tmp_path), "PYTEST_MCP_SANDBOX": "1"}))
    secret = "ghp_" + "x" * 36
    checked = pytest_mcp(
        "--root",
        str(root),
        "call",
        "check_environment",
        env=clean_env({"PYTEST_MCP_SANDBOX": "1", "GITHUB_TOKEN": secret, "PYTEST_MCP_SANDBOX_ENV": '["DEPLOY_KEY"]'}),
    )

    assert refused.returncode == 2
    assert "bwrap is not on PATH" in refused.stderr
    assert checked.returncode == 0, checked.stderr
    assert (
        "sandbox: bubblewrap: read-only but the root (not its .git nor its virtualenv) and a private /tmp of "
        "512 MiB, $HOME empty but for the interpreter's directories, network: loopback only"
        in checked.stdout.splitlines()
    )
    withheld = "sandbox: withheld from the tests: "
    (names,) = [line.removeprefix(withheld) for line in checked.stdout.splitlines() if line.startswith(withheld)]
    assert "GITHUB_TOKEN" in names.split(" (")[0].split(", ")
    assert secret not in checked.stdout
