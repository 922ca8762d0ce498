from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mcp import __version__
from pytest_mcp.cli import main
from pytest_mcp.settings import Settings

TOKEN = "unit-test-token-0123456789abcdef0123"


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


def test_the_default_timeout_follows_a_lower_maximum_but_an_explicit_one_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Settings(root=tmp_path, max_timeout=60).timeout == 60
    monkeypatch.setenv("PYTEST_MCP_MAX_TIMEOUT", "45")
    assert Settings(root=tmp_path).timeout == 45
    with pytest.raises(ValueError, match="timeout 90s exceeds max_timeout 45s"):
        Settings(root=tmp_path, timeout=90)


def write_pyproject(root: Path, table: str) -> None:
    (root / "pyproject.toml").write_text(f"[project]\nname = 'x'\n\n[tool.pytest-mcp]\n{table}\n")


def test_precedence_is_cli_then_environment_then_project_file_then_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_pyproject(tmp_path, "timeout = 11\nmax-timeout = 100\nmax_concurrent_runs = 3\nlog-format = 'json'")
    monkeypatch.setenv("PYTEST_MCP_MAX_TIMEOUT", "200")
    monkeypatch.setenv("PYTEST_MCP_MAX_CONCURRENT_RUNS", "5")

    settings = Settings(root=tmp_path, max_concurrent_runs=7)

    assert settings.max_concurrent_runs == 7  # CLI beats environment and file
    assert settings.max_timeout == 200  # environment beats file
    assert settings.timeout == 11  # file beats default
    assert settings.log_format == "json"
    assert settings.port == 8000  # default


def test_the_project_file_is_found_through_the_root_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_pyproject(tmp_path, "python = 'bin/py'")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "py").touch()
    monkeypatch.setenv("PYTEST_MCP_ROOT", str(tmp_path))

    assert Settings().python == tmp_path.resolve() / "bin" / "py"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("auth-token = 'x'", "auth-token may only come from the PYTEST_MCP_AUTH_TOKEN environment variable"),
        ("root = '/'", "root is where this file was found"),
        ("port-file = '/tmp/port'", "port-file is a file the server writes, which the project does not choose"),
        ("colour = 'blue'", "unknown key 'colour'"),
    ],
)
def test_the_project_file_cannot_set_secrets_or_unknown_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, message: str
) -> None:
    write_pyproject(tmp_path, table)

    with pytest.raises(SystemExit) as exited:
        main(["--root", str(tmp_path), "--print-config"])

    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert "[tool.pytest-mcp]" in error
    assert message in error


def test_print_config_shows_effective_settings_with_the_token_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PYTEST_MCP_AUTH_TOKEN", "s3cret-value" * 4)

    with pytest.raises(SystemExit) as exited:
        main(["--root", str(tmp_path), "--transport", "http", "--allowed-host", "a.example", "--print-config"])

    assert exited.value.code == 0
    output = capsys.readouterr().out
    shown = json.loads(output)
    assert shown["auth_token"] == "********"
    assert "s3cret-value" not in output
    assert (shown["transport"], shown["allowed_hosts"], shown["root"]) == (
        "http",
        ["a.example"],
        str(tmp_path.resolve()),
    )


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "example.com", "::"])
def test_a_public_bind_without_a_token_is_refused_and_loopback_is_fine(tmp_path: Path, host: str) -> None:
    with pytest.raises(ValueError, match=f"refusing to serve on {host} without authentication"):
        Settings(root=tmp_path, transport="http", host=host)

    assert Settings(root=tmp_path, transport="http", host=host, auth_token=TOKEN).host == host
    assert Settings(root=tmp_path, transport="sse", host="::1").host == "::1"
    assert Settings(root=tmp_path, transport="stdio", host=host).host == host  # stdio binds nothing


@pytest.mark.parametrize("transport", ["stdio", "http", "sse"])
@pytest.mark.parametrize(
    ("token", "reason"),
    [
        ("", "is set but empty"),
        ("   ", "is set but empty"),
        ("short-token", "is 11 characters long; the minimum is 32"),
        ("x" * 31, "is 31 characters long; the minimum is 32"),
        ("a" * 20 + " " + "b" * 20, "may hold only letters, digits and - . _ ~ + / (with any '=' at the end)"),
        ("ü" * 40, "may hold only letters, digits"),
    ],
    ids=["empty", "blank", "short", "one-short", "a-space", "not-ascii"],
)
def test_an_unusable_token_is_refused_at_start_on_every_transport(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    transport: str,
    token: str,
    reason: str,
) -> None:
    """An empty token once meant an unauthenticated public server: start-up tested `is not None`."""
    monkeypatch.setenv("PYTEST_MCP_AUTH_TOKEN", token)

    with pytest.raises(SystemExit) as exited:
        main(["--root", str(tmp_path), "--transport", transport, "--host", "0.0.0.0", "--print-config"])

    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert "auth_token: PYTEST_MCP_AUTH_TOKEN " in error
    assert reason in error
    assert "secrets.token_hex(32)" in error
    if token.strip():
        assert token not in error


def test_a_token_of_the_minimum_length_is_accepted(tmp_path: Path) -> None:
    assert Settings(root=tmp_path, transport="http", host="0.0.0.0", auth_token="A1-._~+/" * 4).auth_token is not None


def test_the_token_has_no_command_line_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--auth-token=x"])

    assert "unrecognized arguments: --auth-token" in capsys.readouterr().err


