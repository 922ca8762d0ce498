"""pytest-mcp's reporter, loaded into the *target* pytest with ``-p _pytest_mcp_reporter``.

Its one job is the answer: it writes one JSON object per line (an event) to the file given by
the report option, and the counts come from pytest's own terminal statistics, so they match the
summary line exactly. Keeping the run inside the project root is the guard's job
(``_pytest_mcp_guard``), a plugin of its own beside this one.

It must run on Python >= 3.9 and pytest >= 7 with nothing else installed, so it uses the
standard library only, and ``_pytest_mcp_protocol`` beside it, which names its options and
events.

PYTEST_DONT_REWRITE: pytest-mcp's bootstrap imports this module before pytest starts, and this
marker tells pytest to take it as imported, without rewriting its asserts (it has none) and
without warning that it could not.
"""

import json
import time

import _pytest_mcp_protocol as protocol
import pytest

# Per-report budget (characters): a failure costs at most about 2 + 1 + 3 + 2 x 1 KB.
MESSAGE_LIMIT = 2000
TRACEBACK_HEAD = 1000
TRACEBACK_TAIL = 3000
CAPTURE_LIMIT = 1000
OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "error")
# The terminal's own words for subtests (pytest >= 9 built in, or the pytest-subtests plugin).
SUBTEST_WORDS = ("subtests passed", "subtests failed", "subtests skipped")
COUNTED = OUTCOMES + ("deselected", "warnings") + SUBTEST_WORDS


def pytest_addoption(parser):
    group = parser.getgroup("pytest-mcp", "pytest-mcp reporter (internal)")
    group.addoption(protocol.OPTION_REPORT, default=None, help="JSON-lines report path (internal).")
    group.addoption(protocol.OPTION_MODE, default="run", choices=protocol.MODES, help="(internal)")
    group.addoption(protocol.OPTION_PASSED, action="store_true", default=False, help="(internal)")
    group.addoption(protocol.OPTION_PROGRESS, action="store_true", default=False, help="(internal)")
    group.addoption(protocol.OPTION_LIST_LIMIT, type=int, default=None, help="(internal)")
    group.addoption(protocol.OPTION_FACTS, default=None, help="(internal)")


def _cut(text, head, tail):
    if text is None or len(text) <= head + tail:
        return text
    cut = len(text) - head - tail
    return "%s\n[... %d characters cut by pytest-mcp ...]\n%s" % (text[:head], cut, text[-tail:])


def _in_project(entry):
    location = getattr(entry, "reprfileloc", None)
    path = str(getattr(location, "path", "") or "")
    return not (
        path.startswith(("/", "<"))
        and not path.startswith("<string>")
        or "site-packages" in path
        or "dist-packages" in path
    )


def _render(entry):
    # ReprEntry.__str__ also prints its (usually empty) locals as "None"; render it the way the
    # terminal does instead.
    try:
        from _pytest._code.code import TerminalRepr

        return TerminalRepr.__str__(entry).rstrip("\n")
    except Exception:
        return str(entry).rstrip("\n")


def _project_traceback(report):
    """pytest's long traceback with frames outside the project (site-packages, stdlib) left out.

    The last frame of each exception is always kept: that is where the assertion and its diff
    (the `E` lines) are. Falls back to pytest's own text for reports it cannot take apart.
    """
    chain = getattr(report.longrepr, "chain", None)
    if not chain:
        return report.longreprtext
    parts = []
    for reprtraceback, _crash, description in chain:
        entries = list(getattr(reprtraceback, "reprentries", []) or [])
        kept = [entry for entry in entries[:-1] if _in_project(entry)] + entries[-1:]
        hidden = len(entries) - len(kept)
        if hidden:
            parts.append("[... %d frame(s) outside the project hidden by pytest-mcp ...]" % hidden)
        parts.extend(_render(entry) for entry in kept)
        if description:
            parts.append(description)
    return "\n\n".join(parts)


