"""pytest-mcp's spectrum recorder, loaded into the target pytest with `-p _pytest_mcp_spectrum` (ADR 0020).

In every run (`--pytest-mcp-spectrum-run DIR`), in each process that runs tests (each of
pytest-xdist's workers), it records which of the project's functions each test entered, and which
lines of them it ran, on Python 3.12 and later: a set per failing test, a count per function and per
line for the passing ones (so that 100,000 passing tests cost kilobytes), the functions entered
before the first test (a module's import-time code, which ran before every test), and the project
files the process imported (whose functions the server digests, on every Python). The lines go to a
file of their own (`lines-<worker>.jsonl`), which the server reads whole or not at all. Before 3.12
it records only the files.

In a second pass (`--pytest-mcp-spectrum FILE`), on interpreters where the run could not record,
started only after a run with failures: it runs the failing tests again first, then at most a given
number of the other tests of their modules (by file, then line: not in the order a plugin such as
pytest-randomly dealt them), and records each one. The same failures so record the same tests,
whatever the machine's load. As a safety it stops between two tests once a deadline has passed, and
writes as it goes, so whatever it recorded before a stop is kept.

Function entries come from the interpreter itself: `sys.monitoring`'s PY_START event on Python
3.12 and later (each function's event is turned off once seen, and turned on again at the next
test, so a test costs one event per distinct function it runs), `sys.setprofile` before that
(every call, in every thread started with `threading`). Nothing is installed in the project.

Events, one JSON object a line: a function the first time it is seen (`fn`: id, file relative
to the root, qualified name, first and last line); a finished test (`test`: node id, outcome,
the ids of the functions it ran); the modules that hold tests (`modules`, once collected); in a run,
the functions entered before the first test (`collected`); and last, `end`: how many tests ran and
why it stopped early, if it did.

PYTEST_DONT_REWRITE. Standard library only; Python 3.9 and later.
"""

import functools
import json
import os
import sys
import threading
import time
import types

import _pytest_mcp_protocol as protocol
import pytest

try:
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None

_OUTSIDE = ("site-packages", "dist-packages")
_PYTEST = os.path.dirname(os.path.dirname(pytest.__file__))


def _called_by_pytest(frame):
    """Whether pytest itself called this function: the repr of a value in a failing assertion's
    explanation, which only failing tests run, is no evidence against the code; nor is what that
    repr calls in turn (a composite's repr of its parts), hence the count of explanations under way."""
    if _explaining[0]:
        return True
    caller = frame.f_back
    return caller is not None and caller.f_code.co_filename.startswith(_PYTEST_OWN)


_explaining = [0]
_EXPLAINERS = ("_saferepr", "_format_assertmsg", "_call_reprcompare")
"""What a rewritten assertion calls, on failure only, to explain itself: each of their calls counts."""


def _explain_quietly():
    """Wraps the explainers of pytest's assertion rewriting, which the rewritten tests look up at each
    call, so that what they run is never recorded."""
    from _pytest.assertion import rewrite

    def quiet(explain):
        def explaining(*args, **kwargs):
            _explaining[0] += 1
            try:
                return explain(*args, **kwargs)
            finally:
                _explaining[0] -= 1

        return explaining

    for name in _EXPLAINERS:
        explain = getattr(rewrite, name, None)
        if explain is not None:
            setattr(rewrite, name, quiet(explain))


_PYTEST_OWN = os.path.join(_PYTEST, "_pytest") + os.sep


def pytest_addoption(parser):
    group = parser.getgroup("pytest-mcp", "pytest-mcp reporter (internal)")
    group.addoption(protocol.OPTION_SPECTRUM, default=None, help="(internal)")
    group.addoption(protocol.OPTION_SPECTRUM_FIRST, default=None, help="(internal)")
    group.addoption(protocol.OPTION_SPECTRUM_DEADLINE, type=float, default=None, help="(internal)")
    group.addoption(protocol.OPTION_SPECTRUM_OTHERS, type=int, default=None, help="(internal)")
    group.addoption(protocol.OPTION_SPECTRUM_RUN, default=None, help="(internal)")
    group.addoption(protocol.OPTION_SPECTRUM_FILES_ONLY, action="store_true", default=False, help="(internal)")
    group.addoption(protocol.OPTION_SPECTRUM_NO_LINES, action="store_true", default=False, help="(internal)")


