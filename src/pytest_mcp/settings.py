"""Typed settings from CLI flags (highest), `PYTEST_MCP_*` environment variables, then defaults."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_TIMEOUT = 300


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PYTEST_MCP_", extra="forbid", frozen=True)

    root: Path = Field(default_factory=Path.cwd, description="The project root pytest runs in.")
    python: Path | None = Field(None, description="The target project's interpreter.")
    timeout: int = Field(
        DEFAULT_TIMEOUT, ge=1, description="Default seconds per call (300, or max_timeout if that is lower)."
    )
    max_timeout: int = Field(3600, ge=1, description="The largest timeout a call may ask for.")
    max_concurrent_runs: int = Field(4, ge=1, le=64, description="Runs allowed at once; more calls wait their turn.")
    rlimit_as_mb: int | None = Field(None, ge=64, description="Address-space limit for pytest, in MiB (RLIMIT_AS).")
    rlimit_cpu_seconds: int | None = Field(None, ge=1, description="CPU-time limit for pytest (RLIMIT_CPU).")
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["console", "json"] = "console"
    runner: Literal["subprocess", "fake"] = "subprocess"
    transport: Literal["stdio"] = "stdio"

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
