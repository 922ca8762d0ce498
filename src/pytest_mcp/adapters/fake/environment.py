"""The fake's target environment (interpreter, pytest, plugins) and FakeEnvironmentProbe, which reports it."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

from pytest_mcp.adapters.fake.script import ScriptError
from pytest_mcp.domain.environment import (
    InterpreterChoice,
    PluginInfo,
    ProbeFacts,
    ProbeReport,
    ProcessContainment,
    PytestInfo,
    PythonInfo,
    Recorder,
    recorder_for,
)
from pytest_mcp.domain.models import CoverageFile, CoverageReport
from pytest_mcp.domain.runs import RunSpec, Termination
from pytest_mcp.ports.environment_probe import EnvironmentProbe

FAKE_INTERPRETER = InterpreterChoice(
    path=Path("fake"), rule="explicit", reason="the fake runner: no interpreter is started"
)
# The reason the real server gives when the interpreter was configured (`--python`).
_EXPLICIT_REASON = "--python, PYTEST_MCP_PYTHON or [tool.pytest-mcp] python"
# The plugins a request field needs, in the order the real runner checks for them.
_NEEDED_FOR = (("workers", "pytest-xdist"), ("coverage", "pytest-cov"), ("affected", "pytest-testmon"))
_ENTRY_POINTS = {"pytest-xdist": ("xdist", "xdist.looponfail"), "pytest-cov": ("pytest_cov",)}
NO_PYTEST = "ModuleNotFoundError: No module named 'pytest'"


def normalized_distribution(name: str) -> str:
    """A distribution name as packaging normalises it: `Pytest_Xdist` is `pytest-xdist`."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class FakeEnvironment:
    """What the fake's target interpreter has: Python, pytest (or not), plugins, a coverage measurement.

    By default: a ready environment, pytest 9.0.0 on Python 3.12.0, no plugins; the interpreter is
    the server's `--python` when one is given (`connect(python=...)`), else `fake`.
    """

    python: Path | None = None
    python_version: str = "3.12.0"
    pytest_version: str | None = "9.0.0"
    pytest_error: str | None = None
    config_error: str | None = None
    prefix: str | None = None
    plugins: dict[str, str] = field(default_factory=dict)
    coverage: CoverageReport | None = None
    containment: ProcessContainment = "subreaper"

    def install(self, distributions: tuple[str, ...]) -> None:
        """Install each `name` or `name==version`; ScriptError names the one that is not a distribution."""
        for index, distribution in enumerate(distributions):
            if not isinstance(distribution, str):
                raise ScriptError(f"distributions[{index}]: must be a name like 'pytest-xdist', not {distribution!r}")
            name, _, version = distribution.partition("==")
            if not _is_distribution(name.strip()) or (_ and not version.strip()):
                raise ScriptError(
                    f"distributions[{index}]: {distribution!r} is not a distribution name, or name==version, "
                    "like 'pytest-xdist' or 'pytest-cov==6.0.0'"
                )
            self.plugins[normalized_distribution(name.strip())] = version.strip() or "1.0.0"

    def script_coverage(self, percent: float, files: Mapping[str, float], missing: Mapping[str, str]) -> None:
        """The measurement a coverage run reports; installs pytest-cov, which a measurement needs."""
        _check_percent("percent", percent)
        if not isinstance(files, Mapping) or not isinstance(missing, Mapping):
            raise ScriptError("files, missing: must be mappings of a file's path to its percent, or missing lines")
        for file, value in files.items():
            if not isinstance(file, str) or not file or file.startswith(("/", "-")) or ".." in file.split("/"):
                raise ScriptError(f"files: {file!r} must be a path relative to the root, like 'src/cart.py'")
            _check_percent(f"files[{file!r}]", value)
        for file, lines in missing.items():
            if file not in files:
                raise ScriptError(f"missing: {file!r} is not in files; give its percent there too")
            if not isinstance(lines, str):
                raise ScriptError(f"missing[{file!r}]: must be line ranges as text, like '12-15, 40'; got {lines!r}")
        self.coverage = CoverageReport(
            percent=float(percent),
            files=tuple(
                CoverageFile(file=file, percent=float(value), missing=missing.get(file, ""))
                for file, value in files.items()
            ),
        )
        if "pytest-cov" not in self.plugins:
            self.install(("pytest-cov",))

    def script(
        self,
        python_version: str,
        pytest_version: str | None,
        pytest_error: str | None,
        config_error: str | None,
        prefix: str | None,
        containment: ProcessContainment,
    ) -> None:
        """Python's and pytest's versions, or why pytest cannot be imported, and what stops a run's
        processes; checked, naming the argument."""
        for name, value in (("python_version", python_version), ("pytest_version", pytest_version)):
            if value is not None and (not isinstance(value, str) or not value[:1].isdigit()):
                raise ScriptError(f"{name}: must be a version like '3.12.0', not {value!r}")
        if pytest_version is None and config_error is not None:
            raise ScriptError("config_error: only pytest reads the configuration; with pytest_version=None it has none")
        if pytest_version is not None and pytest_error is not None:
            raise ScriptError("pytest_error: only an environment without pytest has one; pass pytest_version=None")
        for name, text in (("pytest_error", pytest_error), ("config_error", config_error), ("prefix", prefix)):
            if text is not None and (not isinstance(text, str) or not text.strip()):
                raise ScriptError(f"{name}: must be a non-empty string or None; got {text!r}")
        if containment not in get_args(ProcessContainment):
            raise ScriptError(
                f"containment: must be one of {', '.join(get_args(ProcessContainment))}; got {containment!r}"
            )
        self.python_version = python_version
        self.pytest_version = pytest_version
        self.pytest_error = pytest_error
        self.config_error = config_error
        self.prefix = prefix
        self.containment = containment

    @property
    def interpreter(self) -> InterpreterChoice:
        if self.python is None:
            return FAKE_INTERPRETER
        return InterpreterChoice(path=self.python, rule="explicit", reason=_EXPLICIT_REASON)

    @property
    def recorder(self) -> Recorder:
        """What records the spectrum in this interpreter, as the real plugin chooses (ADR 0020)."""
        return recorder_for(self.facts(None).python)

    def facts(self, root: Path | None) -> ProbeFacts:
        executable = str(self.interpreter.path)
        # A virtual environment's python is PREFIX/bin/python.
        prefix = self.prefix or (str(self.python.parent.parent) if self.python is not None else "fake")
        pytest = None if self.pytest_version is None else PytestInfo(version=self.pytest_version, location="fake")
        return ProbeFacts(
            python=PythonInfo(
                executable=executable,
                version=self.python_version,
                implementation="CPython",
                prefix=prefix,
                virtual_env=True,
            ),
            pytest=pytest,
            pytest_error=(self.pytest_error or "ModuleNotFoundError: No module named 'pytest'")
            if pytest is None
            else None,
            plugins=tuple(
                PluginInfo(
                    name=name,
                    version=version,
                    entry_points=_ENTRY_POINTS.get(name, (name.removeprefix("pytest-").replace("-", "_"),)),
                    loaded=True if pytest is not None else None,
                )
                for name, version in self.plugins.items()
            ),
            rootdir=str(root) if root is not None and pytest is not None else None,
            config_error=self.config_error if pytest is not None else None,
        )

    def refusal(self, spec: RunSpec | None) -> Termination | None:
        """How the real runner's start would refuse this call here: no pytest, or a plugin a field needs."""
        python = str(self.interpreter.path)
        if self.pytest_version is None:
            cause = (self.pytest_error or NO_PYTEST).split(": ", 1)[-1]
            return Termination(
                kind="pytest_unavailable",
                detail=f"pytest cannot be run with the target interpreter {python} ({cause}); "
                "install pytest into that environment or point --python at one that has it",
            )
        if spec is not None:
            for field_name, distribution in _NEEDED_FOR:
                if getattr(spec, field_name) not in (None, False) and distribution not in self.plugins:
                    return Termination(kind="plugin_missing", detail=distribution)
        return None