def _last_line(code):
    """The last line a code object has, for its function's line range."""
    lines = []
    if hasattr(code, "co_lines"):  # 3.10 and later
        lines = [line for _start, _end, line in code.co_lines() if line is not None]
    else:  # pragma: no cover - Python 3.9
        import dis

        lines = [line for _offset, line in dis.findlinestarts(code)]
    return max(lines) if lines else code.co_firstlineno


class _Functions:
    """The project's functions by code object: which to record, and their ids."""

    def __init__(self, root, write):
        self.root = os.path.realpath(root) + os.sep
        self.write = write
        # id(code) -> id, or None for code that is not the project's. By identity: code objects compare
        # equal across files (the same function at the same line in two modules), and they must not
        # be counted as one. Each code asked about is kept alive, so that its identity stays its own.
        self.ids = {}
        self.alive = []
        self.count = 0
        self.files = {}  # co_filename -> the path relative to the root, or None
        self.directories = {}  # a directory -> its real path

    def _real(self, filename):
        """os.path.realpath(filename), each directory resolved once: the first test asks about every
        module imported, a few hundred files in a few dozen directories, each component an lstat."""
        if os.path.islink(filename):
            return os.path.realpath(filename)
        directory, name = os.path.split(filename)
        real = self.directories.get(directory)
        if real is None:
            real = self.directories[directory] = os.path.realpath(directory)
        return os.path.join(real, name)

    def relative(self, filename):
        if filename not in self.files:
            relative = None
            if not filename.startswith("<"):
                real = self._real(filename)
                if real.startswith(self.root) and not any(part in real for part in _OUTSIDE):
                    relative = real[len(self.root) :].replace(os.sep, "/")
            self.files[filename] = relative
        return self.files[filename]

    def id_of(self, code):
        """The function's id, the first time a code object is asked about; None when not the project's."""
        key = id(code)
        if key in self.ids:
            return self.ids[key]
        self.alive.append(code)
        relative = self.relative(code.co_filename)
        name = getattr(code, "co_qualname", code.co_name)
        # Module bodies run once, at import; lambdas and comprehensions belong to their function.
        if relative is None or name.startswith("<") or name.endswith(">"):
            self.ids[key] = None
            return None
        found = self.ids[key] = self.count
        self.count += 1
        self.write(
            protocol.SPECTRUM_FUNCTION,
            id=found,
            file=relative,
            name=name,
            first=code.co_firstlineno,
            last=_last_line(code),
        )
        return found


def _free_tool():
    """A free sys.monitoring tool id, taken; None when all are in use."""
    monitoring = sys.monitoring
    for tool in (3, 4, 5, 2):  # free ids first; 0 and 1 are the debugger's and coverage's
        if monitoring.get_tool(tool) is None:
            monitoring.use_tool_id(tool, "pytest-mcp")
            return tool
    return None


class _Collection:
    """Python 3.12 and later: the project's functions entered before the first test, while the initial
    conftests load and the tests are collected. A module's import-time code runs then, once a process:
    a constructor called at module level (`Fore = AnsiFore()`), a registry's decorator, a table built
    by a helper. No test enters it later, yet every test ran after it.

    PY_START as a global event, on a tool id of its own (the run's recorder arms its own later, so what
    this one turns off never silences it), each code object's turned off once it fired: a process
    pays one event per distinct function it runs until the first test. Turned off for good before the
    tests run. Nothing when every tool id is taken."""

    def __init__(self, root):
        self.files = _Functions(root, None)  # for its paths only: nothing is written from here
        self.codes = []
        self.tool = _free_tool()
        if self.tool is not None:
            sys.monitoring.register_callback(self.tool, sys.monitoring.events.PY_START, self._entered)
            sys.monitoring.set_events(self.tool, sys.monitoring.events.PY_START)

    def _entered(self, code, offset):
        # A function's code, not a module's or a class's body (those run once, at import, and are no function).
        if code.co_flags & _CO_OPTIMIZED and self.files.relative(code.co_filename) is not None:
            if _called_by_pytest(sys._getframe(1)):
                return None  # pytest looking at a module's names as it collects: wait for a call of the code's own
            self.codes.append(code)
        return sys.monitoring.DISABLE

    def finish(self):
        """The code objects entered, once; the event is off and the tool id free after."""
        if self.tool is not None:
            monitoring = sys.monitoring
            monitoring.set_events(self.tool, 0)
            monitoring.register_callback(self.tool, monitoring.events.PY_START, None)
            monitoring.free_tool_id(self.tool)
            self.tool = None
        codes, self.codes = self.codes, []
        return codes


