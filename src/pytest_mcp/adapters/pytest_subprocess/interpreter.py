"""Choose the target project's Python interpreter, and say which rule chose it (ADR 0008).

The rules, tried in order: `--python`; `$VIRTUAL_ENV`; `ROOT/.venv` or `ROOT/venv`; a uv or Poetry
project's environment, resolved from files and environment variables only; `python3` on PATH
if it has pytest installed; the server's own interpreter. Nothing here touches the network or
runs uv or Poetry; the only process started is python3 looking pytest up (`FIND_PYTEST`), bounded.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import anyio.to_thread

from pytest_mcp.domain.environment import DetectionRule, InterpreterChoice

PYTEST_CHECK_TIMEOUT = 10.0
"""Seconds python3's `FIND_PYTEST` may take before python3 on PATH counts as without pytest."""

FIND_PYTEST = "import importlib.util, sys; sys.exit(importlib.util.find_spec('pytest') is None)"
"""Whether pytest is installed, without importing it: importing pytest takes ~100 ms, this ~10 ms."""

HasPytest = Callable[[Path, Path], bool]
Detect = Callable[[Path, "Path | None"], InterpreterChoice]
Locator = Callable[[Path, Mapping[str, str]], tuple[Path | None, str]]


class TargetInterpreter:
    """The interpreter that runs pytest: given, or detected by the first call that needs it.

    Detection starts with the first `choice()`, which callers make holding a run slot (its
    python3-on-PATH rule starts that interpreter: 20-130 ms, at most PYTEST_CHECK_TIMEOUT), and
    runs in a daemon thread. Every call that needs the interpreter awaits `choice()`,
    cancellably; calls made meanwhile share the one detection.
    """

    def __init__(self, root: Path, explicit: Path | None = None, *, detect: Detect | None = None) -> None:
        self._choice: Future[InterpreterChoice] = Future()
        self._detection: threading.Thread | None = None
        if explicit is not None:  # nothing to detect: `--python` is taken as given
            self._choice.set_result(detect_interpreter(root, explicit))
            return
        self._detection = threading.Thread(
            target=self._detect, args=(detect or detect_interpreter, root), name="pytest-mcp-detection", daemon=True
        )

    @classmethod
    def given(cls, python: Path) -> TargetInterpreter:
        """An interpreter chosen by the caller (the `explicit` rule); the root plays no part."""
        return cls(Path("."), python)

    def _detect(self, detect: Detect, root: Path) -> None:
        try:
            self._choice.set_result(detect(root, None))
        except BaseException as exc:  # a bug in a rule: the call that awaits the choice reports it
            self._choice.set_exception(exc)

    async def choice(self) -> InterpreterChoice:
        if not self._choice.done():
            if self._detection is not None:  # the first call: calls run on one event loop, so only one gets here
                self._detection.start()
                self._detection = None
            await anyio.to_thread.run_sync(self._choice.exception, abandon_on_cancel=True)
        return self._choice.result()


def detect_interpreter(
    root: Path,
    explicit: Path | None,
    *,
    environ: Mapping[str, str] | None = None,
    server_python: Path | None = None,
    has_pytest: HasPytest | None = None,
) -> InterpreterChoice:
    """The first rule that yields an interpreter, with the reasons earlier rules did not apply.

    A rule applies when its interpreter file exists (a broken symlink does not); it is not
    asked whether pytest is installed there, except for python3 on PATH: a project's own
    environment without pytest is still the right one, and check_environment says what to do.
    """
    env = os.environ if environ is None else environ
    passed_over: list[str] = []

    def chosen(path: Path, rule: DetectionRule, reason: str) -> InterpreterChoice:
        return InterpreterChoice(path=path, rule=rule, reason=reason, passed_over=tuple(passed_over))

    if explicit is not None:
        return chosen(explicit, "explicit", "--python, PYTEST_MCP_PYTHON or [tool.pytest-mcp] python")
    passed_over.append("--python: not given")

    virtual_env = env.get("VIRTUAL_ENV")
    if virtual_env:
        python = venv_python(Path(virtual_env))
        if python is not None:
            return chosen(python, "virtual_env", f"$VIRTUAL_ENV={virtual_env}")
        passed_over.append(f"$VIRTUAL_ENV={virtual_env}: has no bin/python")
    else:
        passed_over.append("$VIRTUAL_ENV: not set")

    for name in (".venv", "venv"):
        # `venv` is also a common package name, so only a virtualenv (pyvenv.cfg) counts there.
        python = venv_python(root / name, require_config=name == "venv")
        if python is not None:
            return chosen(python, "project_venv", f"ROOT/{name}")
    passed_over.append("ROOT/.venv, ROOT/venv: no virtualenv with a python")

    locators: tuple[tuple[DetectionRule, Locator], ...] = (("uv", uv_environment), ("poetry", poetry_environment))
    for rule, locate in locators:
        found, reason = locate(root, env)
        python = venv_python(found) if found is not None else None
        if python is not None:
            return chosen(python, rule, reason)
        passed_over.append(f"{rule}: {reason}" if found is None else f"{rule}: {reason}, which has no bin/python")

    python3 = shutil.which("python3", path=env.get("PATH", os.defpath))
    if python3 is not None and (has_pytest or pytest_is_installed)(Path(python3), root):
        return chosen(Path(python3), "path", f"python3 on PATH: {python3}")
    passed_over.append("python3 on PATH: not found" if python3 is None else f"python3 on PATH ({python3}): no pytest")

    server = server_python or Path(sys.executable)
    return chosen(server, "server", f"the server's own interpreter {server}")


