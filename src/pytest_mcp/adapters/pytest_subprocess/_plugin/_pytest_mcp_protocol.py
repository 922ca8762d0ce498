"""What the server and its code inside the target pytest say to each other: the one source.

The bootstrap and the reporter run in the *target* interpreter (standard library only, Python
3.9 and later) and import this module from the run's private directory (the guard needs none of
it); the server imports it from the package (runner.py starts pytest with these options,
report.py reads these events).
"""

import hashlib
import heapq

OWN_PLUGINS = ("_pytest_mcp_guard", "_pytest_mcp_reporter", "_pytest_mcp_spectrum")
"""Our plugins inside pytest, in load order: the bootstrap imports them, the runner names each with `-p`.
The spectrum recorder does nothing unless a run or a second pass asks it to (ADR 0020)."""

# The reporter's command-line options, which the runner passes and the reporter declares.
OPTION_REPORT = "--pytest-mcp-report"
"""Path of the JSON-lines file the reporter writes its events to."""
OPTION_MODE = "--pytest-mcp-mode"
"""`run`, or `collect` for --collect-only (the reporter then describes collected items)."""
MODES = ("run", "collect")
OPTION_PASSED = "--pytest-mcp-passed"
"""List passing reports too (detail='all')."""
OPTION_PROGRESS = "--pytest-mcp-progress"
"""Write a progress event as each test finishes."""
OPTION_LIST_LIMIT = "--pytest-mcp-list-limit"
"""Describe at most this many collected items; the summary still counts them all."""
OPTION_SANDBOX = "--pytest-mcp-sandbox"
"""The run is sandboxed: `loopback` (its own network namespace) or `host` (--sandbox-network); the
reporter then says which failures the sandbox caused."""
SANDBOX_PLUGIN = "_pytest_mcp_sandbox"
"""The module, beside the reporter, that a sandboxed run loads with `-p`."""
BLOCKED_ATTRIBUTE = "pytest_mcp_blocked"
"""On a sandboxed run's failing report: what the sandbox blocked (the reporter's `blocked`)."""
SANDBOX_NETWORK_FLAG = "--sandbox-network"
"""The server's flag that opens the host network to a sandboxed run (settings.py), as a failure names it."""
OPTION_SANDBOX_TMP = "--pytest-mcp-sandbox-tmp"
"""The size of a sandboxed run's /tmp in MiB, which a failure that filled it names."""
SANDBOX_TMP_FLAG = "--sandbox-tmp-size"
"""The server's flag that sizes the sandbox's /tmp (settings.py), as a failure names it."""
SANDBOX_WRITABLE_FLAG = "--sandbox-writable"
"""The server's flag that makes the root's .git or virtualenv writable (settings.py), as a failure names it."""
OPTION_TESTMON_DATA = "--pytest-mcp-testmon-data"
"""An affected run: pytest-testmon's data file, unless the project keeps its own (_pytest_mcp_testmon)."""
OPTION_FACTS = "--pytest-mcp-facts"
"""The facts the answer asks for, as JSON: {fact: figure}, e.g. {"slowest": 5} (RunSpec.facts)."""
TESTMON_PLUGIN = "_pytest_mcp_testmon"
"""The module, beside the reporter, that an affected run loads with `-p`."""
SPECTRUM_PLUGIN = "_pytest_mcp_spectrum"
"""The module, beside the reporter, that records a run's spectrum, or a second pass's (ADR 0020)."""
OPTION_SPECTRUM = "--pytest-mcp-spectrum"
"""A second pass: the JSON-lines file its spectrum is written to."""
OPTION_SPECTRUM_FIRST = "--pytest-mcp-spectrum-first"
"""A file of node ids, one a line: the tests to run first (the failing ones)."""
OPTION_SPECTRUM_DEADLINE = "--pytest-mcp-spectrum-deadline"
"""Seconds since the epoch after which no further test starts: a safety, which a pass of a machine's
usual speed never reaches (its tests are counted: OPTION_SPECTRUM_OTHERS)."""
OPTION_SPECTRUM_OTHERS = "--pytest-mcp-spectrum-others"
"""How many tests a second pass runs after the failing ones, at most: the first of the rest of their
modules, by file and line. A count, so that the same failures record the same tests at any load."""
OPTION_SPECTRUM_RUN = "--pytest-mcp-spectrum-run"
"""A run that records its own spectrum (ADR 0020): the directory each of its processes (pytest-xdist's
workers each) writes `spectrum-<worker>.jsonl` to: the failing tests' functions, the passing tests'
counts per function, and the project files the process imported."""
OPTION_SPECTRUM_FILES_ONLY = "--pytest-mcp-spectrum-files-only"
"""With OPTION_SPECTRUM_RUN: record the imported files and the passing tests only, not what the tests
entered (--localize 0)."""
OPTION_SPECTRUM_NO_LINES = "--pytest-mcp-spectrum-no-lines"
"""With OPTION_SPECTRUM_RUN: record the functions the tests enter, not the lines they run (--localize-lines off)."""
SPECTRUM_RUN_PREFIX = "spectrum-"
SPECTRUM_LINES_PREFIX = "lines-"
"""A run's lines (3.12+), beside each process's spectrum file, in a file of its own, `lines-<worker>.jsonl`:
a failing test's events (SPECTRUM_TEST: node_id, lines [[function id, line], ...], the lines it ran of the
functions it entered), the passing tests' (SPECTRUM_PASSING: lines [[function id, line, tests], ...]), then
SPECTRUM_END. Read whole or not at all: the ranking then reads functions, and the spectrum file, whose
events say which files changed, is never cut for lines."""
SPECTRUM_FUNCTION = "fn"  # id, file, name, first, last: a project function, the first time it runs
SPECTRUM_TEST = "test"  # node_id, outcome (passed, failed, skipped), functions: [ids], started_process: true if so
SPECTRUM_MODULES = "modules"  # modules: the files that hold the collected tests; recorder
SPECTRUM_END = "end"  # ran, stopped (null, or why it stopped early), recorder
SPECTRUM_PASSING = "passing"  # a run's own spectrum: total passing tests, counts [[function id, tests], ...]
SPECTRUM_COLLECTED = "collected"  # functions: [ids] the project functions entered before the first test
SPECTRUM_IMPORTED = "imported"  # files: the project files (relative to the root) the process imported
SPECTRUM_PASSED = "passed"  # keys: the tests that passed, each a passed_key (below); on every Python