_CO_OPTIMIZED = 0x0001  # inspect.CO_OPTIMIZED, without importing inspect into every run
_collection = []
"""The collection's recorder of this process, from the initial conftests on (pytest_load_initial_conftests)."""


class _MonitoringRecorder:
    """Python 3.12 and later: one PY_START event per function per test, turned off once seen."""

    name = "sys.monitoring"

    def __init__(self, functions):
        self.functions = functions
        self.seen = set()
        tool = _free_tool()
        if tool is None:  # pragma: no cover - every id taken
            raise RuntimeError("no free sys.monitoring tool id")
        self.tool = tool
        sys.monitoring.register_callback(self.tool, sys.monitoring.events.PY_START, self._entered)

    def _entered(self, code, offset):
        found = self.functions.id_of(code)
        if found is None:
            return sys.monitoring.DISABLE
        if _called_by_pytest(sys._getframe(1)):
            return None  # a repr for a failure's explanation: wait for a call of the test's own
        self.seen.add(found)
        return sys.monitoring.DISABLE

    def start(self):
        self.seen = set()
        sys.monitoring.restart_events()
        sys.monitoring.set_events(self.tool, sys.monitoring.events.PY_START)

    def stop(self):
        sys.monitoring.set_events(self.tool, 0)
        return self.seen

    def release(self):
        sys.monitoring.register_callback(self.tool, sys.monitoring.events.PY_START, None)
        sys.monitoring.free_tool_id(self.tool)


class _LocalMonitoringRecorder(_MonitoringRecorder):
    """A run's own recording (3.12+): PY_START and LINE armed as local events on the project's own code
    objects only, so that pytest's functions never fire; modules imported later are armed as they
    appear. Between tests nothing is recorded. Each event is turned off once it fired (a function's
    start, each of its lines), and as the next test starts only the code objects whose events fired
    are armed again, one by one: `restart_events()` would re-instrument every code object the
    interpreter runs next, pytest's included, at every test. A test so costs one event per distinct
    function and one per distinct line of the project that it runs."""

    def __init__(self, functions, lines=True):
        super().__init__(functions)
        self.modules = 0
        self.scanned = set()
        # id() of the collected test functions' code: pytest calls them, so they are never recorded for
        # a test, and arming them would cost an instrumented code object and an event every test.
        self.tests = set()
        self.active = False
        self.disabled = {}  # id(code) -> code: the code objects whose start fired since the last test started
        self.armed = {}  # id(code) -> code: every code object armed, to arm again those whose lines fired
        # (id(code), line) run since the last test started. The LINE callback is the hot path (an event per
        # distinct line a test runs): it only adds to this set, which each test's start empties.
        self.lines = set()
        self.events = sys.monitoring.events.PY_START | (sys.monitoring.events.LINE if lines else 0)

        def ran_line(code, line, add=self.lines.add, disable=sys.monitoring.DISABLE):
            add((id(code), line))
            return disable

        if lines:
            sys.monitoring.register_callback(self.tool, sys.monitoring.events.LINE, ran_line)

    def _arm(self):
        if len(sys.modules) == self.modules:
            return
        self.modules = len(sys.modules)
        for name, module in list(sys.modules.items()):
            if name in self.scanned:
                continue
            self.scanned.add(name)
            filename = getattr(module, "__file__", None)
            if not isinstance(filename, str) or self.functions.relative(filename) is None:
                continue
            for code in _codes(module, filename):
                if id(code) not in self.tests:
                    self.armed[id(code)] = code
                    sys.monitoring.set_local_events(self.tool, code, self.events)

    def _entered(self, code, offset):
        if self.active:
            if _called_by_pytest(sys._getframe(1)):
                return None  # the test function, a fixture, a failure's repr: wait for a call of the test's own
            found = self.functions.id_of(code)
            if found is None:
                # A lambda's or a generator expression's: never recorded, nor its lines, never armed again.
                sys.monitoring.set_local_events(self.tool, code, 0)
                return sys.monitoring.DISABLE
            self.seen.add(found)
        self.disabled[id(code)] = code
        return sys.monitoring.DISABLE

    def start(self):
        self.seen = set()
        armed, touched = self.armed, self.disabled
        for code, _line in self.lines:  # a line fired: its code object is armed again, as one whose start fired
            if code not in touched and code in armed:
                touched[code] = armed[code]
        self.lines.clear()  # what ran between two tests is no test's
        self._arm()
        self.active = True
        monitoring = sys.monitoring
        for code in touched.values():  # setting the same events again is no change: off, then on
            monitoring.set_local_events(self.tool, code, 0)
            monitoring.set_local_events(self.tool, code, self.events)
        self.disabled = {}

    def stop(self):
        """The functions the test entered, and the lines it ran of them: (function id, line) pairs. A line of a
        function it was not recorded entering (one pytest called for it, to explain a failure) is left out."""
        self.active = False
        ids, seen = self.functions.ids, self.seen
        lines = {(ids.get(code), line) for code, line in self.lines}
        return seen, {pair for pair in lines if pair[0] in seen}

    def release(self):
        sys.monitoring.register_callback(self.tool, sys.monitoring.events.LINE, None)
        super().release()


