"""SubprocessPytestRunner: the TestRunner port backed by a real pytest subprocess."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import anyio

from pytest_mcp.adapters.pytest_options import COVERAGE_PLACEHOLDER, collect_options, run_options
from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
from pytest_mcp.adapters.pytest_subprocess.containment import WardenReport, read_warden
from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.process import (
    PROCESS_THREADS,
    CommandTooLong,
    OutputLimits,
    ProcessOutcome,
    run_in_process_group,
)
from pytest_mcp.adapters.pytest_subprocess.report import ParsedReport, ProgressFollower, read_coverage, read_report
from pytest_mcp.adapters.pytest_subprocess.sandbox import BWRAP_ERROR_PREFIX, BubblewrapSandbox
from pytest_mcp.adapters.pytest_subprocess.spectrum import (
    ProjectCode,
    RunRecording,
    read_run_spectrum,
    read_spectrum,
    with_digests,
)
from pytest_mcp.adapters.pytest_subprocess.testmon_data import DATA_FILE, data_directory, taking_turns
from pytest_mcp.adapters.pytest_subprocess.untrusted import UntrustedFileRefused
from pytest_mcp.adapters.worker_threads import ThreadWorker
from pytest_mcp.domain.localization import CodeState, Spectrum
from pytest_mcp.domain.models import CoverageReport
from pytest_mcp.domain.runs import CollectionReport, CollectSpec, LocalizeSpec, RunReport, RunSpec, Termination
from pytest_mcp.ports.progress import ProgressSink
from pytest_mcp.ports.test_runner import TestRunner
from pytest_mcp.ports.worker import Worker

# Our plugins, the warden (which the bootstrap runs first) and the protocol they share; testmon's
# part is loaded with `-p` by affected runs only, the sandbox's by sandboxed runs only.
PLUGIN_FILES = (
    "_pytest_mcp_protocol.py",
    "_pytest_mcp_warden.py",
    *(f"{name}.py" for name in protocol.OWN_PLUGINS),
    f"{protocol.TESTMON_PLUGIN}.py",
    f"{protocol.SANDBOX_PLUGIN}.py",
)
"""Copied from the package into each run's private directory, where the bootstrap loads them."""
DUMP_SIGNAL = getattr(signal, protocol.DUMP_SIGNAL)


@dataclass(frozen=True)
class ResourceLimits:
    """Optional POSIX rlimits for pytest and everything it starts (defence in depth, not a sandbox), and
    its nice value: a run with one gives way to the server, its processes by their nice, and its
    session by its autogroup's (`run_in_process_group`'s `share`)."""

    address_space_mb: int | None = None
    cpu_seconds: int | None = None
    nice: int | None = None

    def bootstrap_argument(self) -> str:
        limits = [] if self.nice is None else [f"NICE={self.nice}"]
        if self.address_space_mb is not None:
            size = self.address_space_mb * 1024 * 1024
            limits.append(f"RLIMIT_AS={size}:{size}")
        if self.cpu_seconds is not None:
            # The soft limit sends SIGXCPU, which names the cause; the hard limit a second later is SIGKILL.
            limits.append(f"RLIMIT_CPU={self.cpu_seconds}:{self.cpu_seconds + 1}")
        return ",".join(limits)


@dataclass(frozen=True)
class _Results:
    """What a run left in its private directory, as `_results` reads it."""

    warden: WardenReport
    coverage: CoverageReport | None = None
    parsed: ParsedReport = dataclasses.field(default_factory=ParsedReport)
    spectrum: Spectrum | None = None  # a second pass's
    recording: RunRecording | None = None  # a run's own
    unreadable: str | None = None  # why a file a test replaced was not read


@dataclass(frozen=True)
class _Run:
    python: str
    command: tuple[str, ...]
    outcome: ProcessOutcome
    parsed: ParsedReport
    coverage: CoverageReport | None
    refused: Termination | None = None  # nothing was started: the OS would refuse the command
    stopped: tuple[str, ...] = ()  # processes the run left behind, which its warden stopped
    spectrum: Spectrum | None = None  # a second pass's (ADR 0020)
    recording: RunRecording | None = None  # what a run recorded of itself (ADR 0020)


