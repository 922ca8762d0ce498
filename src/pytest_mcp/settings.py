"""Typed settings. Precedence: CLI flags > `PYTEST_MCP_*` environment > `[tool.pytest-mcp]` in the
project's pyproject.toml > defaults. The HTTP bearer token comes from the environment only."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import tomllib
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, SettingsError

DEFAULT_TIMEOUT = 300
FILE_TABLE = "tool.pytest-mcp"
_NOT_FROM_FILE = {
    "auth_token": "may only come from the PYTEST_MCP_AUTH_TOKEN environment variable",
    "root": "is where this file was found; set it with --root or PYTEST_MCP_ROOT",
}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PYTEST_MCP_", extra="forbid", frozen=True)

    root: Path = Field(default_factory=Path.cwd, description="The project root pytest runs in.")
    python: Path | None = Field(None, description="The target project's interpreter; detected when not given.")
    timeout: int = Field(
        DEFAULT_TIMEOUT, ge=1, description="Default seconds per call (300, or max_timeout if that is lower)."
    )
    max_timeout: int = Field(3600, ge=1, description="The largest timeout a call may ask for.")
    max_concurrent_runs: int = Field(4, ge=1, le=64, description="Runs allowed at once; more calls wait their turn.")
    max_response_bytes: int = Field(
        32_000, ge=4096, description="Size budget of one answer; test reports beyond it are left out and counted."
    )
    rlimit_as_mb: int | None = Field(None, ge=64, description="Address-space limit for pytest, in MiB (RLIMIT_AS).")
    rlimit_cpu_seconds: int | None = Field(None, ge=1, description="CPU-time limit for pytest (RLIMIT_CPU).")
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["console", "json"] = "console"
    runner: Literal["subprocess", "fake"] = "subprocess"
    transport: Literal["stdio", "http", "sse"] = "stdio"
    host: str = Field("127.0.0.1", description="Address the HTTP transports bind to.")
    port: int = Field(8000, ge=1, le=65535)
    path: str = Field("/mcp", description="Endpoint path of the HTTP transports.")
    stateless: bool = Field(False, description="Streamable HTTP without per-session state.")
    allowed_hosts: tuple[str, ...] = Field((), description="Host header values allowed besides loopback.")
    auth_token: SecretStr | None = Field(None, description="Bearer token the HTTP transports require.")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, ProjectFileSettings(settings_cls, init_settings)

    @field_validator("root")
    @classmethod
    def _root_is_a_directory(cls, value: Path) -> Path:
        resolved = value.expanduser().resolve()
        if not resolved.is_dir():
            raise ValueError(f"{value} is not an existing directory")
        return resolved

    @field_validator("python")
    @classmethod
    def _python_is_a_file(cls, value: Path | None) -> Path | None:
        if value is None:
            return None
        candidate = value.expanduser()
        if not candidate.is_file():
            raise ValueError(f"{value} is not an existing file")
        return candidate.absolute()

    @field_validator("path")
    @classmethod
    def _path_is_an_endpoint(cls, value: str) -> str:
        if not value.startswith("/") or any(ch.isspace() for ch in value):
            raise ValueError(f"{value!r} must start with '/' and contain no spaces")
        if value.rstrip("/") == "/healthz":
            raise ValueError("/healthz is reserved for the health check")
        return value

    @model_validator(mode="before")
    @classmethod
    def _default_timeout_follows_a_lower_maximum(cls, data: Any) -> Any:
        # Only the *default* adapts; an explicit timeout above the maximum is still refused below.
        if isinstance(data, dict) and "timeout" not in data and "max_timeout" in data:
            with contextlib.suppress(TypeError, ValueError):
                data = {**data, "timeout": min(DEFAULT_TIMEOUT, int(data["max_timeout"]))}
        return data

    @model_validator(mode="after")
    def _timeout_within_maximum(self) -> Self:
        if self.timeout > self.max_timeout:
            raise ValueError(f"timeout {self.timeout}s exceeds max_timeout {self.max_timeout}s")
        return self

    @model_validator(mode="after")
    def _no_unauthenticated_public_bind(self) -> Self:
        if self.transport != "stdio" and self.auth_token is None and not is_loopback(self.host):
            raise ValueError(
                f"refusing to serve on {self.host} without authentication: anyone who can reach it could run "
                "this project's tests; set PYTEST_MCP_AUTH_TOKEN, or bind to 127.0.0.1"
            )
        return self

    def for_display(self) -> dict[str, Any]:
        """The effective settings as JSON-ready values, with secrets masked."""
        shown = self.model_dump(mode="json")
        shown["auth_token"] = "********" if self.auth_token is not None else None
        return shown


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class ProjectFileSettings(PydanticBaseSettingsSource):
    """`[tool.pytest-mcp]` from ROOT/pyproject.toml, where ROOT comes from the CLI, the environment or cwd.

    Keys may use dashes or underscores. A relative `python` is relative to ROOT.
    """

    def __init__(self, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource) -> None:
        super().__init__(settings_cls)
        self._init_settings = init_settings

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover - unused
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        root = Path(self._init_settings().get("root") or os.environ.get("PYTEST_MCP_ROOT") or Path.cwd())
        pyproject = root.expanduser() / "pyproject.toml"
        if not pyproject.is_file():
            return {}
        try:
            document = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise SettingsError(f"{pyproject}: cannot be read as TOML ({exc})") from None
        table = document.get("tool", {}).get("pytest-mcp", {})
        if not isinstance(table, dict):
            raise SettingsError(f"{pyproject}: [{FILE_TABLE}] must be a table")
        values: dict[str, Any] = {}
        for key, value in table.items():
            name = key.replace("-", "_")
            if name in _NOT_FROM_FILE:
                raise SettingsError(f"{pyproject}: [{FILE_TABLE}] {key} {_NOT_FROM_FILE[name]}")
            if name not in Settings.model_fields:
                known = ", ".join(sorted(n.replace("_", "-") for n in Settings.model_fields if n not in _NOT_FROM_FILE))
                raise SettingsError(f"{pyproject}: [{FILE_TABLE}] has an unknown key {key!r}; known keys: {known}")
            values[name] = value
        if isinstance(values.get("python"), str) and not Path(values["python"]).expanduser().is_absolute():
            values["python"] = str(root.expanduser().resolve() / values["python"])
        return values