_CACHED = type(functools.lru_cache(maxsize=None)(len))
"""What `functools.lru_cache` and `functools.cache` return: no function, but it holds one (`__wrapped__`)."""
_HOLDERS = (functools.cached_property, functools.partialmethod, functools.singledispatchmethod)
"""Descriptors that hold the function they run as `func`."""


def _codes(module, filename):
    """The code objects of a module's functions, its classes' methods (properties, static and class
    methods, cached ones), what decorators wrapped (`__wrapped__`), and the functions nested in them.
    Only values of known types are looked into: a module's other objects may compute any attribute
    asked of them (a `__getattr__`)."""
    stack = list(vars(module).values())
    seen = set()
    found = []
    while stack:
        value = stack.pop()
        if value is None or id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, (staticmethod, classmethod)):
            stack.append(value.__func__)
        elif isinstance(value, _CACHED):
            stack.append(value.__wrapped__)
        elif isinstance(value, _HOLDERS):
            stack.append(value.func)
        elif isinstance(value, property):
            stack += [value.fget, value.fset, value.fdel]
        elif isinstance(value, type):
            if getattr(value, "__module__", None) == module.__name__:
                stack += list(vars(value).values())
        elif isinstance(value, types.FunctionType):
            stack.append(getattr(value, "__wrapped__", None))
            if value.__code__.co_filename == filename:
                codes = [value.__code__]
                while codes:
                    code = codes.pop()
                    found.append(code)
                    codes += [const for const in code.co_consts if isinstance(const, types.CodeType)]
    return found


class _ProfileRecorder:
    """Before Python 3.12: the profile hook's call events, in this thread and threads started after."""

    name = "sys.setprofile"

    def __init__(self, functions):
        self.functions = functions
        self.seen = set()
        self.codes = {}  # id(code) -> code: by identity, as _Functions counts them

    def _profile(self, frame, event, arg):
        if event == "call" and id(frame.f_code) not in self.codes and not _called_by_pytest(frame):
            self.codes[id(frame.f_code)] = frame.f_code

    def start(self):
        self.codes = {}
        threading.setprofile(self._profile)
        sys.setprofile(self._profile)

    def stop(self):
        sys.setprofile(None)
        threading.setprofile(None)
        found = (self.functions.id_of(code) for code in self.codes.values())
        return {function for function in found if function is not None}