class FakeEnvironmentProbe(EnvironmentProbe):
    """Reports a scripted environment, so check_environment answers without starting anything.

    `connect()` gives it the runner's environment (`FakeTestRunner.script_environment` and
    `install`); built from a root alone, it reports the default one. Pass `facts` (and an
    `interpreter`) to script the probe's answer outright, e.g. `pytest=None` for an environment
    without pytest; the use case judges scripted facts exactly as it judges real ones.
    """

    def __init__(
        self,
        root: Path | None = None,
        facts: ProbeFacts | None = None,
        interpreter: InterpreterChoice | None = None,
        *,
        environment: FakeEnvironment | None = None,
    ) -> None:
        self._root = root
        self._facts = facts
        self._interpreter = interpreter
        self._environment = environment or FakeEnvironment()

    async def probe(self, timeout: float) -> ProbeReport:
        interpreter = self._interpreter or self._environment.interpreter
        return ProbeReport(
            interpreter=interpreter,
            command=(str(interpreter.path), "-c", "<pytest-mcp _pytest_mcp_probe.py>"),
            facts=self._facts or self._environment.facts(self._root),
            containment=self._environment.containment,
        )


def _is_distribution(name: str) -> bool:
    return bool(name) and all(c.isalnum() or c in "-_." for c in name) and name[0].isalnum() and name[-1].isalnum()


def _check_percent(name: str, value: object) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 <= value <= 100
    ):
        raise ScriptError(f"{name}: must be a percentage from 0 to 100; got {value!r}")
