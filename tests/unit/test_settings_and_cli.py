from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_mcp import __version__
from pytest_mcp.adapters.pytest_subprocess.interpreter import resolve_interpreter
from pytest_mcp.cli import main
from pytest_mcp.settings import Settings


def test_cli_flags_override_environment_which_overrides_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_MCP_TIMEOUT", "40")
    monkeypatch.setenv("PYTEST_MCP_ROOT", str(tmp_path))

    from_env = Settings()
    from_cli = Settings(timeout=50)

    assert (from_env.timeout, from_env.root, from_env.max_timeout) == (40, tmp_path.resolve(), 3600)
    assert from_cli.timeout == 50


def test_a_missing_root_is_refused_with_the_field_and_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--root", str(tmp_path / "nope"), "call", "execute_tests"])

    assert exited.value.code == 2
    assert f"root: {tmp_path / 'nope'} is not an existing directory" in capsys.readouterr().err


def test_a_default_timeout_above_the_maximum_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--root", str(tmp_path), "--timeout", "90", "--max-timeout", "60"])

    assert "timeout 90s exceeds max_timeout 60s" in capsys.readouterr().err


def test_call_rejects_arguments_that_are_not_a_json_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["call", "execute_tests", "[1, 2]", "--root", str(tmp_path)])

    assert exited.value.code == 2
    assert "arguments: must be a JSON object" in capsys.readouterr().err


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--version"])

    assert capsys.readouterr().out.strip() == f"pytest-mcp {__version__}"


def test_the_interpreter_is_the_explicit_one_then_the_project_venv_then_our_own(tmp_path: Path) -> None:
    assert resolve_interpreter(tmp_path, None) == Path(sys.executable)
    venv_python = tmp_path / ".venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.touch()
    assert resolve_interpreter(tmp_path, None) == venv_python
    assert resolve_interpreter(tmp_path, Path("/opt/py")) == Path("/opt/py")


def test_the_default_timeout_follows_a_lower_maximum_but_an_explicit_one_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Settings(root=tmp_path, max_timeout=60).timeout == 60
    monkeypatch.setenv("PYTEST_MCP_MAX_TIMEOUT", "45")
    assert Settings(root=tmp_path).timeout == 45
    with pytest.raises(ValueError, match="timeout 90s exceeds max_timeout 45s"):
        Settings(root=tmp_path, timeout=90)
