"""Typed settings. Precedence: CLI flags > `PYTEST_MCP_*` environment > `[tool.pytest-mcp]` in the
project's pyproject.toml > defaults. The HTTP bearer token comes from the environment only.

The layers are merged here, in a few lines, rather than by pydantic-settings: that package
imports every source it supports (cloud secret stores, dotenv, its own CLI) on start-up, about
15 ms of the 55 ms a start-up may add to a bare MCP server (ADR 0005).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Self
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from pytest_mcp.domain.text import masked_url

DEFAULT_TIMEOUT = 300
MIN_TOKEN_LENGTH = 32
"""Characters in a bearer token: 32 hex digits are 128 bits, what `secrets.token_hex(16)` gives."""
TOKEN_RECIPE = "python3 -c 'import secrets; print(secrets.token_hex(32))'"  # noqa: S105 - how to make a token, not one
# RFC 6750's b64token: what may follow `Bearer ` in an Authorization header.
_BEARER_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
FILE_TABLE = "tool.pytest-mcp"
ENV_PREFIX = "PYTEST_MCP_"
_NOT_FROM_FILE = {
    "auth_token": "may only come from the PYTEST_MCP_AUTH_TOKEN environment variable",
    "root": "is where this file was found; set it with --root or PYTEST_MCP_ROOT",
    "port_file": "is a file the server writes, which the project does not choose; set it with --port-file or "
    "PYTEST_MCP_PORT_FILE",
}


def flag(metavar: str | None = None, *, name: str | None = None, serving: bool = False) -> dict[str, Any]:
    """How a setting appears on the command line (cli.py builds its flags from these): its metavar,
    a name when it is not `--` plus the field's name with dashes, and whether it only matters when
    serving (the transports), so that `call` and `record` leave it out."""
    return {"flag": {"metavar": metavar, "name": name, "serving": serving}}


NO_FLAG: dict[str, Any] = {"flag": None}
"""A setting with no command-line flag: the token (it would show in `ps`), the runner (for tests)."""


class SettingsError(Exception):
    """A configuration source that cannot be read: the message names the source and the key."""


class Settings(BaseModel):
    """Values given to the constructor (the CLI's flags) override the environment and the project file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    root: Path = Field(
        default_factory=Path.cwd,
        description="The project root pytest runs in (default: the current directory).",
        json_schema_extra=flag("DIR"),
    )
    python: Path | None = Field(
        None,
        description="The target project's interpreter; default: detected from $VIRTUAL_ENV, ROOT/.venv or "
        "ROOT/venv, the uv or Poetry environment, python3 on PATH with pytest, else this one.",
        json_schema_extra=flag("PATH"),
    )
    timeout: int = Field(
        DEFAULT_TIMEOUT,
        ge=1,
        description="Seconds a call may take unless it asks for another timeout (at most --max-timeout).",
        json_schema_extra=flag("SECONDS"),
    )
    max_timeout: int = Field(
        3600, ge=1, description="The largest timeout a call may ask for.", json_schema_extra=flag("SECONDS")
    )
    max_concurrent_runs: int = Field(
        4,
        ge=1,
        le=64,
        description="Processes allowed at once (runs, collections, environment probes); more calls wait up to "
        "their timeout, then get a busy error.",
        json_schema_extra=flag("N"),
    )
    detach_after: float = Field(
        50.0,
        ge=0,
        le=3600,
        allow_inf_nan=False,
        description="Seconds an execute_tests call waits for its run; a run still going then goes on, and the call "
        "answers status 'running' with a run_id for get_test_run (0: calls wait to the end). Below the client's "
        "own timeout (60 s in the TypeScript SDK and Claude Desktop).",
        json_schema_extra=flag("SECONDS"),
    )
    localize: float = Field(
        0.5,
        ge=0,
        le=10,
        allow_inf_nan=False,
        description="Culprits (ADR 0020): on Python 3.12+ the run records which functions its tests enter; "
        "before, after a run with failures, a second pass records the failing tests, then at most this many "
        "times the run's number of tests (50 when that is more) of their modules' others: a count, so that the "
        "load of the machine does not change what it records. 0: neither, and no culprits named.",
        json_schema_extra=flag("RATIO"),
    )
    localize_lines: Literal["on", "off"] = Field(
        "on",
        description="On Python 3.12+, whether the run also records the lines its tests run of the functions they "
        "enter, so that a function is ranked by its most telling line (ADR 0020). off: functions only, which costs "
        "less where each test runs much of the project's code (markdown's suite: 1.22x raw pytest's instructions "
        "with lines, 1.07x without).",
        json_schema_extra=flag(),
    )
    localize_max_seconds: float = Field(
        120.0,
        gt=0,
        le=3600,
        allow_inf_nan=False,
        description="The second pass's hard cap in seconds. Below it a pass is only stopped when it takes four "
        "times its share of the run's wall time (and 10 s); the answer then says it was cut short.",
        json_schema_extra=flag("SECONDS"),
    )
    run_ttl: float = Field(
        600.0,
        gt=0,
        allow_inf_nan=False,
        description="Seconds a detached run's result is kept after it finished, for get_test_run; at most "
        "--max-concurrent-runs x 4 results are kept, the oldest dropped first.",
        json_schema_extra=flag("SECONDS"),
    )
    max_response_bytes: int = Field(
        32_000,
        ge=4096,
        description="Size budget of one answer; test reports beyond it are left out and counted.",
        json_schema_extra=flag("BYTES"),
    )
    rlimit_as_mb: int | None = Field(
        None,
        ge=64,
        description="Address-space limit for pytest and its children, in MiB (defence in depth, not a sandbox).",
        json_schema_extra=flag("MIB"),
    )
    rlimit_cpu_seconds: int | None = Field(
        None, ge=1, description="CPU-time limit for pytest and its children.", json_schema_extra=flag("SECONDS")
    )
    sandbox: bool = Field(
        False,
        description="Run every pytest process (runs, discovery, probes, workers) under bubblewrap (Linux): files "
        "read-only but the root (its .git and virtualenv read-only too) and a private /tmp, $HOME empty, no "
        "credentials in the environment, no network but its own loopback, its own PID "
        "namespace. The server refuses to start where bubblewrap cannot do this.",
    )
    sandbox_network: bool = Field(
        False,
        description="With --sandbox: share the host's network (its loopback services, the internet, DNS) with the "
        "tests instead of a loopback of their own.",
    )
    sandbox_writable: tuple[Path, ...] = Field(
        (),
        description="With --sandbox: a path under the root the tests may write although the sandbox keeps it "
        "read-only (the root's .git and virtualenv), repeatable. It gives that back: a test can then plant a git "
        "hook or config that runs at your next git command, or code in the venv that runs in your next shell, "
        "outside any sandbox.",
        json_schema_extra=flag("PATH"),
    )
    sandbox_env: tuple[str, ...] = Field(
        (),
        description="With --sandbox: a variable passed on to the tests although its name holds KEY, SECRET, "
        "TOKEN, PASSWORD or CREDENTIAL (those are withheld), repeatable.",
        json_schema_extra=flag("NAME"),
    )
    sandbox_tmp_size: int = Field(
        512,
        ge=16,
        description="With --sandbox: the size of the tests' private /tmp in MiB (in memory); a test that fills it "
        "gets ENOSPC, and its failure says so.",
        json_schema_extra=flag("MIB"),
    )
    run_priority: Literal["auto", "normal", "low"] = Field(
        "auto",
        description="The runs' share of the CPU beside the server: low gives each run's processes nice 10, and its "
        "session the same under Linux's autogroup, so that the server's event loop, which every client waits on, "
        "gets a core at once (an idle CPU still goes to the runs); normal is the share of a pytest typed by hand. "
        "auto is low over http and sse, normal over stdio.",
    )
    error_mode: Literal["result", "jsonrpc"] = Field(
        "result",
        description="How invalid arguments and runs without a trustworthy result are answered: result (an isError "
        "result the model can read, MCP 2025-11-25) or jsonrpc (a JSON-RPC error, the contract before it).",
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field("info", description="The least that is logged.")
    log_format: Literal["console", "json"] = Field("console", description="How stderr log lines are written.")
    runner: Literal["subprocess", "fake"] = Field(
        "subprocess", description="A real pytest, or the test double (for tests).", json_schema_extra=NO_FLAG
    )
    transport: Literal["stdio", "http", "sse"] = Field(
        "stdio",
        description="stdio, http (streamable HTTP) or sse (the older HTTP+SSE).",
        json_schema_extra=flag(serving=True),
    )
    host: str = Field(
        "127.0.0.1",
        description="Address the HTTP transports bind to; beyond loopback a token is required.",
        json_schema_extra=flag("HOST", serving=True),
    )
    port: int = Field(
        8000,
        ge=0,
        le=65535,
        description="Port of the HTTP transports; 0 takes a free one, which --port-file and the log then give.",
        json_schema_extra=flag("PORT", serving=True),
    )
    port_file: Path | None = Field(
        None,
        description="A file the HTTP transports write the port they listen on to (a number and a newline), once "
        "they listen; for --port 0.",
        json_schema_extra=flag("FILE", serving=True),
    )
    path: str | None = Field(
        None,
        description="Endpoint path of the HTTP transports (default: /mcp for http; for sse, the stream at /sse and "
        "messages POSTed to /messages/, as the SDKs expect; a given sse path takes its messages at PATH/messages/).",
        json_schema_extra=flag("PATH", serving=True),
    )
    stateless: bool = Field(
        False,
        description="Streamable HTTP without per-session state, for N instances behind a load balancer.",
        json_schema_extra=flag(serving=True),
    )
    allowed_hosts: tuple[str, ...] = Field(
        (),
        description="A Host header to accept besides loopback (repeatable).",
        json_schema_extra=flag("HOST[:PORT]", name="--allowed-host", serving=True),
    )
    http_request_timeout: int = Field(
        10,
        ge=1,
        le=600,
        description="Seconds an HTTP client has to send a whole request, headers and body.",
        json_schema_extra=flag("SECONDS", serving=True),
    )
    max_connections: int = Field(
        512,
        ge=1,
        description="HTTP connections open at once; more are answered 503.",
        json_schema_extra=flag("N", serving=True),
    )
    max_sessions: int = Field(
        256,
        ge=1,
        description="HTTP sessions at once; a new one closes the least recently used idle session.",
        json_schema_extra=flag("N", serving=True),
    )
    max_sessions_per_client: int | None = Field(
        None,
        ge=1,
        description="HTTP sessions one client (its credentials and address) may hold; at that share, its own "
        "least recently used idle session makes room. Default: half of --max-sessions.",
        json_schema_extra=flag("N", serving=True),
    )
    session_idle_timeout: int = Field(
        1800,
        ge=1,
        description="Seconds after which an HTTP session with no request is closed with its streams.",
        json_schema_extra=flag("SECONDS", serving=True),
    )
    run_store: str = Field(
        "memory",
        description="Where runs and their results are kept: memory (this instance only), or a Redis URL "
        "(redis://[:PASSWORD@]HOST:PORT/DB, rediss:// for TLS) shared by every instance behind a load balancer; "
        "needs mcp-server-pytest[redis]. Give a password through PYTEST_MCP_RUN_STORE, not the flag.",
        json_schema_extra=flag("URL", serving=True),
    )
    run_store_prefix: str = Field(
        "pytest-mcp:",
        min_length=1,
        max_length=100,
        description="Prefix of every Redis key and channel, for several deployments sharing one Redis.",
        json_schema_extra=flag("PREFIX", serving=True),
    )
    auth_token: SecretStr | None = Field(
        None,
        description="Bearer token the HTTP transports require; from PYTEST_MCP_AUTH_TOKEN only.",
        json_schema_extra=NO_FLAG,
    )

    @model_validator(mode="before")
    @classmethod
    def _layered(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        environment = environment_values(os.environ)
        root = data.get("root") or environment.get("root") or Path.cwd()
        merged = {**project_file_values(Path(root)), **environment, **data}
        # Only the *default* timeout adapts to a lower maximum; an explicit one above it is refused below.
        if "timeout" not in merged and "max_timeout" in merged:
            with contextlib.suppress(TypeError, ValueError):
                merged["timeout"] = min(DEFAULT_TIMEOUT, int(merged["max_timeout"]))
        return merged

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

    @field_validator("port_file")
    @classmethod
    def _port_file_can_be_written(cls, value: Path | None) -> Path | None:
        if value is None:
            return None
        candidate = value.expanduser().absolute()
        if not candidate.parent.is_dir():
            raise ValueError(f"{value}: its directory {candidate.parent} does not exist")
        if candidate.is_dir():
            raise ValueError(f"{value} is a directory")
        return candidate

    @field_validator("path")
    @classmethod
    def _path_is_an_endpoint(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith("/") or any(ch.isspace() for ch in value):
            raise ValueError(f"{value!r} must start with '/' and contain no spaces")
        if value.rstrip("/") == "/healthz":
            raise ValueError("/healthz is reserved for the health check")
        return value

    @field_validator("run_store")
    @classmethod
    def _store_is_memory_or_redis(cls, value: str) -> str:
        if value == "memory":
            return value
        parts = urlsplit(value)
        shown = masked_url(value)
        if parts.scheme not in ("redis", "rediss"):
            raise ValueError(f"{shown!r} must be memory, or a redis:// or rediss:// URL")
        try:
            parts.port  # noqa: B018 - parsing it is the check
        except ValueError:
            raise ValueError(f"{shown!r} has a port that is not a number from 0 to 65535") from None
        if not parts.hostname:
            raise ValueError(f"{shown!r} names no host")
        if parts.path.strip("/") and not parts.path.strip("/").isdigit():
            raise ValueError(f"{shown!r}: the database after the host must be a number, e.g. /0")
        return value

    @field_validator("auth_token")
    @classmethod
    def _usable_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            problem = token_problem(value.get_secret_value())
            if problem:
                raise ValueError(f"PYTEST_MCP_AUTH_TOKEN {problem}")
        return value

    @model_validator(mode="after")
    def _timeout_within_maximum(self) -> Self:
        if self.timeout > self.max_timeout:
            raise ValueError(f"timeout {self.timeout}s exceeds max_timeout {self.max_timeout}s")
        return self

    @model_validator(mode="after")
    def _network_needs_a_sandbox(self) -> Self:
        if self.sandbox_network and not self.sandbox:
            raise ValueError(
                "sandbox_network: opens the sandbox's network, and there is no sandbox; add --sandbox "
                "(PYTEST_MCP_SANDBOX=1), or drop --sandbox-network"
            )
        for name in ("sandbox_writable", "sandbox_env"):
            if getattr(self, name) and not self.sandbox:
                raise ValueError(f"{name}: only a sandbox has it to give, and there is no sandbox; add --sandbox")
        for path in self.sandbox_writable:
            if not _inside_root(self.root, path):
                raise ValueError(
                    f"sandbox_writable: {path} is not under the project root {self.root}; only a path in it "
                    "can be made writable (the rest of the file system is read-only in the sandbox)"
                )
        return self

    @model_validator(mode="after")
    def _no_unauthenticated_public_bind(self) -> Self:
        if self.transport != "stdio":
            problem = exposure_problem(self.host, self.auth_token is not None)
            if problem:
                raise ValueError(problem)
        return self

    def for_display(self) -> dict[str, Any]:
        """The effective settings as JSON-ready values, with secrets masked."""
        shown = self.model_dump(mode="json")
        shown["auth_token"] = "********" if self.auth_token is not None else None
        shown["run_store"] = masked_url(self.run_store)
        return shown


def _inside_root(root: Path, path: Path) -> bool:
    absolute = Path(os.path.abspath(root / path.expanduser()))
    return absolute == root or root in absolute.parents


def token_problem(token: str) -> str | None:
    """Why `token` cannot protect an HTTP endpoint, or None. Never quotes the token.

    An empty token must not mean "no authentication": `$(openssl rand -hex 32)` without openssl
    gives exactly that.
    """
    fix = f"; set it to a random value, e.g. $({TOKEN_RECIPE}), or unset it"
    if not token.strip():
        return "is set but empty" + fix
    if len(token) < MIN_TOKEN_LENGTH:
        return f"is {len(token)} characters long; the minimum is {MIN_TOKEN_LENGTH}" + fix
    if not _BEARER_TOKEN.fullmatch(token):
        return (
            "may hold only letters, digits and - . _ ~ + / (with any '=' at the end), as a bearer token "
            "must; no spaces" + fix
        )
    return None


def exposure_problem(host: str, authenticated: bool) -> str | None:
    """Why serving HTTP on `host` would be unsafe, or None: beyond loopback, a token is required."""
    if authenticated or is_loopback(host):
        return None
    return (
        f"refusing to serve on {host} without authentication: anyone who can reach it could run "
        "this project's tests; set PYTEST_MCP_AUTH_TOKEN, or bind to 127.0.0.1"
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def environment_values(environ: Mapping[str, str]) -> dict[str, Any]:
    """`PYTEST_MCP_<FIELD>` variables, names in any case; a tuple field's value is a JSON array."""
    values: dict[str, Any] = {}
    for name, value in environ.items():
        field = name[len(ENV_PREFIX) :].lower() if name.upper().startswith(ENV_PREFIX) else ""
        if field not in Settings.model_fields:
            continue  # other PYTEST_MCP_* variables belong to someone else (tests, CI scripts)
        if typing.get_origin(Settings.model_fields[field].annotation) is tuple:
            try:
                values[field] = json.loads(value)
            except json.JSONDecodeError as exc:
                raise SettingsError(f'{name}: must be a JSON array, e.g. \'["a", "b"]\' ({exc})') from None
        else:
            values[field] = value
    return values


def project_file_values(root: Path) -> dict[str, Any]:
    """`[tool.pytest-mcp]` from ROOT/pyproject.toml, where ROOT comes from the CLI, the environment or cwd.

    Keys may use dashes or underscores. A relative `python` is relative to ROOT.
    """
    pyproject = root.expanduser() / "pyproject.toml"
    if not pyproject.is_file():
        return {}
    import tomllib  # only when there is a file to read: it is not free on start-up

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
