"""`pytest-mcp record` and `call` run in-process: their help lists what applies to them, not the transports."""

from __future__ import annotations

import pytest

from pytest_mcp.cli import main
from pytest_mcp.settings import Settings

SERVING_ONLY = [
    "--" + name.replace("_", "-")
    for name, field in Settings.model_fields.items()
    if isinstance(field.json_schema_extra, dict) and (field.json_schema_extra.get("flag") or {}).get("serving")
]


def help_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    return capsys.readouterr().out


def test_the_settings_that_only_matter_when_serving_are_the_transports() -> None:
    assert sorted(SERVING_ONLY) == sorted(
        [
            "--transport",
            "--host",
            "--port",
            "--port-file",
            "--path",
            "--stateless",
            "--allowed-hosts",
            "--http-request-timeout",
            "--max-connections",
            "--max-sessions",
            "--max-sessions-per-client",
            "--session-idle-timeout",
            "--run-store",
            "--run-store-prefix",
        ]
    )


@pytest.mark.parametrize("command", ["record", "call"])
def test_record_and_call_list_no_http_option(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of([command], capsys)

    assert "--root DIR" in text
    assert "--timeout SECONDS" in text
    assert [flag for flag in [*SERVING_ONLY, "--allowed-host "] if flag + " " in text or flag + "\n" in text] == []
    assert "HTTP" not in text


def test_serving_still_lists_every_transport_option(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of([], capsys)

    assert all(flag in text for flag in ["--transport", "--host HOST", "--port PORT", "--stateless", "--allowed-host"])