class SubprocessPytestRunner(TestRunner):
    """Runs `python -m pytest` with the target interpreter and reads our reporter's output.

    Each call gets its own temporary directory (outside the project) holding our plugins (the
    path guard and the reporter), the warden and the report, and its own process group under the
    warden (`containment`): whatever the run started, in or out of that group, is killed when the
    call ends, times out or is cancelled, and a run that ended by itself says what it left running.
    Agent-provided node ids always follow `--`.
    """

    def __init__(
        self,
        interpreter: TargetInterpreter,
        root: Path,
        limits: OutputLimits | None = None,
        max_report_bytes: int = 64 * 1024 * 1024,
        resource_limits: ResourceLimits | None = None,
        sandbox: BubblewrapSandbox | None = None,
        worker: Worker | None = None,
        record: bool = True,
        record_lines: bool = True,
    ) -> None:
        """`record`: whether a run records the functions its tests enter, where the interpreter can (3.12+);
        `record_lines`, whether it records the lines they run of them too; which tests passed and which
        project files were imported are recorded always (ADR 0020)."""
        self._interpreter = interpreter
        self._record = record
        self._record_lines = record_lines
        self._worker = worker or ThreadWorker()
        self._process_threads = ThreadWorker(PROCESS_THREADS)
        self._sandbox = sandbox
        self._root = root
        self._limits = limits or OutputLimits()
        resource_limits = resource_limits or ResourceLimits()
        self._rlimits = resource_limits.bootstrap_argument()
        self._share = resource_limits.nice
        self._max_report_bytes = max_report_bytes
        self._code = ProjectCode(root)
        plugin = resources.files("pytest_mcp.adapters.pytest_subprocess").joinpath("_plugin")
        self._plugin_files = {name: plugin.joinpath(name).read_bytes() for name in PLUGIN_FILES}
        self._bootstrap = plugin.joinpath("_pytest_mcp_bootstrap.py").read_text(encoding="utf-8")

    async def run(self, spec: RunSpec, progress: ProgressSink | None = None) -> RunReport:
        required = []
        if spec.workers is not None:
            required.append("xdist=pytest-xdist")
        if spec.coverage:
            required.append("pytest_cov=pytest-cov")
        private_options = [protocol.OPTION_PASSED] if spec.include_passed else []
        private_options.append(f"{protocol.OPTION_SPECTRUM_RUN}={_WORKDIR}/{_SPECTRUM_DIR}")
        if not self._record:
            private_options.append(protocol.OPTION_SPECTRUM_FILES_ONLY)
        elif not self._record_lines:
            private_options.append(protocol.OPTION_SPECTRUM_NO_LINES)
        if spec.progress and progress is not None:
            private_options.append(protocol.OPTION_PROGRESS)
        if spec.facts:
            private_options.append(f"{protocol.OPTION_FACTS}={json.dumps(spec.facts)}")
        options = run_options(spec)
        turns: contextlib.AbstractAsyncContextManager[None] = contextlib.nullcontext()
        writable: list[Path] = []
        if spec.affected:
            required.append("testmon=pytest-testmon")
            data = data_directory(self._root)
            writable.append(data)
            private_options += ["-p", protocol.TESTMON_PLUGIN, f"{protocol.OPTION_TESTMON_DATA}={data / DATA_FILE}"]
            if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
                options = ["-p", "testmon.pytest_testmon", *options]  # its entry point is not loaded
            turns = taking_turns(data)
        async with turns:
            run = await self._pytest(
                options,
                spec.node_ids,
                spec.timeout,
                mode="run",
                private_options=private_options,
                required=required,
                progress=progress if spec.progress else None,
                writable=writable,
            )
        spectrum, code = await self._recorded(run)
        return RunReport(
            passed=run.recording.passed if run.recording is not None else None,
            termination=run.refused or self._termination(run.outcome, python=run.python),
            command=_reproducible(run.command, run.parsed.reproduce),
            duration=run.outcome.duration,
            summary=run.parsed.summary,
            tests=tuple(run.parsed.tests),
            collection_errors=tuple(run.parsed.collection_errors),
            stdout=run.outcome.stdout,
            stderr=run.outcome.stderr,
            coverage=run.coverage,
            stopped_processes=run.stopped,
            facts=run.parsed.facts,
            spectrum=spectrum,
            code=code,
        )

    async def _recorded(self, run: _Run) -> tuple[Spectrum | None, CodeState | None]:
        """The run's own spectrum, its functions named and digested (against git's HEAD too where a test
        failed: ranking needs it then only), and the digests of every function of the project files it
        imported (ADR 0020)."""
        recording = run.recording
        if recording is None:
            return None, None
        code = await self._worker.run(self._code.state, recording.imported)
        spectrum = recording.spectrum
        if spectrum is not None:
            failed = any(trace.outcome == "failed" for trace in spectrum.tests)
            spectrum = await with_digests(
                spectrum, self._code, self._root, self._worker, head=failed, processes=self._process_threads
            )
        return spectrum, code

    async def collect(self, spec: CollectSpec) -> CollectionReport:
        targets = (spec.path,) if spec.path is not None else ()
        private_options = [f"{protocol.OPTION_LIST_LIMIT}={spec.max_listed}"] if spec.max_listed is not None else []
        run = await self._pytest(
            collect_options(spec), targets, spec.timeout, mode="collect", private_options=private_options
        )
        summary = run.parsed.summary
        return CollectionReport(
            termination=run.refused or self._termination(run.outcome, python=run.python),
            command=_reproducible(run.command, run.parsed.reproduce),
            duration=run.outcome.duration,
            finished=summary is not None,
            tests=tuple(run.parsed.items),
            unlisted=max(summary.total - len(run.parsed.items), 0) if summary is not None else 0,
            modules=tuple(run.parsed.modules),
            deselected=run.parsed.deselected,
            collection_errors=tuple(run.parsed.collection_errors),
            stdout=run.outcome.stdout,
            stderr=run.outcome.stderr,
        )

    async def localize(self, spec: LocalizeSpec) -> Spectrum | str:
        """The failing tests again, then `spec.others` of the rest of their modules, each recorded (ADR 0020).

        pytest's cache goes to the pass's private directory, so that `--lf` still reads the run's
        failures; `--maxfail=0` undoes a project's `-x`. The spectrum plugin orders the tests after
        every other plugin (pytest-randomly included, which stays loaded: a project's
        `--randomly-seed` in addopts or PYTEST_ADDOPTS would be a usage error without it).
        """
        started = time.monotonic()
        deadline = time.time() + spec.last_start  # and it is killed at spec.seconds, whatever it is doing
        options = [
            *run_options(_plain_pass(spec.run)),
            "--maxfail=0",
            "--tb=no",  # nothing reads the pass's tracebacks: pytest need not format them
            "-o",
            f"cache_dir={_WORKDIR}/cache",
        ]
        private = [
            f"{protocol.OPTION_SPECTRUM}={_WORKDIR}/spectrum.jsonl",
            f"{protocol.OPTION_SPECTRUM_FIRST}={_WORKDIR}/first.txt",
            f"{protocol.OPTION_SPECTRUM_DEADLINE}={deadline:.3f}",
            f"{protocol.OPTION_SPECTRUM_OTHERS}={spec.others}",
        ]
        run = await self._pytest(
            options,
            spec.modules,
            spec.seconds,
            mode="run",
            private_options=private,
            first=spec.failing,
        )
        if run.refused is not None or run.spectrum is None or not run.spectrum.tests:
            return _why_nothing(run, spec.seconds)
        spectrum = await with_digests(
            run.spectrum, self._code, self._root, self._worker, processes=self._process_threads
        )
        return spectrum.model_copy(update={"seconds": time.monotonic() - started})

    async def _pytest(
        self,
        options: list[str],
        targets: Sequence[str],
        timeout: float,
        *,
        mode: str,
        private_options: Sequence[str] = (),
        required: Sequence[str] = (),
        progress: ProgressSink | None = None,
        first: Sequence[str] | None = None,
        writable: Sequence[Path] = (),
    ) -> _Run:
        python = str((await self._interpreter.choice()).path)
        # The private directory is made, read and removed by the worker: file work, 20 runs at once.
        workdir = await self._worker.run(self._private_directory, first)
        sandbox = self._sandbox
        try:
            options = [option.replace(_WORKDIR, str(workdir)) for option in options]
            private_options = [option.replace(_WORKDIR, str(workdir)) for option in private_options]
            report_path = workdir / "report.jsonl"
            coverage_path = workdir / "coverage.json"
            private = [
                *(option for name in protocol.OWN_PLUGINS for option in ("-p", name)),
                f"{protocol.OPTION_REPORT}={report_path}",
                f"{protocol.OPTION_MODE}={mode}",
                *private_options,
            ]
            if sandbox is not None:
                network = "host" if sandbox.network else "loopback"
                private += ["-p", protocol.SANDBOX_PLUGIN, f"{protocol.OPTION_SANDBOX}={network}"]
                private.append(f"{protocol.OPTION_SANDBOX_TMP}={sandbox.tmp_mib}")
            public = [*options, "--", *targets]
            argv = [
                python,
                "-c",
                self._bootstrap,
                str(workdir),
                self._rlimits,
                ",".join(required),
                *private,
                # Only our own options carry the placeholder; agent-provided node ids are never rewritten.
                *(option.replace(COVERAGE_PLACEHOLDER, str(coverage_path)) for option in options),
                "--",
                *targets,
            ]
            # What a person would type to reproduce the run: our private reporter options are left out,
            # and the sandbox is named, not spelt out mount by mount.
            command = (python, "-m", "pytest", *public)
            if sandbox is not None:
                argv = sandbox.wrap(argv, root=self._root, private_dir=workdir, writable=writable)
                command = (*sandbox.command_prefix(), *command)
            follower = ProgressFollower(report_path, progress, self._worker) if progress is not None else None
            try:
                outcome = await run_in_process_group(
                    argv,
                    cwd=self._root,
                    timeout=timeout,
                    limits=self._limits,
                    while_running=follower.follow if follower is not None else None,
                    dump_signal=DUMP_SIGNAL,
                    environment=sandbox.environment if sandbox is not None else None,
                    threads=self._process_threads,
                    share=self._share,
                )
            except CommandTooLong as exc:
                refused = Termination(kind="command_too_long", detail=str(exc))
                return _Run(python, command, ProcessOutcome(None, False, "", "", 0.0), ParsedReport(), None, refused)
            except OSError as exc:
                reason = exc.strerror or exc.__class__.__name__
                outcome = ProcessOutcome(None, False, "", f"{protocol.PYTEST_MISSING_MARK} {reason}", 0.0)
                return _Run(python, command, outcome, ParsedReport(), None)
            if follower is not None:
                await follower.poll()
            results = await self._worker.run(self._results, workdir, first is not None)
            if results.unreadable is not None:  # a test replaced a file: this run's error, and no one waited on it
                unreadable = Termination(kind="report_unreadable", detail=results.unreadable)
                return _Run(python, command, outcome, ParsedReport(), None, unreadable, stopped=results.warden.stopped)
            parsed, warden = results.parsed, results.warden
            if sandbox is not None:
                outcome = _unwrapped(outcome, warden.signal, parsed)
            return _Run(
                python,
                command,
                outcome,
                parsed,
                results.coverage,
                stopped=warden.stopped,
                spectrum=results.spectrum,
                recording=results.recording,
            )
        finally:
            with anyio.CancelScope(shield=True):  # a cancelled call removes its directory all the same
                await self._worker.run(functools.partial(shutil.rmtree, workdir, ignore_errors=True))

    def _private_directory(self, first: Sequence[str] | None) -> Path:
        """A run's private directory (outside the project) with our plugins, and the tests to run first."""
        workdir = Path(tempfile.mkdtemp(prefix="pytest-mcp-"))
        try:
            for name, source in self._plugin_files.items():
                (workdir / name).write_bytes(source)
            (workdir / _SPECTRUM_DIR).mkdir()
            if first is not None:
                (workdir / "first.txt").write_text("".join(f"{node_id}\n" for node_id in first), encoding="utf-8")
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        return workdir

    def _results(self, workdir: Path, second_pass: bool) -> _Results:
        """What a finished run left in its private directory: coverage, report, its own spectrum or a second
        pass's, the warden's word. Every file there is untrusted: one a test replaced makes `unreadable`."""
        warden = read_warden(workdir)
        coverage_path = workdir / "coverage.json"
        try:
            coverage = read_coverage(coverage_path, self._root) if coverage_path.exists() else None
            parsed = read_report(workdir / "report.jsonl", self._max_report_bytes)
            if second_pass:
                return _Results(
                    warden, coverage, parsed, spectrum=read_spectrum(workdir / "spectrum.jsonl", self._max_report_bytes)
                )
            recording = read_run_spectrum(workdir / _SPECTRUM_DIR, self._max_report_bytes)
        except UntrustedFileRefused as exc:
            return _Results(warden, unreadable=exc.strerror)
        return _Results(warden, coverage, parsed, recording=recording)

    def _termination(self, outcome: ProcessOutcome, python: str) -> Termination:
        if outcome.timed_out:
            return Termination(kind="timed_out")
        if outcome.signal_name is not None:
            return Termination(kind="signalled", signal=outcome.signal_name)
        if outcome.returncode == protocol.PLUGIN_MISSING_EXIT and protocol.PLUGIN_MISSING_MARK in outcome.stderr:
            missing = outcome.stderr.split(protocol.PLUGIN_MISSING_MARK, 1)[-1].strip().splitlines()[0]
            return Termination(kind="plugin_missing", detail=missing)
        if outcome.returncode == 4 and protocol.REFUSED_OPTION_MARK in outcome.stderr:
            refused = outcome.stderr.split(protocol.REFUSED_OPTION_MARK, 1)[-1].strip().splitlines()[0]
            return Termination(kind="option_refused", detail=refused)
        if outcome.returncode is None or (
            outcome.returncode == protocol.PYTEST_MISSING_EXIT and protocol.PYTEST_MISSING_MARK in outcome.stderr
        ):
            cause = outcome.stderr.split(protocol.PYTEST_MISSING_MARK, 1)[-1].strip()
            return Termination(
                kind="pytest_unavailable",
                detail=f"pytest cannot be run with the target interpreter {python} ({cause}); "
                "install pytest into that environment or point --python at one that has it",
            )
        return Termination(kind="exited", exit_code=outcome.returncode)