def _test_modules(items):
    """The modules of the collected test functions, whose code is never blamed: a doctest's module is
    the project's own code."""
    return sorted({item.nodeid.split("::", 1)[0] for item in items if isinstance(item, pytest.Function)})


def _test_codes(items):
    """The code of each collected test function (a bound method's function's for a test in a class)."""
    for item in items:
        code = getattr(getattr(item, "obj", None), "__code__", None)
        if isinstance(code, types.CodeType):
            yield code


def _defined(item):
    """Where a test is defined, to order tests whatever order a plugin dealt them in: its file, its
    line, and its node id (parametrized cases share a line)."""
    path, line, _name = item.location
    return path, line if line is not None else -1, item.nodeid


def _children():
    """What the finished child processes of this one have used so far (their page faults and CPU time),
    or None where it cannot be read: it grows whenever a process the tests started has ended and been
    waited for. One system call, and no hook on every call or audit event of the tests."""
    if resource is None:  # pragma: no cover - Windows
        return None
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_minflt, used.ru_utime, used.ru_stime


class _Processes:
    """Whether each test started a process: what that process ran is not recorded, so a failing test that
    did is never said to have run nothing that changed (a CLI's test through a subprocess)."""

    def __init__(self):
        self.last = _children()

    def started(self):
        """Whether a process ended since the last call (the last test's end): one the test started."""
        now = _children()
        started, self.last = now is not None and now != self.last, now
        return started


def recorder_name():
    """Which recorder this interpreter uses: what check_environment reports."""
    return "sys.monitoring" if hasattr(sys, "monitoring") else "sys.setprofile"


class Spectrum:
    def __init__(self, config, path):
        self.config = config
        self.file = open(path, "w", encoding="utf-8", buffering=1)  # noqa: SIM115 - closed in unconfigure
        self.deadline = config.getoption(protocol.OPTION_SPECTRUM_DEADLINE)
        self.others = config.getoption(protocol.OPTION_SPECTRUM_OTHERS)
        first = config.getoption(protocol.OPTION_SPECTRUM_FIRST)
        self.first = []
        if first:
            with open(first, encoding="utf-8") as handle:
                self.first = [line.rstrip("\n") for line in handle if line.strip()]
        functions = _Functions(str(config.rootpath), self.emit)
        monitored = hasattr(sys, "monitoring")
        self.recorder = _MonitoringRecorder(functions) if monitored else _ProfileRecorder(functions)
        self.outcome = None
        self.ran = 0
        self.stopped = None
        self.processes = _Processes()

    def emit(self, kind, **fields):
        fields[protocol.EVENT] = kind
        self.file.write(json.dumps(fields) + "\n")

    def close(self):
        self.emit(protocol.SPECTRUM_END, ran=self.ran, stopped=self.stopped, recorder=self.recorder.name)
        self.file.close()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items):
        """The failing tests first, in the order given; then at most `others` of the rest of their
        modules' tests, by file and line, the others deselected."""
        wanted = {node_id: index for index, node_id in enumerate(self.first)}
        last = len(wanted)
        items.sort(key=lambda item: (wanted.get(item.nodeid, last), *_defined(item)))
        if self.others is not None:
            keep = sum(1 for item in items if item.nodeid in wanted) + self.others
            if len(items) > keep:
                config.hook.pytest_deselected(items=items[keep:])
                del items[keep:]
        self.emit(protocol.SPECTRUM_MODULES, modules=_test_modules(items), recorder=self.recorder.name)
        self.processes = _Processes()  # what collection started is no test's

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.outcome = "passed"
        self.recorder.start()
        try:
            yield
        finally:
            functions = self.recorder.stop()
        self.ran += 1
        started = {"started_process": True} if self.processes.started() else {}
        self.emit(
            protocol.SPECTRUM_TEST, node_id=item.nodeid, outcome=self.outcome, functions=sorted(functions), **started
        )
        if self.deadline is not None and time.time() > self.deadline and nextitem is not None:
            self.stopped = "deadline"
            item.session.shouldstop = "pytest-mcp: the localization's time is spent"

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.outcome = "failed"
        elif report.skipped and self.outcome == "passed":
            self.outcome = "skipped"  # a skip or an xfail says nothing of the code


