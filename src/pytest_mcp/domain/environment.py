"""check_environment's answer, and what an environment probe reports back about the target interpreter:
raw facts, not yet judged."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from pytest_mcp.domain.models import _Value

DetectionRule = Literal["explicit", "virtual_env", "project_venv", "uv", "poetry", "path", "server"]
"""The rules that choose the target interpreter, in the order they are tried (ADR 0008)."""


class InterpreterChoice(_Value):
    """The interpreter that runs pytest, and the detection rule that chose it."""

    path: Path = Field(description="As configured or found, symlinks kept: a virtualenv's python is one.")
    rule: DetectionRule
    reason: str = Field(description="What the rule found, e.g. `ROOT/.venv` or `$VIRTUAL_ENV=/srv/env`.")
    passed_over: tuple[str, ...] = Field((), description="Earlier rules that did not apply, and why.")


class PythonInfo(_Value):
    executable: str = Field(description="sys.executable as the target interpreter reports it.")
    version: str
    implementation: str = Field(description="e.g. CPython or PyPy.")
    prefix: str = Field(description="sys.prefix: the environment that packages are installed into.")
    virtual_env: bool = Field(description="True when the prefix is a virtual environment.")


class PytestInfo(_Value):
    version: str
    location: str = Field(description="The directory pytest is imported from.")


class PluginInfo(_Value):
    """An installed distribution that registers pytest plugins (entry point group `pytest11`)."""

    name: str
    version: str
    entry_points: tuple[str, ...] = Field(description="Plugin names it registers; `-p no:NAME` disables one.")
    loaded: bool | None = Field(
        None, description="Whether pytest loads it in this project (autoload, -p, addopts); null when unknown."
    )
    changes: str | None = Field(
        None, description="For a plugin known to change the order or the outcomes of tests: what it changes."
    )


Recorder = Literal["sys.monitoring", "sys.setprofile", "off"]


def recorder_for(python: PythonInfo) -> Recorder:
    """The function-entry events a run (3.12+) or a second pass uses in this interpreter: as its plugin chooses."""
    parts = tuple(int(part) for part in python.version.split(".")[:2] if part.isdigit())
    return "sys.monitoring" if python.implementation == "CPython" and parts >= (3, 12) else "sys.setprofile"


ProcessContainment = Literal["subreaper", "process_group"]
"""How a run's processes are stopped at its end (ADR 0004): every descendant, kept under a child
subreaper (Linux), or its process group only (elsewhere, or where prctl is refused)."""


class EnvironmentResult(_Value):
    """The answer to check_environment: the target interpreter, its pytest, and pytest's view of the project."""

    ready: bool = Field(description="True when pytest can run here; otherwise `problems` says what to do.")
    problems: tuple[str, ...] = Field((), description="What stops pytest from running, each with the fix.")
    interpreter: InterpreterChoice
    python: PythonInfo
    pytest: PytestInfo | None = Field(description="null when pytest cannot be imported by the target interpreter.")
    plugins: tuple[PluginInfo, ...] = ()
    plugin_autoload: bool = Field(
        True, description="False when PYTEST_DISABLE_PLUGIN_AUTOLOAD (or --disable-plugin-autoload) is set."
    )
    rootdir: str | None = Field(None, description="pytest's rootdir for this project; null without pytest.")
    configfile: str | None = Field(None, description="The configuration file pytest reads, if any.")
    testpaths: tuple[str, ...] = Field((), description="The `testpaths` setting: what runs when no path is given.")
    process_containment: ProcessContainment = Field(
        "process_group",
        description="What stops a run's processes at its end: 'subreaper' (Linux): every process the run "
        "started, even one that left its process group (start_new_session, setsid, a double fork); "
        "'process_group': only those still in pytest's process group.",
    )
    localization: Recorder = Field(
        "off",
        description="What records the functions each test runs (ADR 0020): 'sys.monitoring' (Python 3.12 and "
        "later: the run records itself, one event per function per test), 'sys.setprofile' (earlier: a second "
        "pass after a failing run, every call), or 'off' (--localize 0).",
    )
    sandbox: str | None = Field(
        None,
        description="What contains test code (--sandbox): e.g. `bubblewrap: read-only but the root (not its .git "
        "nor its virtualenv) and a private /tmp of 512 MiB, $HOME empty but for the interpreter's directories, "
        "network: loopback only`; null when tests run with the server's own rights.",
    )
    sandbox_withheld: tuple[str, ...] = Field(
        (),
        description="Under --sandbox: the server's variables whose names look like credentials (KEY, SECRET, TOKEN, "
        "PASSWORD, CREDENTIAL) and that the tests do not get, by name, never by value; --sandbox-env NAME passes one.",
    )


class ProbeFacts(_Value):
    """What the probe found inside the target interpreter."""

    python: PythonInfo
    pytest: PytestInfo | None = None
    pytest_error: str | None = Field(None, description="Why `import pytest` failed, when it did.")
    plugins: tuple[PluginInfo, ...] = ()
    plugin_autoload: bool = True
    rootdir: str | None = None
    configfile: str | None = None
    testpaths: tuple[str, ...] = ()
    config_error: str | None = Field(None, description="Why pytest could not read its configuration, if it could not.")


class ProbeReport(_Value):
    """Everything a probe observed. `facts` is None when the probe did not complete.

    `interpreter` is None only when the probe never started because the server was busy (`busy`).
    """

    interpreter: InterpreterChoice | None = None
    command: tuple[str, ...]
    duration: float = 0.0
    facts: ProbeFacts | None = None
    start_error: str | None = Field(None, description="Why the interpreter could not be started at all.")
    timed_out: bool = False
    containment: ProcessContainment = Field(
        "process_group", description="How the probe's processes were contained, as its runner found it."
    )
    sandbox: str | None = Field(None, description="The sandbox the probe ran in, as runs do; None without one.")
    sandbox_withheld: tuple[str, ...] = Field(
        (), description="The variables the sandbox withheld from the probe, as from runs: names, never values."
    )
    exit_code: int | None = None
    signal: str | None = Field(None, description="The signal that killed the probe, e.g. SIGSEGV.")
    stdout: str = ""
    stderr: str = ""
    busy: str | None = Field(None, description="Why the probe could not start: every run slot was taken.")