def _crash_site(report):
    """(exception type name, `path:line` of the deepest project frame) of a failure's last exception.

    Read from the structured traceback pytest already built for the report, so it costs nothing
    for the reports that pass. Either is None when pytest's report does not say (--tb=native, a
    plugin's own report): the server then reads what it can from the text (ADR 0014).
    """
    chain = getattr(report.longrepr, "chain", None)
    if not chain:
        return None, None
    entries = list(getattr(chain[-1][0], "reprentries", []) or [])
    exception = None
    last = getattr(entries[-1], "reprfileloc", None) if entries else None
    name = str(getattr(last, "message", "") or "")
    if name.isidentifier():  # the long style's `path:line: TypeName`; the short one says `in function`
        exception = name
    for entry in reversed(entries):
        location = getattr(entry, "reprfileloc", None)
        if location is not None and _in_project(entry):
            return exception, "%s:%d" % (location.path, location.lineno)
    return exception, None


def _subtest_description(report):
    """A subtest's `[msg] (k=v)` as pytest prints it; None for a report that is not a subtest's."""
    if not hasattr(report, "context"):
        return None
    # pytest >= 9 names it _sub_test_description; the pytest-subtests plugin sub_test_description.
    for name in ("_sub_test_description", "sub_test_description"):
        describe = getattr(report, name, None)
        if callable(describe):
            try:
                return describe()
            except Exception:
                return "(<subtest>)"
    return None


_THREAD_HEADS = ("Thread 0x", "Current thread 0x", "~~~~", "++++")


def _this_thread_only(text):
    """Captured output without the stacks of other threads that a dump printed.

    faulthandler (pytest's `faulthandler_timeout`, a crash) prints every thread: `Current thread
    0x...` is the one that ran the test, each `Thread 0x...` another (pytest-rerunfailures' server,
    a pool). pytest-timeout prints `~~~ Stack of <name> (<id>) ~~~` for each thread; the test ran in
    MainThread. The other threads' stacks are noise in a failure's evidence, and are left out
    with a line that says so; the timeout's own lines stay.
    """
    if not text or ("Thread 0x" not in text and "~ Stack of " not in text):
        return text
    kept, dropped, keeping = [], 0, True
    for line in text.splitlines(keepends=True):
        if line.startswith(_THREAD_HEADS):
            if line.startswith(("~~~~", "++++")) and " Stack of " not in line:
                keeping = True  # pytest-timeout's "Timeout" banners around the stacks
            else:
                keeping = line.startswith("Current thread 0x") or " Stack of MainThread " in line
                dropped += not keeping
        if keeping:
            kept.append(line)
    if dropped:
        kept.append("[... %d other thread(s)' stacks left out by pytest-mcp ...]\n" % dropped)
    return "".join(kept)


def _counted(key, report):
    """Whether pytest's line counts this report under `key`. A passing setup or teardown is never a
    pass, although a replacement terminal (pytest-sugar's) files it under `passed` too."""
    if key == "passed" and getattr(report, "when", "call") != "call":
        return False
    return getattr(report, "count_towards_summary", True)


def _location(location):
    if not location:
        return None
    path, lineno = location[0], location[1]
    return path if lineno is None else "%s:%d" % (path, lineno + 1)