class RunSpectrum:
    """A run's own spectrum, in the process that runs its tests: each failing test's functions, the
    passing tests' count per function, and the project files imported. Skips, xfails and xpasses
    say nothing of the code: they are counted on neither side.

    Its per-test hooks are plain ones, pytest_runtest_logstart and _logfinish, which pytest calls
    around each test's setup, call and teardown anyway: a hook wrapper around the protocol cost
    pluggy two generators a test. They count only in the process that collected the tests: under
    pytest-xdist the controller is sent its workers' logstart and logfinish too."""

    def __init__(self, config, path, lines_path):
        self.config = config
        self.file = open(path, "w", encoding="utf-8", buffering=1)  # noqa: SIM115 - closed in unconfigure
        self.functions = _Functions(str(config.rootpath), self.emit)
        recording = hasattr(sys, "monitoring") and not config.getoption(protocol.OPTION_SPECTRUM_FILES_ONLY)
        lines = recording and not config.getoption(protocol.OPTION_SPECTRUM_NO_LINES)
        self.recorder = _LocalMonitoringRecorder(self.functions, lines) if recording else None
        self.lines = open(lines_path, "w", encoding="utf-8") if lines else None  # noqa: SIM115 - as self.file
        self.running = False  # whether this process collected the tests, and so runs them
        self.outcome = None
        self.passing = 0
        self.counts = {}  # function id -> passing tests that entered it
        self.line_counts = {}  # (function id, line) -> passing tests that ran it
        # The node id of each passing test, hashed into its passed_key once, at the end, where the keys
        # are written: what tells a suspect flaky failure next time.
        self.passed = []
        self.collection = _collection.pop() if _collection else None
        self.processes = _Processes() if self.recorder is not None else None

    def emit(self, kind, **fields):
        fields[protocol.EVENT] = kind
        self.file.write(json.dumps(fields) + "\n")

    def emit_lines(self, kind, **fields):
        fields[protocol.EVENT] = kind
        self.lines.write(json.dumps(fields, separators=(",", ":")) + "\n")

    def _collected(self):
        """The functions entered before the first test, written once, by the process that runs the tests."""
        if self.collection is None:
            return
        codes = self.collection.finish()
        self.collection = None
        if self.running:
            found = (self.functions.id_of(code) for code in codes)
            self.emit(protocol.SPECTRUM_COLLECTED, functions=sorted({f for f in found if f is not None}))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        self._collected()  # the tests' process, a pytest-xdist worker, and the controller, which collects nothing
        self._look_at_modules()
        if self.processes is not None:
            self.processes = _Processes()  # what collection started is no test's

    def close(self):
        self._collected()  # a run that ended before its test loop
        if self.recorder is not None:
            self.recorder.release()
        self.emit(protocol.SPECTRUM_PASSING, total=self.passing, counts=sorted(self.counts.items()))
        if self.lines is not None:
            lines = sorted((function, line, count) for (function, line), count in self.line_counts.items())
            self.emit_lines(protocol.SPECTRUM_PASSING, lines=lines)
            self.emit_lines(protocol.SPECTRUM_END)
            self.lines.close()
        self.emit(protocol.SPECTRUM_IMPORTED, files=self._imported())
        self.emit(protocol.SPECTRUM_PASSED, keys=protocol.passed_keys(self.passed))
        self.emit(protocol.SPECTRUM_END, recorder=self.recorder.name if self.recorder is not None else "")
        self.file.close()

    def _look_at_modules(self):
        """Each module now imported is asked about once (`_Functions.relative` keeps the answer)."""
        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if isinstance(filename, str):
                self.functions.relative(filename)

    def _imported(self):
        """The project's own modules this process imported: whose functions the server digests. Every file
        it was asked about, as the tests began, whenever the recorder armed new modules and at the end, not
        only those still imported at the end: a test may take a module out of sys.modules (to import it
        afresh), and its code would have no digest, so no change of it could be told."""
        self._look_at_modules()
        seen = self.functions.files.items()
        return sorted({relative for name, relative in seen if relative is not None and name.endswith(".py")})

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items):
        self.running = True  # pytest-xdist's controller collects nothing: its hook never runs
        if self.recorder is not None:
            self.recorder.tests = {id(code) for code in _test_codes(items)}
        recorder = self.recorder.name if self.recorder else ""
        self.emit(protocol.SPECTRUM_MODULES, modules=_test_modules(items), recorder=recorder)

    def pytest_runtest_logstart(self, nodeid, location):
        self.outcome = "passed"
        if self.recorder is not None and self.running:
            self.recorder.start()

    def pytest_runtest_logfinish(self, nodeid, location):
        if not self.running:
            return
        if self.recorder is None:  # before Python 3.12: which tests passed, nothing of what they ran
            if self.outcome == "passed":
                self.passed.append(nodeid)
            return
        functions, lines = self.recorder.stop()
        started = self.processes.started()
        if self.outcome == "passed":
            self.passed.append(nodeid)
            self.passing += 1
            counts = self.counts
            for function in functions:
                counts[function] = counts.get(function, 0) + 1
            counts = self.line_counts
            for pair in lines:
                counts[pair] = counts.get(pair, 0) + 1
        elif self.outcome == "failed":
            more = {"started_process": True} if started else {}
            self.emit(protocol.SPECTRUM_TEST, node_id=nodeid, outcome="failed", functions=sorted(functions), **more)
            if self.lines is not None:
                self.emit_lines(protocol.SPECTRUM_TEST, node_id=nodeid, lines=sorted(lines))

    def pytest_runtest_logreport(self, report):
        if report.outcome == "passed" and not hasattr(report, "wasxfail"):
            return  # most reports: a plain pass changes nothing
        if report.failed:
            self.outcome = "failed"
        elif self.outcome == "passed" and (report.skipped or hasattr(report, "wasxfail")):
            self.outcome = "other"  # a skip, an xfail or an xpass says nothing of the code


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    # Before pytest-cov's own hook: a project's `--cov` must not measure this pass, nor write its
    # partial data and reports over the run's (the wrapper runs ahead of every plain hook).
    options = early_config.known_args_namespace
    if getattr(options, _dest(protocol.OPTION_SPECTRUM), None) and hasattr(options, "cov_source"):
        options.cov_source = None
        options.no_cov = True
    recording = getattr(options, _dest(protocol.OPTION_SPECTRUM_RUN), None) and not getattr(
        options, _dest(protocol.OPTION_SPECTRUM_FILES_ONLY), False
    )
    if recording and hasattr(sys, "monitoring") and not _collection:
        # Before the conftests: a root conftest that imports the project runs its import-time code here.
        _collection.append(_Collection(str(early_config.rootpath)))
    yield


