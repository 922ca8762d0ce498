"""--sandbox (issue 37): where it cannot be had it is refused with the reason and the fix, never run
without; how its settings are read; which of the home's directories an interpreter keeps."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
from pytest_mcp.adapters.pytest_subprocess.sandbox import (
    BubblewrapSandbox,
    SandboxUnavailable,
    interpreter_directories,
    open_bubblewrap,
)
from pytest_mcp.cli import build_parser
from pytest_mcp.settings import Settings


def test_without_bwrap_on_path_the_sandbox_is_refused_with_the_install_command() -> None:
    with pytest.raises(SandboxUnavailable) as refused:
        open_bubblewrap(False, platform="linux", which=lambda _name: None)

    message = str(refused.value)
    assert message.startswith("sandbox: --sandbox needs bubblewrap, and bwrap is not on PATH")
    assert "apt-get install bubblewrap" in message


@pytest.mark.parametrize("platform", ["darwin", "win32", "freebsd14"])
def test_off_linux_the_sandbox_is_refused_naming_the_platform(platform: str) -> None:
    with pytest.raises(SandboxUnavailable) as refused:
        open_bubblewrap(False, platform=platform, which=lambda _name: "/usr/bin/bwrap")

    assert f"needs Linux; this is {platform}" in str(refused.value)
    assert "serve without --sandbox" in str(refused.value)


def test_a_bwrap_that_cannot_make_the_namespaces_is_refused_with_its_own_reason(tmp_path: Path) -> None:
    # What bwrap says where unprivileged user namespaces are off.
    refusing = tmp_path / "bwrap"
    refusing.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create a new namespace, likely because the kernel does "
        "not allow non-privileged user namespaces.' >&2\nexit 1\n"
    )
    refusing.chmod(0o755)

    with pytest.raises(SandboxUnavailable) as refused:
        open_bubblewrap(False, platform="linux", which=lambda _name: str(refusing))

    message = str(refused.value)
    assert "does not allow non-privileged user namespaces" in message
    assert "kernel.unprivileged_userns_clone=1" in message


def test_the_sandbox_is_had_where_bubblewrap_works() -> None:
    sandbox = open_bubblewrap(True)

    assert sandbox.network is True
    assert sandbox.version.startswith("bubblewrap ")
    assert "network: the host's network" in sandbox.description


def test_sandbox_is_a_flag_a_variable_and_a_project_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_MCP_SANDBOX", raising=False)
    assert Settings(root=tmp_path).sandbox is False
    assert build_parser().parse_args(["--sandbox", "--sandbox-network"]).sandbox_network is True

    monkeypatch.setenv("PYTEST_MCP_SANDBOX", "1")
    assert Settings(root=tmp_path).sandbox is True

    monkeypatch.delenv("PYTEST_MCP_SANDBOX")
    (tmp_path / "pyproject.toml").write_text("[tool.pytest-mcp]\nsandbox = true\nsandbox-network = true\n")
    settings = Settings(root=tmp_path)
    assert (settings.sandbox, settings.sandbox_network) == (True, True)


def test_the_network_flag_without_a_sandbox_is_refused_naming_both(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sandbox_network: opens the sandbox's network, and there is no sandbox"):
        Settings(root=tmp_path, sandbox_network=True)


def test_a_blocked_failure_names_the_flag_the_server_really_has() -> None:
    flags = {option for action in build_parser()._actions for option in action.option_strings}

    assert {protocol.SANDBOX_NETWORK_FLAG, protocol.SANDBOX_TMP_FLAG, protocol.SANDBOX_WRITABLE_FLAG} <= flags


def test_writable_paths_are_under_the_root_and_need_the_sandbox(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path, sandbox=True, sandbox_writable=(Path(".git"),), sandbox_env=("A_TOKEN",))
    assert settings.sandbox_writable == (Path(".git"),)
    assert build_parser().parse_args(["--sandbox-writable", ".venv", "--sandbox-env", "X_KEY"]).sandbox_env == ["X_KEY"]

    with pytest.raises(ValueError, match="sandbox_writable: /etc is not under the project root"):
        Settings(root=tmp_path, sandbox=True, sandbox_writable=(Path("/etc"),))
    with pytest.raises(ValueError, match="sandbox_writable: only a sandbox has it to give"):
        Settings(root=tmp_path, sandbox_writable=(Path(".git"),))


def pyenv_layout(home: Path) -> tuple[Path, Path]:
    """pyenv's interpreter under $HOME, reached through its `3.11` alias, and a virtualenv made from it."""
    versions = home / ".pyenv" / "versions"
    (versions / "3.11.7" / "bin").mkdir(parents=True)
    (versions / "3.11.7" / "bin" / "python3.11").write_text("")
    (versions / "3.11.7" / "lib" / "python3.11").mkdir(parents=True)
    (versions / "3.11.7" / "lib" / "python3.11" / "os.py").write_text("")  # the landmark Python looks for
    os.symlink("3.11.7", versions / "3.11")
    venv = home / "work" / "env"
    (venv / "bin").mkdir(parents=True)
    os.symlink(versions / "3.11" / "bin" / "python3.11", venv / "bin" / "python")
    (venv / "pyvenv.cfg").write_text(f"home = {versions / '3.11' / 'bin'}\n")
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (home / "src" / "editable").mkdir(parents=True)
    (site / "_editable.pth").write_text(f"{home / 'src' / 'editable'}\nimport os\n")
    return venv / "bin" / "python", versions


def test_an_interpreter_under_the_home_keeps_its_environments_and_nothing_else(tmp_path: Path) -> None:
    """Not even what a `.pth` file names (issue 42): anything that can write site-packages can write one."""
    home = tmp_path / "home"
    python, versions = pyenv_layout(home)
    (home / ".ssh").mkdir()

    found = interpreter_directories(python, [home])

    assert set(found) == {home / "work" / "env", versions / "3.11", versions / "3.11.7"}
    assert home not in found