def passed_key(node_id: str) -> str:
    """A passing test's node id as the server's history keeps it: 64 bits of its BLAKE2b digest, in hex.
    The same as the domain's `history.passed_key` (a test pins them equal)."""
    return passed_keys([node_id])[0]


def passed_keys(node_ids: list[str]) -> list[str]:
    """`passed_key` of each node id, in one loop: the run hashes its passing tests once, at the end."""
    blake2b = hashlib.blake2b
    return [blake2b(node_id.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest() for node_id in node_ids]


# Events: one JSON object a line, whose EVENT member names its kind.
EVENT = "e"
TEST = "test"  # a test report that is listed: node_id, outcome, phase, location, message, ...; a failure's
# exception (type name) and crash (path:line of the deepest project frame) when pytest's report says
COLLECT_ERROR = "collect_error"  # node_id, message, traceback
ITEM = "item"  # a collected item (collect mode): node_id, file, line, markers
MODULES = "modules"  # collect mode: modules, [[file, tests], ...] for every collected item, in order
COLLECTED = "collected"  # total: how many tests will run (progress only)
PROGRESS = "p"  # done, failed (progress only); short, as there is one per test
PROGRESS_LINE = '{"e": "p", "done": %d, "failed": %d}\n'
"""A progress event as the reporter writes it: formatted, not dumped, and known by its start, so that
the server skips or takes the last of a run of them without parsing each (100,000 at 100,000 tests)."""
PROGRESS_START = PROGRESS_LINE.split(",", 1)[0].encode()
FACTS = "facts"
"""What the run learnt besides its reports, in one event written just before the summary: its members
are exactly the fields of the domain's RunFacts (affected, ...), which validates them; a fact the run
did not learn is left out. The one channel from inside pytest to the answer (ADR 0019)."""
FACTS_VERSION = 1
"""The facts event's `v`: a reader that meets another version reads no facts, and says so in its log."""
FACT_AFFECTED = "affected"
FACT_SLOWEST = "slowest"
FACT_NAMES = (FACT_AFFECTED, FACT_SLOWEST)
"""The facts' names: the fields of the domain's RunFacts (a test holds them equal), the keys of RunSpec.facts
and of the facts event. Named once, so that a typo is an error, not a fact silently dropped (issue 43)."""


class SlowestTests:
    """The rule for the N slowest tests, in one place: the reporter feeds it pytest's tests, the fake its
    scripted ones. Each test's seconds (its phases summed) are added as it finishes; slowest first, equal
    durations in the order they finished (the earlier is the slower). A heap of N: nothing is kept for the
    tests that are not among the slowest."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.heap: list[tuple[float, int, str]] = []  # (seconds, -order, node id): the quickest of the slowest on top
        self.order = 0

    def add(self, node_id: str, seconds: float) -> None:
        self.order += 1
        entry = (seconds, -self.order, node_id)
        if len(self.heap) < self.count:
            heapq.heappush(self.heap, entry)
        elif entry > self.heap[0]:
            heapq.heapreplace(self.heap, entry)

    def fact(self) -> list[dict[str, object]]:
        """The facts event's `slowest`: [{node_id, duration}], slowest first."""
        return [{"node_id": node, "duration": round(spent, 6)} for spent, _, node in sorted(self.heap, reverse=True)]


SUMMARY = "summary"  # exit_code, total, counts (pytest's words), duration; written last

# The bootstrap's own endings, before pytest starts: an exit code and a line on stderr.
PYTEST_MISSING_EXIT = 86
PYTEST_MISSING_MARK = "pytest-mcp: cannot import pytest:"
PLUGIN_MISSING_EXIT = 87
PLUGIN_MISSING_MARK = "pytest-mcp: missing plugin:"
# The reporter's refusal of a request the project's configuration cannot honour: a usage error
# (exit 4) whose message starts with this, then `FIELD: REASON`.
REFUSED_OPTION_MARK = "pytest-mcp: refused option:"
DUMP_SIGNAL = "SIGUSR1"
"""On this signal faulthandler writes every thread's stack to the stderr pytest started with."""
WARDEN_REPORT = "warden.json"
"""In a run's private directory: the command lines of the processes its warden stopped (JSON)."""
