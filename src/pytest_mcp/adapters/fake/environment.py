"""The fake's target environment (interpreter, pytest, plugins) and FakeEnvironmentProbe, which reports it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pytest_mcp.domain.environment import ProbeFacts, ProbeReport
from pytest_mcp.domain.models import CoverageReport, InterpreterChoice, PluginInfo, PytestInfo, PythonInfo
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

    @property
    def interpreter(self) -> InterpreterChoice:
        if self.python is None:
            return FAKE_INTERPRETER
        return InterpreterChoice(path=self.python, rule="explicit", reason=_EXPLICIT_REASON)

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
        )