@pytest.mark.parametrize(
    "planted",
    [
        "home = {home}/.ssh/../x/bin",  # lexically under the home, really the home: bound all of it once
        "home = {home}/bin",  # the home itself
        "home = {home}/missing/bin",  # nothing there: bwrap once failed every later run on it
        "home = {home}/.ssh/bin",  # no Python there
    ],
)
def test_only_the_first_home_of_pyvenv_cfg_counts_and_only_a_real_prefix(tmp_path: Path, planted: str) -> None:
    home = tmp_path / "home"
    python, versions = pyenv_layout(home)
    (home / ".ssh" / "bin").mkdir(parents=True)
    config = home / "work" / "env" / "pyvenv.cfg"
    first = config.read_text()
    config.write_text(first + planted.format(home=home) + "\n")

    second_line = set(interpreter_directories(python, [home]))
    config.write_text(planted.format(home=home) + "\n")
    first_line = set(interpreter_directories(python, [home]))

    assert second_line == {home / "work" / "env", versions / "3.11", versions / "3.11.7"}
    assert first_line <= second_line
    assert home not in first_line | second_line


def test_the_interpreters_directories_are_resolved_once_before_any_test_ran(tmp_path: Path) -> None:
    home = tmp_path / "home"
    python, _versions = pyenv_layout(home)
    root, private = tmp_path / "project", tmp_path / "private"
    root.mkdir()
    private.mkdir()
    sandbox = BubblewrapSandbox(bwrap="/usr/bin/bwrap", home=home)
    before = sandbox.wrap([str(python)], root=root, private_dir=private)

    (home / "work" / "env" / "pyvenv.cfg").write_text(f"home = {home / 'other' / 'bin'}\n")
    (home / "other" / "lib" / "python3.11").mkdir(parents=True)
    (home / "other" / "lib" / "python3.11" / "os.py").write_text("")

    assert sandbox.wrap([str(python)], root=root, private_dir=private) == before
    assert str(home / "other") not in before


def test_the_roots_git_and_virtualenv_are_bound_read_only_unless_named_writable(tmp_path: Path) -> None:
    root, private = tmp_path / "project", tmp_path / "private"
    (root / ".git").mkdir(parents=True)
    (root / ".venv").mkdir()
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    private.mkdir()
    sandbox = BubblewrapSandbox(bwrap="/usr/bin/bwrap", home=tmp_path / "home", writable=(root / ".git",))

    options = sandbox.wrap(["/usr/bin/python3"], root=root, private_dir=private)

    pairs = [tuple(options[i : i + 3]) for i in range(len(options) - 2)]
    assert ("--ro-bind", str(root / ".git"), str(root / ".git")) in pairs
    assert ("--ro-bind", str(root / ".venv"), str(root / ".venv")) in pairs
    assert pairs.index(("--bind", str(root / ".git"), str(root / ".git"))) > pairs.index(
        ("--ro-bind", str(root / ".git"), str(root / ".git"))
    )
    assert options[options.index("--tmpfs", options.index("--size")) - 1] == str(512 * 1024 * 1024)


def test_credentials_are_withheld_by_name_but_path_locale_python_and_named_ones_pass() -> None:
    sandbox = BubblewrapSandbox(bwrap="/usr/bin/bwrap", passed_env=("project_api_key",))
    environ = {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "PYTHON_KEYRING_BACKEND": "x",
        "PROJECT_API_KEY": "passed",
        "AWS_SECRET_ACCESS_KEY": "s",
        "GITHUB_TOKEN": "t",
        "db_password": "p",
        "GOOGLE_APPLICATION_CREDENTIALS": "c",
        "MONKEY": "k",  # KEY in any word: a false positive the policy accepts, and --sandbox-env passes
        "HOME": "/root",
    }

    assert sandbox.withheld(environ) == (
        "AWS_SECRET_ACCESS_KEY",
        "GITHUB_TOKEN",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "MONKEY",
        "db_password",
    )
    assert set(sandbox.environment(environ)) == {
        "PATH",
        "LANG",
        "LC_ALL",
        "PYTHON_KEYRING_BACKEND",
        "PROJECT_API_KEY",
        "HOME",
    }


def test_the_home_is_emptied_before_the_interpreters_directories_are_bound_into_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    python, versions = pyenv_layout(home)
    root, private = tmp_path / "project", tmp_path / "private"
    root.mkdir()
    private.mkdir()
    sandbox = BubblewrapSandbox(bwrap="/usr/bin/bwrap", home=home)

    argv = sandbox.wrap([str(python), "-c", "pass"], root=root, private_dir=private)

    options = argv[: argv.index("--")]
    emptied = options.index(str(home))
    bound = options.index(str(versions / "3.11"))
    assert options[emptied - 1] == "--tmpfs"
    assert options[bound - 2 : bound] == ["--ro-bind", str(versions / "3.11.7")]
    assert emptied < bound < options.index(str(root))
    assert "--share-net" not in options
    assert {"--unshare-all", "--die-with-parent"} <= set(options)
    assert options[options.index("--cap-drop") + 1] == "ALL"
    assert argv[argv.index("--") + 1 :] == [str(python), "-c", "pass"]


def test_a_wrapper_script_given_as_python_keeps_the_interpreter_its_first_line_names(tmp_path: Path) -> None:
    home = tmp_path / "home"
    python, versions = pyenv_layout(home)
    wrapper = tmp_path / "project" / "python-wrapper"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!{python}\nimport sys\n")

    found = interpreter_directories(wrapper, [home])

    assert {home / "work" / "env", versions / "3.11", versions / "3.11.7"} <= set(found)
