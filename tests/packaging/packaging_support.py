"""What users install: the distribution's metadata, its built artifacts, the README's install lines."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.e2e_support import clean_env, structured, write_project

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SERVER_JSON = ROOT / "server.json"
SCHEMAS = Path(__file__).resolve().parent / "registry-schema"

# The README's placeholders for a project, and the tiny project a test puts there instead.
PROJECT_PLACEHOLDERS = ("/path/to/project", "${workspaceFolder}", "/srv/project")
TINY_PROJECT = {
    "test_tiny.py": """
        def test_passes():
            assert True

        def test_fails():
            assert 1 == 2
    """,
}
TINY_COUNTS = {"passed": 1, "failed": 1}


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def distribution_name() -> str:
    name = pyproject()["project"]["name"]
    assert isinstance(name, str)
    return name


def tool(name: str) -> str:
    """A development tool (uv, pipx, twine): next to this interpreter, where `scripts/setup` puts it."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    assert found, f"{name} is neither next to {sys.executable} nor on PATH: run scripts/setup (the dev extra has it)"
    return found


def run(argv: list[str], *, env: Mapping[str, str] | None = None, timeout: float = 600, **kwargs: Any) -> str:
    """Run a command to completion; its output, or an assertion that shows all of it."""
    done = subprocess.run(
        argv, capture_output=True, text=True, env=dict(env) if env is not None else None, timeout=timeout, **kwargs
    )
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


# --- the built artifacts -------------------------------------------------------------------


@dataclass(frozen=True)
class Artifacts:
    directory: Path
    sdist: Path
    wheel: Path

    def wheel_metadata(self) -> tuple[Any, str, set[str]]:
        """The wheel's METADATA (parsed), its entry_points.txt and the names of its files."""
        with zipfile.ZipFile(self.wheel) as archive:
            names = set(archive.namelist())
            info = next(name for name in names if name.endswith(".dist-info/METADATA"))
            metadata = Parser().parsestr(archive.read(info).decode("utf-8"))
            entry_points = archive.read(info.replace("METADATA", "entry_points.txt")).decode("utf-8")
        return metadata, entry_points, names


def clean_copy(destination: Path) -> Path:
    """The tree as a clean clone would have it: tracked files and new ones not ignored by git.

    Nothing built or cached in the working tree (egg-info, .venv, build/) can then hide a file
    that a clone would lack, and the build never writes into the working tree.
    """
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for relative in filter(None, listing.split("\0")):
        source = ROOT / relative
        if source.is_file():  # a tracked file deleted in the working tree is not in the clone either
            target = destination / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def build(source: Path, out: Path) -> Artifacts:
    """`python -m build`: the sdist, then the wheel built from the sdist, as a release would build them."""
    run([sys.executable, "-m", "build", "--outdir", str(out), str(source)])
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return Artifacts(out, sdist, wheel)


# --- environments a user would have ---------------------------------------------------------