def venv_python(env_dir: Path, *, require_config: bool = False) -> Path | None:
    """The interpreter of the environment at `env_dir`, without resolving symlinks, or None."""
    if require_config and not (env_dir / "pyvenv.cfg").is_file():
        return None
    for candidate in (env_dir / "bin" / "python", env_dir / "bin" / "python3", env_dir / "Scripts" / "python.exe"):
        if candidate.is_file():
            return candidate
    return None


def pytest_is_installed(python: Path, root: Path) -> bool:
    """Whether `python`, started in `root`, finds pytest (`FIND_PYTEST`) within PYTEST_CHECK_TIMEOUT seconds."""
    from pytest_mcp.adapters.pytest_subprocess.process import child_environment  # only for rule 5

    try:
        completed = subprocess.run(
            [str(python), "-c", FIND_PYTEST],
            cwd=root,
            env=child_environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PYTEST_CHECK_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return completed.returncode == 0


def _toml(path: Path) -> dict[str, Any]:
    """A TOML file's contents; {} when it is missing or unreadable (detection must not fail on it)."""
    import tomllib  # only for uv and Poetry projects: most start-ups never parse TOML here

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _table(document: Mapping[str, Any], *keys: str) -> dict[str, Any] | None:
    value: Any = document
    for key in keys:
        if not isinstance(value, Mapping) or not isinstance(value.get(key), Mapping):
            return None
        value = value[key]
    return dict(value)


def uv_environment(root: Path, env: Mapping[str, str]) -> tuple[Path | None, str]:
    """uv's project environment: `UV_PROJECT_ENVIRONMENT` (relative to the workspace root) or `.venv` there.

    A uv project has `uv.lock` or `[tool.uv]`; a workspace member shares the environment of
    the nearest ancestor with `uv.lock` and `[tool.uv.workspace]`. uv itself is never run.
    """
    found = _uv_workspace(root)
    if found is None:
        return None, "not a uv project (no uv.lock or [tool.uv])"
    workspace, marker = found
    override = env.get("UV_PROJECT_ENVIRONMENT")
    if override:
        # Relative to the workspace root, as uv resolves it; an absolute path replaces the base.
        return workspace / Path(override).expanduser(), f"uv project ({marker}), UV_PROJECT_ENVIRONMENT={override}"
    if workspace == root:
        return None, f"uv project ({marker}) whose ROOT/.venv does not exist yet (run `uv sync`)"
    return workspace / ".venv", f"uv project ({marker}), {workspace / '.venv'}"


def _uv_workspace(root: Path) -> tuple[Path, str] | None:
    if (root / "uv.lock").is_file():
        return root, "uv.lock"
    if _table(_toml(root / "pyproject.toml"), "tool", "uv") is not None:
        return root, "[tool.uv]"
    for ancestor in root.parents:
        if (ancestor / "uv.lock").is_file() and _table(_toml(ancestor / "pyproject.toml"), "tool", "uv", "workspace"):
            return ancestor, f"member of the workspace at {ancestor}"
    return None


def poetry_environment(root: Path, env: Mapping[str, str]) -> tuple[Path | None, str]:
    """Poetry's environment for the project at `root`, as `poetry env info -p` would find it, without Poetry.

    A Poetry project has `poetry.lock` or `[tool.poetry]`. Settings come from `POETRY_*`
    variables, then `ROOT/poetry.toml`, then Poetry's global `config.toml`, then Poetry's
    defaults. An in-project environment is `ROOT/.venv` (an earlier rule); otherwise it is
    `{virtualenvs.path}/{name}-{hash}-py{X.Y}` with the name and hash of Poetry's
    `EnvManager.generate_env_name` and X.Y from Poetry's `envs.toml`, else the newest present.
    """
    pyproject = _toml(root / "pyproject.toml")
    tool_poetry = _table(pyproject, "tool", "poetry")
    if not (root / "poetry.lock").is_file() and tool_poetry is None:
        return None, "not a Poetry project (no poetry.lock or [tool.poetry])"
    settings = _PoetrySettings(root, env)
    if settings.flag("virtualenvs.create") is False:
        return None, "Poetry project with virtualenvs.create = false (it uses the interpreter Poetry runs with)"
    if settings.flag("virtualenvs.in-project") is True:
        return None, "Poetry project with virtualenvs.in-project, but ROOT/.venv does not exist"
    project = _table(pyproject, "project") or {}
    name = project.get("name") or (tool_poetry or {}).get("name")
    if not isinstance(name, str) or not name:
        return None, "Poetry project without a name in pyproject.toml"
    base = poetry_env_name(name, root)
    envs_dir = settings.virtualenvs_path()
    active = _table(_toml(envs_dir / "envs.toml"), base) or {}
    if isinstance(active.get("minor"), str):
        candidates = [envs_dir / f"{base}-py{active['minor']}"]
    else:
        candidates = sorted(envs_dir.glob(f"{base}-py*"), key=_python_suffix, reverse=True)
    for candidate in candidates:
        if venv_python(candidate) is not None:
            return candidate, f"Poetry project, {candidate}"
    return None, f"Poetry project, but no environment {base}-py* in {envs_dir} (run `poetry install`)"


def poetry_env_name(name: str, root: Path) -> str:
    """Poetry's `EnvManager.generate_env_name` for the canonical project name and the project directory."""
    canonical = re.sub(r"[-_.]+", "-", name).lower()
    sanitized = re.sub(r'[ $`!*@"\\\r\n\t]', "_", canonical)[:42]
    normalized = os.path.normcase(os.path.realpath(root))
    digest = hashlib.sha256(normalized.encode("utf-8")).digest()
    return f"{sanitized}-{base64.urlsafe_b64encode(digest).decode()[:8]}"


def _python_suffix(env_dir: Path) -> tuple[int, ...]:
    match = re.search(r"-py(\d+)\.(\d+)$", env_dir.name)
    return (int(match.group(1)), int(match.group(2))) if match else ()


class _PoetrySettings:
    """The few Poetry settings detection needs, with Poetry's precedence: environment, local, global, default."""

    def __init__(self, root: Path, env: Mapping[str, str]) -> None:
        self._env = env
        home = Path(env.get("HOME") or Path.home())
        self._home = home
        config_dirs = [Path(env["POETRY_CONFIG_DIR"])] if env.get("POETRY_CONFIG_DIR") else self._default_config_dirs()
        global_file = next((d / "config.toml" for d in config_dirs if (d / "config.toml").is_file()), None)
        self._files = [_toml(root / "poetry.toml"), _toml(global_file) if global_file else {}]

    def _default_config_dirs(self) -> list[Path]:
        if sys.platform == "darwin":
            library = self._home / "Library"
            return [library / "Application Support" / "pypoetry", library / "Preferences" / "pypoetry"]
        return [Path(self._env.get("XDG_CONFIG_HOME") or self._home / ".config") / "pypoetry"]

    def _default_cache_dir(self) -> Path:
        if sys.platform == "darwin":
            return self._home / "Library" / "Caches" / "pypoetry"
        return Path(self._env.get("XDG_CACHE_HOME") or self._home / ".cache") / "pypoetry"

    def get(self, key: str) -> Any:
        variable = "POETRY_" + key.upper().replace(".", "_").replace("-", "_")
        if variable in self._env:
            return self._env[variable]
        for document in self._files:
            value: Any = document
            for part in key.split("."):
                value = value.get(part) if isinstance(value, Mapping) else None
            if value is not None:
                return value
        return None

    def flag(self, key: str) -> bool | None:
        value = self.get(key)
        if isinstance(value, str):
            return value.strip().lower() in ("true", "1")
        return value if isinstance(value, bool) else None

    def virtualenvs_path(self) -> Path:
        cache_dir = str(self.get("cache-dir") or self._default_cache_dir())
        path = str(self.get("virtualenvs.path") or "{cache-dir}/virtualenvs")
        return Path(path.replace("{cache-dir}", cache_dir)).expanduser()