def test_environment_variables_are_typed_and_matched_in_any_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_MCP_ROOT", str(tmp_path))
    monkeypatch.setenv("pytest_mcp_max_concurrent_runs", "7")
    monkeypatch.setenv("PYTEST_MCP_ALLOWED_HOSTS", '["tests.example.org", "10.0.0.5"]')
    monkeypatch.setenv("PYTEST_MCP_STATELESS", "true")
    monkeypatch.setenv("PYTEST_MCP_SOMETHING_ELSE", "belongs to someone else")

    settings = Settings()

    assert settings.max_concurrent_runs == 7
    assert settings.allowed_hosts == ("tests.example.org", "10.0.0.5")
    assert settings.stateless is True


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("PYTEST_MCP_ALLOWED_HOSTS", "tests.example.org", "PYTEST_MCP_ALLOWED_HOSTS: must be a JSON array"),
        ("PYTEST_MCP_MAX_CONCURRENT_RUNS", "many", "max_concurrent_runs: Input should be a valid integer"),
    ],
)
def test_a_bad_environment_variable_is_refused_naming_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    value: str,
    message: str,
) -> None:
    monkeypatch.setenv(variable, value)

    with pytest.raises(SystemExit) as exited:
        main(["--root", str(tmp_path), "--print-config"])

    assert exited.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ('{"timeout": NaN}', "NaN is not a JSON number"),
        ('{"timeout": Infinity}', "Infinity is not a JSON number"),
        ('{"timeout": 1e400}', "1e400 is too large for a number"),
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
        ("{nope", "not valid JSON (Expecting property name"),
    ],
    ids=["nan", "infinity", "overflow", "deep", "broken"],
)
def test_call_refuses_json_a_client_could_not_send(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: str, reason: str
) -> None:
    """NaN and 1e400 once became null on the way, and so the default timeout; deep nesting a traceback."""
    with pytest.raises(SystemExit) as exited:
        main(["call", "execute_tests", arguments, "--root", str(tmp_path)])

    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("pytest-mcp: arguments: ")
    assert reason in error
    assert "Traceback" not in error


@pytest.mark.parametrize(
    ("table", "environment", "flags", "expected"),
    [
        ("", None, [], "result"),
        ("error-mode = 'jsonrpc'", None, [], "jsonrpc"),
        ("error-mode = 'jsonrpc'", "result", [], "result"),
        ("", "jsonrpc", [], "jsonrpc"),
        ("error-mode = 'result'", "result", ["--error-mode", "jsonrpc"], "jsonrpc"),
    ],
    ids=["default", "project-file", "environment-beats-file", "environment", "flag-beats-all"],
)
def test_the_error_mode_comes_from_flag_environment_or_project_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    table: str,
    environment: str | None,
    flags: list[str],
    expected: str,
) -> None:
    write_pyproject(tmp_path, table)
    if environment is not None:
        monkeypatch.setenv("PYTEST_MCP_ERROR_MODE", environment)

    with pytest.raises(SystemExit) as exited:
        main(["--root", str(tmp_path), *flags, "--print-config"])

    assert exited.value.code == 0
    assert json.loads(capsys.readouterr().out)["error_mode"] == expected


def test_an_unknown_error_mode_is_refused_naming_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PYTEST_MCP_ERROR_MODE", "exceptions")

    with pytest.raises(SystemExit) as exited:
        main(["--root", str(tmp_path), "--print-config"])

    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert "error_mode" in error or "error-mode" in error
    assert "'result' or 'jsonrpc'" in error


def test_port_zero_is_accepted_and_the_port_file_must_have_a_directory(tmp_path: Path) -> None:
    """--port 0 lets the OS pick (the port then comes from --port-file); a port file nowhere is refused at start."""
    settings = Settings(root=tmp_path, transport="http", port=0, port_file=tmp_path / "port")
    assert (settings.port, settings.port_file) == (0, tmp_path / "port")

    with pytest.raises(ValueError, match=r"port_file[\s\S]*missing/port: its directory \S*/missing does not exist"):
        Settings(root=tmp_path, transport="http", port=0, port_file=tmp_path / "missing" / "port")
    with pytest.raises(ValueError, match=r"port_file[\s\S]* is a directory"):
        Settings(root=tmp_path, transport="http", port=0, port_file=tmp_path)


@pytest.mark.parametrize(
    ("priority", "transport", "nice"),
    [
        ("auto", "stdio", None),
        ("auto", "http", 10),
        ("auto", "sse", 10),
        ("normal", "http", None),
        ("low", "stdio", 10),
    ],
)
def test_runs_give_way_to_an_http_server_by_default_and_as_the_setting_says(
    tmp_path: Path, priority: str, transport: str, nice: int | None
) -> None:
    """An HTTP server's loop answers every client, so its runs give way unless told not to (ADR 0022)."""
    from pytest_mcp.container import create_container

    token = TOKEN if transport != "stdio" else None
    settings = Settings(root=tmp_path, run_priority=priority, transport=transport, auth_token=token)

    assert create_container(settings).resource_limits().nice == nice


def test_an_unknown_run_priority_is_refused_naming_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--root", str(tmp_path), "--run-priority", "high", "--print-config"])
    assert exited.value.code == 2
    assert "argument --run-priority: invalid choice: 'high'" in capsys.readouterr().err

    monkeypatch.setenv("PYTEST_MCP_RUN_PRIORITY", "high")
    with pytest.raises(SystemExit) as exited:
        main(["--root", str(tmp_path), "--print-config"])
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert "run_priority" in error or "run-priority" in error
    assert "'auto', 'normal' or 'low'" in error