class Reporter:
    def __init__(self, config, path):
        self.config = config
        self.mode = config.getoption(protocol.OPTION_MODE)
        self.include_passed = config.getoption(protocol.OPTION_PASSED)
        # Line-buffered: each event reaches the file as it happens, so the reports of tests that
        # finished survive a crash or a kill, and a reader can follow the run.
        self.file = open(path, "w", encoding="utf-8", buffering=1)  # noqa: SIM115 - closed in unconfigure
        self.started = time.perf_counter()
        self.items = 0
        self.finished = None
        self.progress = config.getoption(protocol.OPTION_PROGRESS)
        self.failed = 0
        self.reruns = {}  # node id -> (failed attempts run again, the first one's message)
        self.own_stats = {}  # the terminal's statistics, kept here only when it is not loaded
        self.terminal_missing = None
        self.asked = json.loads(config.getoption(protocol.OPTION_FACTS) or "{}")  # {fact: figure}
        self.slowest = Slowest(self.asked[protocol.FACT_SLOWEST]) if self.asked.get(protocol.FACT_SLOWEST) else None

    def emit(self, kind, **fields):
        fields[protocol.EVENT] = kind
        self.file.write(json.dumps(fields) + "\n")

    def close(self):
        # Written last, after pytest printed its summary line: `duration` spans what that line
        # reports, and the counts are the statistics it was printed from, including warnings
        # recorded by other plugins' sessionfinish hooks. No summary means the session never finished.
        if self.finished is not None:
            facts = self._facts()
            if facts:
                self.emit(protocol.FACTS, v=protocol.FACTS_VERSION, **facts)
            self.emit(
                protocol.SUMMARY,
                counts=self._counts(),
                duration=round(time.perf_counter() - self.started, 6),
                reproduce=self._reproduce(),
                **self.finished,
            )
        self.file.close()

    def _facts(self):
        """The facts event's members: each fact this run learnt, named as the domain's RunFacts field
        that validates it (ADR 0019). A fact the run did not learn is left out."""
        facts = {}
        figures = getattr(self.config, "_pytest_mcp_affected", None)  # _pytest_mcp_testmon's
        if figures is not None:  # the tests it ran are the session's: under xdist only we count them
            facts[protocol.FACT_AFFECTED] = dict(figures, run=self.items)
        if self.slowest is not None:
            facts[protocol.FACT_SLOWEST] = self.slowest.ranked.fact()
        return facts

    def _counts(self):
        """Every count pytest's summary line shows, by its word: the known ones, then each status a
        plugin added (pytest-rerunfailures' `rerun`, ...) in the order pytest first saw it. Without
        the terminal plugin (`-p no:terminal`) there is no line: the same tallies, kept here."""
        counts = dict.fromkeys(COUNTED, 0)
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        stats = getattr(terminal, "stats", None) if terminal is not None else None
        if stats is None:
            stats = self.own_stats
        for key, reports in stats.items():
            if key:  # setup and teardown reports that pass have no word
                counts[key] = sum(1 for r in reports if _counted(key, r))
        return counts

    def _reproduce(self):
        """The options that make a run reproducible when a plugin seeded or reordered it."""
        seed = getattr(self.config.option, "randomly_seed", None)
        if self.config.pluginmanager.hasplugin("randomly") and isinstance(seed, int):
            return ["-p", "randomly", "--randomly-seed=%d" % seed]
        return []

    def pytest_sessionstart(self, session):
        self.started = time.perf_counter()

    def _category(self, report, subtest):
        """The outcome to list the report under, or None for a subtest report that is not listed.

        A subtest report is listed when the terminal counts it as a test outcome (pytest 9 counts
        a failing subtest in `failed`) and always when it failed. Passing subtests are counted
        ("N subtests passed"), not listed; pytest's empty category means the line leaves it out.
        """
        status = self.config.hook.pytest_report_teststatus(report=report, config=self.config)
        category = status[0] if status else ""
        if category in OUTCOMES:
            return category
        if subtest:
            return "failed" if report.failed else None
        if report.failed:
            return "error" if report.when != "call" else "failed"
        return "skipped" if report.skipped else "passed"

    def _tally(self, report):
        """Without the terminal plugin, count each report under its status, as the terminal would."""
        status = self.config.hook.pytest_report_teststatus(report=report, config=self.config)
        # The terminal plugin's own hook, the last one asked, is what files a plain call report.
        category = status[0] if status else report.outcome
        self.own_stats.setdefault(category, []).append(report)

    def _no_terminal(self):
        if self.terminal_missing is None:  # the terminal plugin registers itself after we do
            self.terminal_missing = not self.config.pluginmanager.hasplugin("terminalreporter")
        return self.terminal_missing

    @pytest.hookimpl(trylast=True)
    def pytest_deselected(self, items):
        if self._no_terminal():
            self.own_stats.setdefault("deselected", []).extend(items)

    @pytest.hookimpl(trylast=True)
    def pytest_warning_recorded(self, warning_message, when, nodeid, location):
        if self._no_terminal():
            self.own_stats.setdefault("warnings", []).append(warning_message)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report):
        # Three reports a test, most of them a plain pass: that case calls no method and reads no
        # property (issue 41). On pytest 9 `report.nodeid` is a property that makes its NodeId a string
        # (two calls), `passed` another: with _no_terminal(), 12 of the 80 Python calls a test that our
        # plugins added (bench/results/run-spectrum.md).
        missing = self.terminal_missing
        if missing is None:
            missing = self._no_terminal()
        if missing:
            self._tally(report)
        passed = report.outcome == "passed"
        if report.outcome == "rerun":  # pytest-rerunfailures: this attempt failed and runs again
            count, first = self.reruns.get(report.nodeid, (0, None))
            self.reruns[report.nodeid] = (count + 1, first or self._message(report, "failed"))
            return
        rerun = self.reruns.get(report.nodeid) if self.reruns else None
        flaky = rerun is not None and passed and report.when == "call"
        # Most reports are a plain pass that nothing lists: return before asking every plugin for
        # its status (three reports per test). An xpass (`wasxfail`), a subtest (`context`) and a
        # pass after reruns (flaky) are not plain passes.
        if (
            passed
            and not flaky
            and (report.when != "call" or not self.include_passed)
            and not hasattr(report, "wasxfail")
            and not hasattr(report, "context")
        ):
            return
        subtest = _subtest_description(report)
        outcome = self._category(report, subtest is not None)
        listed_pass = report.when == "call" and (self.include_passed or flaky)
        if outcome is None or outcome == "passed" and not listed_pass:
            return
        message = self._message(report, outcome)
        if subtest is not None:
            # The node id is the enclosing test's (what pytest prints after SUBFAILED, and what
            # can be run again); the description says which subtest.
            message = "subtest %s: %s" % (subtest, message) if message else "subtest %s" % subtest
        if outcome in ("failed", "error"):
            self.failed += 1
        traceback = None
        fields = {}
        if report.failed:
            traceback = _cut(_project_traceback(report), TRACEBACK_HEAD, TRACEBACK_TAIL)
            exception, crash = _crash_site(report)
            if exception:
                fields["exception"] = exception
            if crash:
                fields["crash"] = crash
            if getattr(report, protocol.BLOCKED_ATTRIBUTE, None):  # a sandboxed run's (_pytest_mcp_sandbox)
                fields["blocked"] = getattr(report, protocol.BLOCKED_ATTRIBUTE)
        if rerun is not None:  # how many attempts failed before this one, and how the first did
            fields["reruns"] = rerun[0]
            fields["first_failure"] = _cut(rerun[1], MESSAGE_LIMIT // 4, MESSAGE_LIMIT // 4)
        self.emit(
            protocol.TEST,
            node_id=report.nodeid,
            outcome=outcome,
            phase=report.when,
            location=_location(report.location),
            message=_cut(message, MESSAGE_LIMIT // 4, MESSAGE_LIMIT - MESSAGE_LIMIT // 4),
            traceback=traceback,
            duration=round(report.duration, 6),
            stdout=_cut(_this_thread_only(report.capstdout), 0, CAPTURE_LIMIT) or None if report.failed else None,
            stderr=_cut(_this_thread_only(report.capstderr), 0, CAPTURE_LIMIT) or None if report.failed else None,
            **fields,
        )

    def _message(self, report, outcome):
        """The one line that says what happened: the reason of a skip or xfail, else the crash line."""
        longrepr = report.longrepr
        if outcome in ("xfailed", "xpassed"):
            return getattr(report, "wasxfail", "") or None
        if isinstance(longrepr, tuple) and len(longrepr) == 3:
            return str(longrepr[2])
        if longrepr is None:
            return None
        crash = getattr(longrepr, "reprcrash", None)
        if crash is not None:
            return crash.message
        lines = str(longrepr).strip().splitlines()
        return lines[-1] if lines else None

    @pytest.hookimpl(trylast=True)
    def pytest_collectreport(self, report):
        if not report.failed:
            return
        text = report.longreprtext
        message = None
        for line in reversed(text.splitlines()):
            if line.startswith("E   "):
                message = line[4:].strip()
                break
        if message is None:
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            message = lines[-1] if lines else "collection failed"
        self.emit(
            protocol.COLLECT_ERROR,
            node_id=report.nodeid,
            message=_cut(message, MESSAGE_LIMIT // 4, MESSAGE_LIMIT - MESSAGE_LIMIT // 4),
            traceback=_cut(text, TRACEBACK_HEAD, TRACEBACK_TAIL),
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        # Under xdist the controller collects nothing itself; every worker reports the same ids.
        if not self.items:
            self.items = len(ids)
            if self.progress:
                self.emit(protocol.COLLECTED, total=self.items)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session):
        self.items = len(session.items)
        if self.progress and self.items:
            self.emit(protocol.COLLECTED, total=self.items)
        if self.mode != "collect":
            return
        counts = {}  # every item, listed or not: about 0.5 us an item, 5 ms at 10,000
        for item in session.items:
            path = item.nodeid.split("::", 1)[0]
            counts[path] = counts.get(path, 0) + 1
        self.emit(protocol.MODULES, modules=[[path, count] for path, count in counts.items()])
        # Only the tests the server could list are described: an item's location and markers cost
        # more than collecting it. The summary's total counts them all.
        limit = self.config.getoption(protocol.OPTION_LIST_LIMIT)
        for item in session.items if limit is None else session.items[:limit]:
            location = item.location
            markers = []
            for mark in item.iter_markers():
                if mark.name not in markers:
                    markers.append(mark.name)
            self.emit(
                protocol.ITEM,
                node_id=item.nodeid,
                file=location[0],
                line=None if location[1] is None else location[1] + 1,
                markers=markers,
            )

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        self.finished = {"exit_code": int(exitstatus), "total": self.items}


class Slowest:
    """The N slowest tests, each test's setup, call and teardown summed, in a heap of N: a few dict and
    heap operations a test, and nothing kept for the tests that are not among the slowest. Registered
    only when the answer asks for them."""

    def __init__(self, count):
        self.ranked = protocol.SlowestTests(count)  # the rule; here, only how pytest's reports feed it
        self.open = {}  # node id -> seconds of its phases so far: one test at a time, one per xdist worker
        self.again = set()  # tests pytest-rerunfailures runs again: their attempts add up

    def pytest_runtest_logreport(self, report):
        if hasattr(report, "context"):  # a subtest: its time is inside its test's call
            return
        node = report.nodeid
        spent = self.open.pop(node, 0.0) + report.duration
        if report.when != "teardown":
            self.open[node] = spent
            if report.outcome == "rerun":
                self.again.add(node)
            return
        if self.again and node in self.again:
            self.again.discard(node)
            self.open[node] = spent
            return
        self.ranked.add(node, spent)


class ProgressReporter(Reporter):
    """The reporter plus one event per finished test; without progress no hook runs per test."""

    done = 0

    def pytest_runtest_logfinish(self, nodeid, location):
        # Every test: a count held back would stay unseen while the next test hangs. Formatted,
        # not json.dumps'd: 1.3 us a test instead of 2.7 (ADR 0018).
        self.done += 1
        self.file.write(protocol.PROGRESS_LINE % (self.done, self.failed))


def pytest_configure(config):
    path = config.getoption(protocol.OPTION_REPORT)
    if not path or hasattr(config, "workerinput"):  # xdist workers report through the controller
        return
    if not config.pluginmanager.hasplugin("cacheprovider"):
        # --lf and --ff read pytest's cache; without it pytest would silently run everything. The
        # request's field that asks for one is named after it (--last-failed: last_failed).
        for option in ("--last-failed", "--failed-first"):
            if config.getoption(option, default=False):
                raise pytest.UsageError(
                    "%s %s: needs pytest's cache, which the project's configuration turns off "
                    "(-p no:cacheprovider); omit this field, or remove that option"
                    % (protocol.REFUSED_OPTION_MARK, option.lstrip("-").replace("-", "_"))
                )
    reporter = ProgressReporter if config.getoption(protocol.OPTION_PROGRESS) else Reporter
    plugin = reporter(config, path)
    config.pluginmanager.register(plugin, "pytest-mcp-reporter")
    if plugin.slowest is not None:
        config.pluginmanager.register(plugin.slowest, "pytest-mcp-slowest")


def pytest_unconfigure(config):
    reporter = config.pluginmanager.get_plugin("pytest-mcp-reporter")
    if reporter is not None:
        reporter.close()