_WORKDIR = "<pytest-mcp-workdir>"
"""Stands for a run's private directory in options made before it exists; the runner replaces it."""
_SPECTRUM_DIR = "spectrum"
"""In a run's private directory: where each of its processes writes the spectrum it recorded."""


def _plain_pass(run: RunSpec) -> RunSpec:
    """A second pass keeps the run's markers, keywords and verbosity, and none of its other choices."""
    return RunSpec(markers=run.markers, keywords=run.keywords, verbosity=run.verbosity, timeout=run.timeout)


def _why_nothing(run: _Run, seconds: float) -> str:
    """Why a second pass recorded no test, in a few words."""
    if run.refused is not None:
        return f"the second pass could not start ({run.refused.detail})"
    if run.outcome.timed_out or (run.spectrum is not None and run.spectrum.stopped == "deadline"):
        return f"the second pass's {seconds:.1f}s were spent before a test was repeated"
    if run.outcome.returncode not in (0, 1, 2):
        return f"the second pass ended with exit code {run.outcome.returncode} before a test was repeated"
    return "the second pass repeated no test"


def _unwrapped(outcome: ProcessOutcome, signalled: int | None, parsed: ParsedReport) -> ProcessOutcome:
    """The outcome as pytest's own process ended, not as bubblewrap passed it on.

    bwrap exits 128+N when its command is killed by signal N: the warden, which saw the signal
    itself, says which. bwrap's own failure (it could not exec the interpreter, or mount) is
    exit 1 with `bwrap: ...` on stderr and no report: pytest cannot be run.
    """
    code = outcome.returncode
    if code is not None and signalled is not None and code == 128 + signalled:
        return dataclasses.replace(outcome, returncode=-signalled)
    if code == 1 and parsed.summary is None and outcome.stderr.startswith(BWRAP_ERROR_PREFIX):
        cause = f"the sandbox could not start it: {outcome.stderr.strip().splitlines()[0]}"
        return dataclasses.replace(outcome, returncode=None, stderr=f"{protocol.PYTEST_MISSING_MARK} {cause}")
    return outcome


def _reproducible(command: tuple[str, ...], reproduce: tuple[str, ...]) -> tuple[str, ...]:
    """The command with what repeats a plugin's seed (pytest-randomly's) before the `--` and node ids."""
    if not reproduce:
        return command
    split = len(command) - command[::-1].index("--") - 1 if "--" in command else len(command)
    return (*command[:split], *reproduce, *command[split:])