def _dest(option):
    return option.lstrip("-").replace("-", "_")


def pytest_configure(config):
    directory = config.getoption(protocol.OPTION_SPECTRUM_RUN)
    if directory:
        worker = getattr(config, "workerinput", {}).get("workerid", "main")
        path = os.path.join(directory, "%s%s.jsonl" % (protocol.SPECTRUM_RUN_PREFIX, worker))
        lines = os.path.join(directory, "%s%s.jsonl" % (protocol.SPECTRUM_LINES_PREFIX, worker))
        config.pluginmanager.register(RunSpectrum(config, path, lines), "pytest-mcp-spectrum")
        _explain_quietly()
        return
    path = config.getoption(protocol.OPTION_SPECTRUM)
    if not path or hasattr(config, "workerinput"):
        return
    if hasattr(config.option, "dist"):
        # Before pytest-xdist's own (trylast) configure: a project's `-n` must not send the tests
        # to workers, where nothing records them.
        config.option.dist = "no"
        config.option.tx = []
    config.pluginmanager.register(Spectrum(config, path), "pytest-mcp-spectrum")
    _explain_quietly()


def pytest_unconfigure(config):
    spectrum = config.pluginmanager.get_plugin("pytest-mcp-spectrum")
    if spectrum is not None:
        spectrum.close()