def user_env(artifacts: Artifacts, scratch: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a README command runs in: the artifacts' directory is where the package is found.

    Only the location of the package is added (uv's and pip's own `FIND_LINKS` variables); every
    dependency comes from the package index as for a user. uv gets a cache of its own, so no
    environment from an earlier build is reused, and does not download interpreters.
    """
    env = clean_env(extra)
    env["UV_FIND_LINKS"] = str(artifacts.directory)
    env["UV_CACHE_DIR"] = str(scratch / "uv-cache")
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env["UV_LINK_MODE"] = "copy"
    env["PIP_FIND_LINKS"] = " ".join(filter(None, [str(artifacts.directory), os.environ.get("PIP_FIND_LINKS")]))
    path = _without_this_environment(env.get("PATH", ""))
    env["PATH"] = os.pathsep.join([str(commands_dir(scratch, "uv", "uvx")), *path])
    return env


def commands_dir(scratch: Path, *names: str) -> Path:
    """A directory with these development tools alone, so that the development environment's other
    commands (its pip, its pytest-mcp) stay off PATH."""
    directory = scratch / f"bin-{'-'.join(names)}"
    directory.mkdir(exist_ok=True)
    for name in names:
        link = directory / name
        if not link.exists():
            link.symlink_to(tool(name))
    return directory


def _without_this_environment(path: str) -> list[str]:
    ours = Path(sys.prefix, "bin")
    return [entry for entry in path.split(os.pathsep) if entry and Path(entry) != ours]


def version_line(command: list[str], env: Mapping[str, str] | None = None) -> str:
    return run([*command, "--version"], env=env, timeout=300).strip()


@asynccontextmanager
async def session(argv: list[str], env: Mapping[str, str], errlog: Path) -> AsyncIterator[Client]:
    """A real MCP session over stdio with the server `argv` starts, as a client configured with it would have."""
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(env))
    with errlog.open("a", encoding="utf-8") as log:
        async with Client(stdio_client(params, errlog=log)) as client:  # type: ignore[arg-type]
            yield client


def tiny_project(path: Path) -> Path:
    return write_project(path, TINY_PROJECT)


def counts(result: Any) -> dict[str, int]:
    summary = structured(result)["summary"]
    return {key: summary[key] for key in TINY_COUNTS}


# --- the README's install lines ---------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    language: str
    text: str
    line: int  # of the README, where the block's text starts


def code_blocks(text: str | None = None) -> list[Block]:
    source = README.read_text(encoding="utf-8") if text is None else text
    return [
        Block(m[1], m[2], source.count("\n", 0, m.start(2)) + 1)
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", source, flags=re.S | re.M)
    ]


def command_lines(block: Block) -> list[str]:
    """A shell block's commands, continuation lines joined."""
    return [line.strip() for line in block.text.replace("\\\n", " ").splitlines() if line.strip()]


@dataclass(frozen=True)
class InstallLines:
    """Every line of the README that installs or starts the published package, by how a test runs it."""

    installs: list[str]  # `pipx install ...`, `pip install ...`: run as they are
    servers: list[tuple[str, list[str]]]  # (where, argv) of a stdio server a client starts
    http: list[str]  # shell blocks that serve HTTP: run, then /healthz is asked
    unrun: list[str]  # a line that names the package but none of the above runs


PACKAGE_WORDS = ("mcp-server-pytest", "uvx", "pipx", "pip install")


def install_lines(text: str | None = None) -> InstallLines:
    installs: list[str] = []
    servers: list[tuple[str, list[str]]] = []
    http: list[str] = []
    unrun: list[str] = []
    for block in code_blocks(text):
        if block.language == "json":
            for where, entry in _server_entries(json.loads(block.text)):
                if "command" in entry:
                    servers.append((f"{where} (README line {block.line})", [entry["command"], *entry.get("args", [])]))
            continue
        lines = command_lines(block)
        if any("--transport http" in line and line.startswith("uvx ") for line in lines):
            http.append(block.text)
            continue
        for line in lines:
            if re.match(r"(pipx|pip) install ", line):
                installs.append(line)
            elif line.startswith("uvx "):
                servers.append((line, line.split()))
            elif line.startswith("claude mcp add ") and " -- " in line:
                servers.append((line, line.split(" -- ", 1)[1].split()))
            elif any(word in line for word in PACKAGE_WORDS):
                unrun.append(line)
    return InstallLines(installs, servers, http, unrun)


def _server_entries(config: Any) -> list[tuple[str, dict[str, Any]]]:
    entries: list[tuple[str, dict[str, Any]]] = []
    for key in ("mcpServers", "servers"):
        for name, entry in (config.get(key) or {}).items() if isinstance(config, dict) else ():
            entries.append((f"{key}.{name}", entry))
    return entries


def placed(argv: list[str], project: Path) -> list[str]:
    """`argv` with the README's placeholder project replaced by a real one."""
    return [str(project) if arg in PROJECT_PLACEHOLDERS else arg for arg in argv]
