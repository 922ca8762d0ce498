"""SubprocessPytestRunner: the TestRunner port backed by a real pytest subprocess."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pytest_mcp.adapters.pytest_subprocess.process import OutputLimits, ProcessOutcome, run_in_process_group
from pytest_mcp.adapters.pytest_subprocess.report import ParsedReport, read_report
from pytest_mcp.domain.runs import CollectionReport, CollectSpec, RunReport, RunSpec, Termination
from pytest_mcp.ports.test_runner import TestRunner

PLUGIN_MODULE = "_pytest_mcp_reporter"
PYTEST_MISSING_EXIT = 86
_PYTEST_MISSING_MARK = "pytest-mcp: cannot import pytest:"
# Runs `python -m pytest` exactly as the -m switch would (cwd first on sys.path), after putting
# this run's private plugin directory at the *end* of sys.path and applying any configured
# rlimits. The user's environment variables are not touched, so nothing leaks into processes
# the tests spawn. argv[1] is the plugin directory, argv[2] the rlimits ("RLIMIT_AS=n,...").
BOOTSTRAP = (
    "import os,sys,runpy\n"
    "d,l=sys.argv.pop(1),sys.argv.pop(1)\n"
    "if l:\n"
    " import resource\n"
    " for k,v in (x.split('=') for x in l.split(',')):\n"
    "  resource.setrlimit(getattr(resource,k),tuple(map(int,v.split(':'))))\n"
    "if sys.path and sys.path[0]=='':sys.path[0]=os.getcwd()\n"
    "sys.path.append(d)\n"
    "try:import pytest\n"
    f"except ImportError as e:sys.stderr.write('{_PYTEST_MISSING_MARK} %s\\n'%e);sys.exit({PYTEST_MISSING_EXIT})\n"
    "runpy.run_module('pytest',run_name='__main__',alter_sys=True)"
)
_VERBOSITY_FLAGS = {-2: ["-qq"], -1: ["-q"], 0: [], 1: ["-v"], 2: ["-vv"]}


@dataclass(frozen=True)
class ResourceLimits:
    """Optional POSIX rlimits for pytest and everything it starts: defence in depth, not a sandbox."""

    address_space_mb: int | None = None
    cpu_seconds: int | None = None

    def bootstrap_argument(self) -> str:
        limits = []
        if self.address_space_mb is not None:
            size = self.address_space_mb * 1024 * 1024
            limits.append(f"RLIMIT_AS={size}:{size}")
        if self.cpu_seconds is not None:
            # The soft limit sends SIGXCPU, which names the cause; the hard limit a second later is SIGKILL.
            limits.append(f"RLIMIT_CPU={self.cpu_seconds}:{self.cpu_seconds + 1}")
        return ",".join(limits)


class SubprocessPytestRunner(TestRunner):
    """Runs `python -m pytest` with the target interpreter and reads our reporter's output.

    Each call gets its own temporary directory (outside the project) holding the reporter
    plugin and its report, and its own process group, which is killed when the call ends,
    times out or is cancelled. Agent-provided node ids always follow `--`.
    """

    def __init__(
        self,
        python: Path,
        root: Path,
        limits: OutputLimits | None = None,
        max_report_bytes: int = 64 * 1024 * 1024,
        resource_limits: ResourceLimits | None = None,
    ) -> None:
        self._python = python
        self._root = root
        self._limits = limits or OutputLimits()
        self._rlimits = (resource_limits or ResourceLimits()).bootstrap_argument()
        self._max_report_bytes = max_report_bytes
        self._plugin_source = (
            resources.files("pytest_mcp.adapters.pytest_subprocess")
            .joinpath("_plugin", f"{PLUGIN_MODULE}.py")
            .read_bytes()
        )

    @property
    def python(self) -> Path:
        return self._python

    async def run(self, spec: RunSpec) -> RunReport:
        options = ["--color=no", *_VERBOSITY_FLAGS[spec.verbosity]]
        # Expressions are attached to their option (`-kEXPR`) so no argv element can start with `-p`.
        if spec.markers is not None:
            options.append(f"-m{spec.markers}")
        if spec.keywords is not None:
            options.append(f"-k{spec.keywords}")
        if spec.maxfail is not None:
            options.append(f"--maxfail={spec.maxfail}")
        if not spec.show_capture:
            options.append("--show-capture=no")
        private_options = ["--pytest-mcp-passed"] if spec.include_passed else []
        command, outcome, parsed = await self._pytest(
            options, spec.node_ids, spec.timeout, mode="run", private_options=private_options
        )
        return RunReport(
            termination=self._termination(outcome),
            command=command,
            duration=outcome.duration,
            summary=parsed.summary,
            tests=tuple(parsed.tests),
            collection_errors=tuple(parsed.collection_errors),
            stdout=outcome.stdout,
            stderr=outcome.stderr,
        )

    async def collect(self, spec: CollectSpec) -> CollectionReport:
        options = ["--color=no", "--collect-only", "-q"]
        # Expressions are attached to their option (`-kEXPR`) so no argv element can start with `-p`.
        if spec.markers is not None:
            options.append(f"-m{spec.markers}")
        if spec.keywords is not None:
            options.append(f"-k{spec.keywords}")
        targets = (spec.path,) if spec.path is not None else ()
        command, outcome, parsed = await self._pytest(options, targets, spec.timeout, mode="collect")
        return CollectionReport(
            termination=self._termination(outcome),
            command=command,
            duration=outcome.duration,
            finished=parsed.summary is not None,
            tests=tuple(parsed.items),
            deselected=parsed.deselected,
            collection_errors=tuple(parsed.collection_errors),
            stdout=outcome.stdout,
            stderr=outcome.stderr,
        )

    async def _pytest(
        self,
        options: list[str],
        targets: Sequence[str],
        timeout: float,
        *,
        mode: str,
        private_options: Sequence[str] = (),
    ) -> tuple[tuple[str, ...], ProcessOutcome, ParsedReport]:
        workdir = Path(tempfile.mkdtemp(prefix="pytest-mcp-"))
        try:
            (workdir / f"{PLUGIN_MODULE}.py").write_bytes(self._plugin_source)
            report_path = workdir / "report.jsonl"
            private = [
                "-p",
                PLUGIN_MODULE,
                f"--pytest-mcp-report={report_path}",
                f"--pytest-mcp-mode={mode}",
                *private_options,
            ]
            public = [*options, "--", *targets]
            argv = [str(self._python), "-c", BOOTSTRAP, str(workdir), self._rlimits, *private, *public]
            # What a person would type to reproduce the run: our private reporter options are left out.
            command = (str(self._python), "-m", "pytest", *public)
            try:
                outcome = await run_in_process_group(argv, cwd=self._root, timeout=timeout, limits=self._limits)
            except OSError as exc:
                reason = exc.strerror or exc.__class__.__name__
                outcome = ProcessOutcome(None, False, "", f"{_PYTEST_MISSING_MARK} {reason}", 0.0)
                return command, outcome, ParsedReport()
            return command, outcome, read_report(report_path, self._max_report_bytes)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _termination(self, outcome: ProcessOutcome) -> Termination:
        if outcome.timed_out:
            return Termination(kind="timed_out")
        if outcome.signal_name is not None:
            return Termination(kind="signalled", signal=outcome.signal_name)
        if outcome.returncode is None or (
            outcome.returncode == PYTEST_MISSING_EXIT and _PYTEST_MISSING_MARK in outcome.stderr
        ):
            cause = outcome.stderr.split(_PYTEST_MISSING_MARK, 1)[-1].strip()
            return Termination(
                kind="pytest_unavailable",
                detail=f"pytest cannot be run with the target interpreter {self._python} ({cause}); "
                "install pytest into that environment or point --python at one that has it",
            )
        return Termination(kind="exited", exit_code=outcome.returncode)
