"""What an environment probe reports back about the target interpreter: raw facts, not yet judged."""

from __future__ import annotations

from pydantic import Field

from pytest_mcp.domain.models import (
    InterpreterChoice,
    PluginInfo,
    ProcessContainment,
    PytestInfo,
    PythonInfo,
    _Value,
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
    exit_code: int | None = None
    signal: str | None = Field(None, description="The signal that killed the probe, e.g. SIGSEGV.")
    stdout: str = ""
    stderr: str = ""
    busy: str | None = Field(None, description="Why the probe could not start: every run slot was taken.")
