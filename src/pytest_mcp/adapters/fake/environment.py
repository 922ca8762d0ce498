"""FakeEnvironmentProbe: the EnvironmentProbe port without a process, for the fake runner."""

from __future__ import annotations

from pathlib import Path

from pytest_mcp.domain.environment import ProbeFacts, ProbeReport
from pytest_mcp.domain.models import InterpreterChoice, PytestInfo, PythonInfo
from pytest_mcp.ports.environment_probe import EnvironmentProbe

FAKE_INTERPRETER = InterpreterChoice(
    path=Path("fake"), rule="explicit", reason="the fake runner: no interpreter is started"
)


class FakeEnvironmentProbe(EnvironmentProbe):
    """Reports a fixed environment, so check_environment answers without starting anything.

    By default: a ready environment, pytest 9.0.0 on Python 3.12.0 (`fake` as the interpreter,
    as in the fake runner's commands), no plugins, rootdir `root`. Pass `facts` (and an
    `interpreter`) to script another answer, e.g. `pytest=None` for an environment without
    pytest; the use case judges scripted facts exactly as it judges real ones.
    """

    def __init__(
        self, root: Path | None = None, facts: ProbeFacts | None = None, interpreter: InterpreterChoice | None = None
    ) -> None:
        self._interpreter = interpreter or FAKE_INTERPRETER
        self._facts = facts or ProbeFacts(
            python=PythonInfo(
                executable="fake", version="3.12.0", implementation="CPython", prefix="fake", virtual_env=True
            ),
            pytest=PytestInfo(version="9.0.0", location="fake"),
            rootdir=str(root) if root is not None else None,
        )

    async def probe(self, timeout: float) -> ProbeReport:
        return ProbeReport(
            interpreter=self._interpreter,
            command=(str(self._interpreter.path), "-c", "<pytest-mcp _pytest_mcp_probe.py>"),
            facts=self._facts,
        )
