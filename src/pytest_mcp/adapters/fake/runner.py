"""FakeTestRunner: a scripted, deterministic TestRunner that answers the way pytest would."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any, Literal, Self

from pytest_mcp.adapters.fake.affected import AffectedData
from pytest_mcp.adapters.fake.arming import ArmedFailures, select
from pytest_mcp.adapters.fake.endings import (
    Call,
    as_collection,
    collection_error,
    finished,
    interrupted_by_collection_errors,
    killed,
    whole_call_ending,
)
from pytest_mcp.adapters.fake.environment import FakeEnvironment, FakeEnvironmentProbe
from pytest_mcp.adapters.fake.failures import FAILURE_KINDS, FailureKind, ScriptedFailure, checked_failure
from pytest_mcp.adapters.fake.holding import RunHold
from pytest_mcp.adapters.fake.last_failed import LastFailed
from pytest_mcp.adapters.fake.recording import read_recording, recording_document
from pytest_mcp.adapters.fake.script import (
    ROOT_MARK,
    LeftRunning,
    ScriptedTest,
    ScriptError,
    checked_plugins,
    checked_root,
    checked_run,
    checked_tests,
    scripted,
    tests_from_dict,
)
from pytest_mcp.adapters.fake.spectrum import ScriptedCode, in_run, second_pass
from pytest_mcp.adapters.fake.terminal import FakeTerminal, collect_words
from pytest_mcp.adapters.pytest_options import collect_options, run_options
from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
from pytest_mcp.domain.environment import ProcessContainment
from pytest_mcp.domain.history import passed_key
from pytest_mcp.domain.localization import Spectrum
from pytest_mcp.domain.models import Outcome, Phase, ReportedTest, RunFacts, SlowTest, Summary
from pytest_mcp.domain.runs import CollectionReport, CollectSpec, LocalizeSpec, RunReport, RunSpec, Termination
from pytest_mcp.ports.progress import ProgressSink
from pytest_mcp.ports.test_runner import TestRunner

__all__ = ["FAILURE_KINDS", "FailureKind", "FakeTestRunner", "ScriptError", "ScriptedTest"]


class FakeTestRunner(TestRunner):
    """A TestRunner that plays back scripted tests instead of running pytest.

    It answers with the same reports a real run produces, so the use cases, the presenter and
    the MCP layer treat them exactly as they treat pytest's:

    - **Outcomes and counts.** Each scripted test yields pytest's reports for it (a teardown
      error after a pass is two reports, counted as 1 passed and 1 error); the summary,
      exit code (0, 1 or 5), `--maxfail` stop and `detail` filtering follow pytest.
    - **Node ids** select as pytest 9 matches them, level by level: by file, directory, class
      (`file::Class`), test, and parametrized function (`file::test_f` selects every
      `test_f[...]`; `file::test_f[x` matches no `test_f[x::y]`), in argument order; an
      argument that another one contains is dropped (`x.py::t x.py` runs `x.py` in file
      order). A path that holds no scripted test is `file or directory not found`; a name
      that matches nothing is `not found` (or `found no collectors for`), with the root's
      absolute path, as pytest words it.
    - **`keywords` (-k)** match case-insensitively as substrings of the test's name (with its
      parameter id), its classes, its module file name (with `.py`), the directories between
      the root and the file, and its markers, exactly as pytest's KeywordMatcher does.
    - **`markers` (-m)** match scripted marker names exactly (case-sensitive).
    - Both expressions use pytest's grammar, and a malformed one is pytest's usage error with
      pytest's own wording and column.
    - **`last_failed` / `failed_first`** act on the runner's own previous calls, as pytest's
      cache would: which tests failed (or modules failed to import) last time they ran.
    - **The environment** is scripted: pytest's presence (`script_environment`), the plugins
      (`install`: without pytest-xdist `workers` is refused, without pytest-cov `coverage`,
      exactly as the real server refuses them), a coverage measurement (`script_coverage`).
      `check_environment` reports the same environment.
    - **Text.** `text_output` and the output tails in error data are rendered the way pytest
      prints them on an 80-column terminal outside CI, at the default verbosity or `-q`.
    - **Culprits.** After a run with failures the server runs a second pass (`localize`): the fake
      plays it back from each test's `runs` (the project functions it runs), `define`d line ranges,
      `change`d functions and `flaky` tests, and the domain ranks them into `culprits`, causes and
      labels exactly as it ranks a real pass's recording.

    `fail_with(kind, node_id=...)` makes every call that selects that test (or collects that
    module) end the way a real `kind` failure ends, until `clear_failures()`; without a
    `node_id`, the next call. The use cases then raise exactly the error, message shape and data
    a real run produces. `calls` records every RunSpec and CollectSpec the runner was given.

    Not modelled (where it cannot be realistic): see the README's list under "Testing your
    agent". Within a file or directory, tests run in script order, so write scripts in
    pytest's order (a recording keeps it).
    """

    def __init__(
        self,
        tests: Iterable[ScriptedTest] = (),
        *,
        root: str | PathLike[str] | None = None,
        plugins: Iterable[str] = (),
    ) -> None:
        """`tests` are ScriptedTest values (`from_dict` builds them from a mapping). `root` is the
        project's directory, shown where pytest prints absolute paths; `connect()` gives the runner
        its own root when it has none. `plugins` are installed at once (see `install`)."""
        self._tests: dict[str, ScriptedTest] = {}
        self._failures = ArmedFailures()
        self._root = checked_root(root)
        self._environment = FakeEnvironment()
        self._last_failed = LastFailed()
        self._affected = AffectedData()
        self._hold = RunHold()
        self._left_running = LeftRunning()
        self._code = ScriptedCode()
        self._runs_of: dict[str, int] = {}  # node id -> the runs that ran it: where its `outcomes` stand
        self._last_played: dict[str, ScriptedTest] = {}  # as the last run played them, for its second pass
        self.calls: list[RunSpec | CollectSpec] = []
        """Every spec this runner was asked to run or collect, in order."""
        self._tests.update((test.node_id, test) for test in checked_tests(tests))
        self.install(*checked_plugins(plugins))

    # -- building a script ------------------------------------------------------------------------

    @classmethod
    def from_dict(
        cls,
        script: Mapping[str, str | Mapping[str, Any]],
        *,
        root: str | PathLike[str] | None = None,
        functions: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Self:
        """Build from `{node_id: outcome}` or `{node_id: {"outcome": ..., "message": ..., ...}}`.

        The values take the keyword arguments of `script()` (`runs`, `flaky` included). `functions`
        are `{"shop/price.py::gross_price": {"lines": "4-9", "changed": True}}`: `define` and `change`
        for functions the tests run (`"at_import": True`: `run_at_import`; `"cached": True`: `cache`).
        Raises ScriptError naming the node id (or function) and field of every problem.
        """
        runner = cls(tests_from_dict(script), root=root)
        if functions is not None:
            runner._code.read(functions, runner.tests, "functions")
        return runner

    @classmethod
    def from_recording(cls, source: str | PathLike[str] | Mapping[str, Any]) -> Self:
        """Replay a recording made by `pytest-mcp record` (a path to its JSON file, or the loaded JSON).

        The recorded collection errors break their modules until `clear_failures()`, as the real
        project's did. Raises FileNotFoundError for a missing file and ScriptError, naming the
        field, for anything that is not a pytest-mcp recording (versions 1 and 2 are read).
        """
        recording = read_recording(source)
        runner = cls(recording.tests)
        runner._code.read(recording.functions, runner.tests, f"{recording.where}: functions")
        for error in recording.collection_errors:
            failure = ScriptedFailure(
                "collection_error", error.message, error.node_id, times=None, traceback=error.traceback
            )
            runner._failures.arm(failure)
        return runner

    def to_recording(self) -> dict[str, Any]:
        """This runner's script as a recording document (what `from_recording` reads): its tests, and
        the modules broken until cleared as collection errors."""
        errors = [
            collection_error(module, failure, ROOT_MARK)  # its texts keep `<root>`
            for module, failure in self._failures.broken_modules()
        ]
        return recording_document(self._tests.values(), errors, self._code.document(), root=self._root_text)

    def script(
        self,
        node_id: str,
        outcome: Outcome = "passed",
        message: str | None = None,
        traceback: str | None = None,
        duration: float = 0.0,
        markers: Iterable[str] = (),
        stdout: str | None = None,
        *,
        stderr: str | None = None,
        line: int | None = None,
        phase: Phase | None = None,
        crash: str | None = None,
        runs: Iterable[str] = (),
        flaky: bool = False,
        outcomes: Iterable[Outcome] = (),
        starts_process: bool = False,
    ) -> Self:
        """Add a scripted test, or replace the one with this node id in place; returns the runner.

        `outcomes` (`["failed", "passed"]`) are its outcomes in successive runs, one a run that runs it, the
        last one repeated: a failure that passes when the agent runs it again, a fix, a regression. `outcome`
        is then the first (leave it out). Scripting the test again starts its sequence afresh.

        `line` is the test's definition's line; `crash` (`"src/cart.py:12"`) where a failure or error
        happens, the deepest project frame the real runner names (default: `line`). Its group's id is
        made of it: scripted with the site a real run reports, a failure gets the real run's id.

        `runs` are the project functions the test runs, each `file::qualified name`
        (`["shop/price.py::gross_price", "shop/cart.py::Cart.total"]`): what the run records for it
        (a second pass, before Python 3.12), from which the server names culprits. An entry may name
        one of the function's lines the test runs too (`"shop/price.py::gross_price:4"`, one entry a
        line): on Python 3.12 and later a run records them, and a function is ranked by its most
        telling line. A failing test that is `flaky` passes when that
        pass repeats it, and its group counts it as flaky. One that `starts_process` (a CLI's test
        through a subprocess) ran code the recording cannot see: it is never called suspect flaky.

        Raises ScriptError naming the argument when a value is impossible: a node id without a file
        and a name, an unknown outcome, a phase the outcome cannot happen in, a negative duration,
        markers or runs given as one string, a crash site that is not `path.py:line`, of an outcome
        without one or beside a traceback, a function that is not `file::name`, a passing test that
        is flaky. `<root>` in a text stands for the root.
        """
        fields: dict[str, object] = {"node_id": node_id, "outcome": outcome, "message": message}
        fields |= {"traceback": traceback, "duration": duration, "markers": markers, "stdout": stdout}
        fields |= {"stderr": stderr, "line": line, "phase": phase, "crash": crash, "runs": runs, "flaky": flaky}
        fields |= {"starts_process": starts_process}
        listed = outcomes if isinstance(outcomes, str) else tuple(outcomes)
        if listed:
            fields |= {"outcomes": listed, "outcome": None if outcome == "passed" else outcome}
        try:
            self._tests[node_id] = scripted(fields, "")
        except ScriptError as exc:
            raise ScriptError(f"invalid test {node_id!r}: {exc}") from None
        self._runs_of.pop(node_id, None)  # a test scripted again starts its outcomes afresh
        return self

    @property
    def tests(self) -> tuple[ScriptedTest, ...]:
        """The scripted tests, in script order."""
        return tuple(self._tests.values())

    @property
    def root(self) -> Path | None:
        """The project's root directory: given, or the one `connect()` gave the runner; None before."""
        return self._root

    def fail_with(
        self,
        kind: FailureKind,
        message: str | None = None,
        *,
        node_id: str | None = None,
        signal: str | None = None,
        line: int | None = None,
        on: Literal["run", "collect"] | None = None,
        times: int | None = None,
    ) -> Self:
        """Make calls end the way a real `kind` ending does; returns the runner.

        **Scoped** (`node_id` given), a failure behaves like the real thing: it fires on every
        call that selects that test (or collects that module), and on no other, until
        `clear_failures()`, or for the next `times` calls it fires on. **Unscoped**, it fires on
        the next call (the next `times` calls); unscoped failures queue in order. `on="run"`
        keeps a failure for runs (`execute_tests`), `on="collect"` for discoveries.

        - `timeout`: the test `node_id` (a test, or the first selected in a file or directory;
          unscoped, the first selected test) never finishes; the tests before it have run. The
          error names the call's timeout, and the test from the stack faulthandler dumps (at
          `line`, as for a crash).
        - `crash`: pytest is killed by `signal` (a name; default SIGSEGV) while running that
          test; faulthandler's dump names it at `line` (default: the line after the test's
          scripted `line`, the first line of its body). Signals faulthandler does not handle
          (SIGKILL, say) leave no dump. A `maxfail` stop before the test ends the call
          normally; unscoped with nothing selected, pytest is killed while collecting.
        - `collection_error`: the module `node_id` (a path; unscoped, `tests/test_broken.py`,
          whatever the call selects) cannot be imported; `message` is the exception line
          (default a ModuleNotFoundError). Its tests do not collect. A run is interrupted; a
          discovery lists the error beside the tests that did collect.
        - `usage_error`: pytest refuses the arguments; `message` is its `ERROR:` line
          (default: the first target is not found). Never scoped.
        - `internal_error`: a hook raises; `message` is the exception line (default
          `RuntimeError: scripted internal error`). Never scoped.

        Every argument is checked here: ScriptError names the one that is wrong (a message a
        timeout would drop, a signal number, a node id no scripted test has, ...). A scoped
        timeout or crash needs its test scripted first.
        """
        failure = checked_failure(kind, message, node_id, signal, line, on, times, self.tests)
        self._failures.arm(failure)
        return self

    def clear_failures(self, node_id: str | None = None) -> Self:
        """Forget the scripted failures: every one, or those scoped to `node_id` (the test is fixed)."""
        self._failures.clear(node_id)
        return self

    def edit(self, *affects: str, files: Iterable[str] = ()) -> Self:
        """An edit as pytest-testmon sees it, for `affected` runs (with `install("pytest-testmon")`).

        `affects`: the node ids, files or directories it touches, each naming a scripted test; `files`:
        files testmon cannot see (not Python), which make the next affected run run everything. An
        affected run runs what an edit named since, new tests and last time's failures (the first
        runs everything), by testmon's rules. ScriptError names an argument that names nothing."""
        self._affected.edit(affects, self.tests, files)
        return self

    def trace(self, node_id: str, *functions: str) -> Self:
        """The project functions the scripted test `node_id` runs (none: it runs none), each with one of its
        lines or not (`shop/price.py::gross_price:4`), replacing its `runs`: for tests that came from
        `from_dict` or a recording. Returns the runner."""
        test = self._tests.get(node_id) if isinstance(node_id, str) else None
        if test is None:
            raise ScriptError(f"node_id: {node_id!r} is not a scripted test")
        for index, function in enumerate(functions):
            try:
                checked_run(function)
            except ValueError as exc:
                raise ScriptError(f"functions[{index}]: {exc}") from None
        # Validated anew, not copied: a copy would keep what the old test cached (its `plays`, with the old runs).
        runs = tuple(dict.fromkeys(functions))
        self._tests[node_id] = ScriptedTest.model_validate({**test.model_dump(), "runs": runs})
        return self

    def define(self, function: str, lines: str | int | tuple[int, int]) -> Self:
        """Where a function the tests run is: its line range (`"4-9"`, `4` or `(4, 9)`), as a culprit names
        it (`shop/price.py::gross_price (lines 4-9)`); line 1 until defined. Returns the runner."""
        self._code.define(function, lines, self.tests)
        return self

    def run_at_import(self, *functions: str) -> Self:
        """Project functions that run as the tests are collected, before any test: a module's import-time
        code (`FORE = Fore()` runs `Codes.__init__`). On Python 3.12 and later a run records them as run
        before every test: changed, they are the culprits of failures whose tests enter no changed code.
        Returns the runner."""
        self._code.run_at_import(functions)
        return self

    def cache(self, *functions: str) -> Self:
        """Project functions behind a caching decorator (`functools.lru_cache`, `cache`, ...), as a real
        run reads them from the source: a test the cache answers enters nothing, so script it without them
        in `runs`. Changed, they are the culprits of failures whose tests enter no changed code. Each must
        be one a scripted test runs. Returns the runner."""
        self._code.cache(functions, self.tests)
        return self

    def change(self, *functions: str) -> Self:
        """An edit of these functions: the next run reads them as changed since git's HEAD (or since the
        last run that saw them), which puts them first among culprits; the run after, not, unless changed
        again. Each must be one a scripted test runs, or one that runs at import. Returns the runner."""
        self._code.change(functions, self.tests)
        return self

    def install(self, *distributions: str) -> Self:
        """Install pytest plugins in the fake environment: `"pytest-xdist"` or `"pytest-xdist==3.8.0"`.

        `workers` needs pytest-xdist and `coverage` pytest-cov, as on the real server; without
        them the call is refused naming the field. check_environment lists what is installed.
        """
        self._environment.install(distributions)
        return self

    def script_coverage(
        self, percent: float, files: Mapping[str, float] | None = None, *, missing: Mapping[str, str] | None = None
    ) -> Self:
        """What pytest-cov measures for a run with `coverage`: the total `percent`, each file's, and each
        file's missing lines (`{"cart.py": "12-15, 40"}`). Installs pytest-cov, which a measurement needs.
        Without it scripted, a coverage run's measurement is null (coverage.py found no data)."""
        self._environment.script_coverage(percent, files or {}, missing or {})
        return self

    def script_environment(
        self,
        *,
        python_version: str = "3.12.0",
        pytest_version: str | None = "9.0.0",
        pytest_error: str | None = None,
        config_error: str | None = None,
        prefix: str | None = None,
        containment: ProcessContainment = "subreaper",
    ) -> Self:
        """What the target interpreter has, as check_environment reports it and as runs meet it.

        `pytest_version=None` is an environment without pytest: check_environment says so with
        the fix, and every run and discovery fails as the real server's do (`pytest_unavailable`);
        `pytest_error` is why the import failed (default a ModuleNotFoundError). `config_error`
        is configuration pytest refuses. `prefix` is where packages are installed (default: the
        virtual environment of `connect(python=...)`). `containment` is what check_environment
        says stops a run's processes ("process_group": as on macOS). Plugins stay as `install` left them.
        """
        self._environment.script(python_version, pytest_version, pytest_error, config_error, prefix, containment)
        return self

    def leave_running(self, *commands: str, node_id: str | None = None) -> Self:
        """Make the test `node_id` (None: every run) leave these processes running, reported as the real
        warden's `stopped_processes` are, each cut to 80 characters; no commands clears them."""
        self._left_running.script(commands, node_id, self._tests)
        return self

    def hold(self, after: int = 0, *, collecting: bool = False, polls: int | None = None) -> Self:
        """Make runs pause after their first `after` tests (if they select more) until `release()`.

        For testing an agent's handling of long runs without waiting for one: connect with a small
        `detach_after`, and execute_tests answers "running" with the progress (of the tests selected)
        and failures of the tests before the hold; after `release()`, get_test_run gets the final
        answer. A held run can be cancelled (get_test_run with cancel, or its call's cancellation).
        `collecting=True` (no `after`) holds runs before pytest has collected, where a real run's first
        "running" answer often is: `progress` `{done: 0, total: 0}`, "0 of ? tests done".
        `polls=N` releases the hold by itself at the agent's Nth get_test_run call (of any run), which
        then, with a `wait`, gets the final answer: a policy that polls is tested without a wrapper.
        """
        self._hold.hold(after, collecting, polls)
        return self

    def _polled(self) -> None:
        """The server was asked for a detached run (get_test_run); `connect()` tells the runner, for `hold(polls=)`."""
        self._hold.polled()

    def release(self) -> Self:
        """Let held runs go on to their end; later runs are not held."""
        self._hold.release()
        return self

    def _connected(self, root: Path, python: Path | None) -> FakeEnvironmentProbe:
        """Take the server's root (one root for both) and interpreter; the probe that reports this runner's
        environment. ScriptError when the runner already has another root."""
        if self._root is not None and self._root != root:
            raise ScriptError(
                f"root: the runner's root is {self._root}, and the server's would be {root}; "
                "give one of them, or the same directory to both"
            )
        self._root = root
        self._environment.python = python
        return FakeEnvironmentProbe(root, environment=self._environment)

    # -- the TestRunner port ----------------------------------------------------------------------

    async def run(self, spec: RunSpec, progress: ProgressSink | None = None) -> RunReport:
        self.calls.append(spec)
        command = (self._python, "-m", "pytest", *run_options(spec), "--", *spec.node_ids)
        refusal = self._environment.refusal(spec)
        if refusal is not None:
            return RunReport(termination=refusal, command=command, duration=0.0)
        terminal = FakeTerminal(self._shown_root, verbosity=spec.verbosity, show_capture=spec.show_capture)
        terminal.session_start()
        call = Call(spec, spec.node_ids, command, terminal, self._root_text)
        pending = self._failures.take_unscoped("run")
        if pending is not None and (ending := whole_call_ending(pending, self.tests, call)) is not None:
            return ending
        affects = self._affected if spec.affected else None
        selection = select(call, "run", self.tests, self._failures, pending, self._last_failed, affects)
        if isinstance(selection, RunReport):
            return selection
        if selection.errors:
            return interrupted_by_collection_errors(
                selection.errors, selection.collected, selection.tests, call, status=selection.status
            )
        await self._hold.while_collecting()
        # Each test as this run plays it: the next of its `outcomes`.
        selected = [test.played(self._runs_of.get(test.node_id, 0)) for test in selection.tests]
        terminal.collected(selection.collected, selection.collected - len(selected), status=selection.status)
        if progress is not None and selected:
            await progress.update(0, len(selected), 0)  # collected: the total is known, as a real run's is

        kills = [f for f in (pending, *self._failures.scoped("run")) if f is not None and f.kills]
        reports: list[ReportedTest] = []
        ran: list[ScriptedTest] = []
        left_running = self._left_running.of(None)
        failures = 0
        stopped = False
        for done, test in enumerate(selected, start=1):
            await self._hold.before_test(done)  # the run goes on only at `release()`, or is cancelled
            terminal.test_started(test.node_id)
            left_running += self._left_running.of(test.node_id)
            striking = next((failure for failure in kills if failure.strikes(test, selected[0])), None)
            if striking is not None:
                self._failures.fired(striking)
                return killed(striking, test, reports, call)
            ran.append(test)
            for report in test.reports(self._root_text):
                terminal.report(report)
                reports.append(report)
                failures += report.outcome in ("failed", "error")
                if progress is not None and (spec.include_passed or report.outcome != "passed"):
                    await progress.reported(report)
            if progress is not None:
                await progress.update(done, len(selected), failures)
            if spec.maxfail is not None and failures >= spec.maxfail:
                stopped = True
                break
        if pending is not None and pending.kills and not selected:
            return killed(pending, None, reports, call)  # killed while collecting
        if not stopped:
            terminal.loop_finished()
        for report in reports:  # the session finished: pytest's cache learns what ran
            self._last_failed.reported(report)
        for test in ran:  # and the next run of each test plays its next outcome
            self._runs_of[test.node_id] = self._runs_of.get(test.node_id, 0) + 1
        self._last_played = {test.node_id: test for test in ran}
        affected = self._affected.ran(reports, len(selected), selection.not_run) if spec.affected else None
        return finished(
            call,
            reports,
            (len(selected), selection.collected),
            stopped=stopped,
            nothing_ran_is_clean=bool(affected) and self._affected.leaves_out_any,
            coverage=self._environment.coverage if spec.coverage else None,
            stopped_processes=left_running,
            facts=RunFacts(affected=affected, slowest=_slowest(reports, spec.facts.get(protocol.FACT_SLOWEST, 0))),
            # What the run records of itself, as a real one does (ADR 0020): its code's digests on every
            # run; on Python 3.12 and later the spectrum too, with no second pass.
            code=self._code.state(ran, self.tests),
            spectrum=in_run(ran, self._code, self._environment.recorder) if self._records_in_run else None,
            # And which tests passed, on every Python: what tells a suspect flaky failure next time.
            passed=tuple(passed_key(report.node_id) for report in reports if report.outcome == "passed"),
        )

    async def collect(self, spec: CollectSpec) -> CollectionReport:
        self.calls.append(spec)
        targets = (spec.path,) if spec.path is not None else ()
        command = (self._python, "-m", "pytest", *collect_options(spec), "--", *targets)
        refusal = self._environment.refusal(None)
        if refusal is not None:
            return CollectionReport(termination=refusal, command=command, duration=0.0)
        terminal = FakeTerminal(self._shown_root, verbosity=-1)
        call = Call(spec, targets, command, terminal, self._root_text)
        pending = self._failures.take_unscoped("collect")
        if pending is not None and (ending := whole_call_ending(pending, self.tests, call)) is not None:
            return as_collection(ending, (), finished=False)
        if pending is not None and pending.kills:
            return as_collection(killed(pending, None, [], call), (), finished=False)
        selection = select(call, "collect", self.tests, self._failures, pending, self._last_failed)
        if isinstance(selection, RunReport):
            return as_collection(selection, (), finished=False)
        if selection.errors:
            report = interrupted_by_collection_errors(selection.errors, selection.collected, selection.tests, call)
            return as_collection(report, selection.tests, finished=True, max_listed=spec.max_listed)
        deselected = selection.collected - len(selection.tests)
        terminal.collected_items([test.node_id for test in selection.tests])
        terminal.session_finished(collect_words(selection.collected, deselected, 0, 0.0))
        return as_collection(
            RunReport(
                termination=Termination(kind="exited", exit_code=0 if selection.tests else 5),
                command=command,
                duration=0.0,
                summary=Summary(deselected=deselected),
                stdout=terminal.text(),
            ),
            selection.tests,
            finished=True,
            max_listed=spec.max_listed,
        )

    async def localize(self, spec: LocalizeSpec) -> Spectrum | str:
        """The second pass, played back from the script (see `script`'s `runs`, `define`, `change`); it is
        not a call, so `calls` does not list it."""
        kills = [failure for failure in self._failures.scoped("run") if failure.kills]
        # The tests as the run before played them: the pass repeats them right after it, on the same tree.
        tests = [self._last_played.get(test.node_id, test) for test in self.tests]
        return second_pass(spec, tests, self._code, kills, self._environment.recorder)

    # -- inside a call ----------------------------------------------------------------------------

    @property
    def _python(self) -> str:
        return str(self._environment.interpreter.path)

    @property
    def _records_in_run(self) -> bool:
        """Whether the scripted interpreter records the spectrum in the run (Python 3.12 and later)."""
        return self._environment.recorder == "sys.monitoring"

    @property
    def _root_text(self) -> str | None:
        return str(self._root) if self._root is not None else None

    @property
    def _shown_root(self) -> str:
        return self._root_text or "."


def _slowest(reports: list[ReportedTest], count: int) -> tuple[SlowTest, ...]:
    """The `count` slowest tests by the reporter's own rule (protocol.SlowestTests), fed each test's reports
    summed (its scripted duration) in run order."""
    if not count:
        return ()
    spent: dict[str, float] = {}
    for report in reports:
        spent[report.node_id] = spent.get(report.node_id, 0.0) + report.duration
    ranked = protocol.SlowestTests(count)
    for node_id, seconds in spent.items():
        ranked.add(node_id, seconds)
    return tuple(SlowTest.model_validate(entry) for entry in ranked.fact())
