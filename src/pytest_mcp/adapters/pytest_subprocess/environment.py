"""SubprocessEnvironmentProbe: the EnvironmentProbe port, backed by a short run of the target interpreter."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from pytest_mcp.adapters.pytest_subprocess._plugin._pytest_mcp_protocol import WARDEN_REPORT
from pytest_mcp.adapters.pytest_subprocess.containment import read_warden
from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.process import (
    CommandTooLong,
    OutputLimits,
    child_environment,
    run_in_process_group,
)
from pytest_mcp.adapters.pytest_subprocess.sandbox import BubblewrapSandbox
from pytest_mcp.adapters.pytest_subprocess.untrusted import read_untrusted
from pytest_mcp.domain.environment import ProbeFacts, ProbeReport
from pytest_mcp.ports.environment_probe import EnvironmentProbe

PROBE_MODULE = "_pytest_mcp_probe"
WARDEN_MODULE = "_pytest_mcp_warden"
_PROBE_LIMITS = OutputLimits(stdout_head=2048, stdout_tail=4096, stderr_head=2048, stderr_tail=8192)
_MAX_FACTS_BYTES = 4 * 1024 * 1024


class SubprocessEnvironmentProbe(EnvironmentProbe):
    """Runs `python -c <probe> OUT` with the target interpreter in the project root.

    Like a test run, the probe starts in the root with the user's environment unchanged and
    the root first on sys.path, under a warden where Linux allows one, in its own process
    group that is killed when it ends, times out or is cancelled. It writes its facts to a
    file in a private temporary directory, so whatever the interpreter prints at start-up
    cannot corrupt them.
    """

    def __init__(self, interpreter: TargetInterpreter, root: Path, sandbox: BubblewrapSandbox | None = None) -> None:
        self._interpreter = interpreter
        self._sandbox = sandbox
        self._root = root
        plugin = resources.files("pytest_mcp.adapters.pytest_subprocess").joinpath("_plugin")
        self._source = plugin.joinpath(f"{PROBE_MODULE}.py").read_text(encoding="utf-8")
        self._warden = plugin.joinpath(f"{WARDEN_MODULE}.py").read_bytes()

    async def probe(self, timeout: float) -> ProbeReport:
        choice = await self._interpreter.choice()
        python = str(choice.path)
        # The probe's source is long; the reported command names it instead of repeating it.
        command: tuple[str, ...] = (python, "-c", f"<pytest-mcp {PROBE_MODULE}.py>")
        workdir = Path(tempfile.mkdtemp(prefix="pytest-mcp-probe-"))
        sandbox = self._sandbox
        try:
            facts_path = workdir / "environment.json"
            warden_path = workdir / f"{WARDEN_MODULE}.py"
            warden_path.write_bytes(self._warden)
            argv = [python, "-c", self._source, str(facts_path), str(warden_path), str(workdir / WARDEN_REPORT)]
            if sandbox is not None:  # as a run is: what the probe sees is what the tests will
                argv = sandbox.wrap(argv, root=self._root, private_dir=workdir)
                command = (*sandbox.command_prefix(), *command)
            try:
                outcome = await run_in_process_group(
                    argv,
                    cwd=self._root,
                    timeout=timeout,
                    limits=_PROBE_LIMITS,
                    environment=sandbox.environment if sandbox is not None else None,
                )
            except CommandTooLong as exc:
                return ProbeReport(interpreter=choice, command=command, start_error=f"its command is too long: {exc}")
            except OSError as exc:
                return ProbeReport(
                    interpreter=choice,
                    command=command,
                    start_error=exc.strerror or exc.__class__.__name__,
                )
            warden = read_warden(workdir)
            if sandbox is not None and warden.signal is not None and outcome.returncode == 128 + warden.signal:
                outcome = dataclasses.replace(outcome, returncode=-warden.signal)  # as bwrap passes a signal on
            return ProbeReport(
                interpreter=choice,
                command=command,
                sandbox=sandbox.description if sandbox is not None else None,
                sandbox_withheld=sandbox.withheld(child_environment()) if sandbox is not None else (),
                duration=outcome.duration,
                facts=None if outcome.timed_out or outcome.returncode != 0 else _read_facts(facts_path),
                timed_out=outcome.timed_out,
                containment=warden.containment,
                exit_code=outcome.returncode if outcome.signal_name is None else None,
                signal=outcome.signal_name,
                stdout=outcome.stdout,
                stderr=outcome.stderr,
            )
        finally:
            shutil.rmtree(workdir, ignore_errors=True)


def _read_facts(path: Path) -> ProbeFacts | None:
    """The probe's answer, or None when it wrote none we can trust."""
    try:
        return ProbeFacts.model_validate_json(read_untrusted(path, _MAX_FACTS_BYTES))
    except (OSError, ValidationError):
        return None
