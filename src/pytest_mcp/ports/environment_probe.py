"""The environment-probe port."""

from __future__ import annotations

from typing import Protocol

from pytest_mcp.domain.environment import ProbeReport


class EnvironmentProbe(Protocol):
    """Inspects the target interpreter that tests would run with, without running any test.

    Promises:
    - `probe` returns a report for every ending: facts when the probe completed; otherwise
      why not (the interpreter could not start, the deadline passed, it crashed or exited
      without an answer). Judging the facts is the use case's job.
    - The report names the interpreter and the detection rule that chose it.
    - It never installs or changes anything: no tests run, no conftest is imported, nothing
      is written into the project. When the call is cancelled, nothing it started outlives it.

    Raises only on its own bugs.
    """

    async def probe(self, timeout: float) -> ProbeReport: ...
