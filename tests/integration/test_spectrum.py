"""The second pass's recorder inside a real pytest (ADR 0020): the functions each test ran, no more.

On this interpreter (sys.setprofile before Python 3.12, sys.monitoring from 3.12), and on the
compatibility matrix's newest Python (3.12+, from pyenv) with its pinned pytest.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
from pytest_mcp.adapters.pytest_subprocess.spectrum import read_run_spectrum, read_spectrum
from pytest_mcp.domain.localization import Spectrum
from tests.compat.conftest import COMBOS, compat_target

PLUGIN = Path(protocol.__file__).parent

MONEY = """
class Money:
    def __init__(self, cents):
        self.cents = cents

    def __eq__(self, other):
        return self.cents == other.cents

    def __repr__(self):
        return f"Money({self.cents})"


def add(a, b):
    return Money(a.cents + b.cents + 1)  # the bug


def double(a):
    return Money(a.cents * 2)


class Pair:
    def __init__(self, first, second):
        self._parts = (first, second)

    @property
    def first(self):
        return self._parts[0]

    def __repr__(self):
        return f"Pair{self._parts!r}"
"""

TESTS = """
import threading

from money import Money, Pair, add, double


def test_add():
    assert add(Money(1), Money(2)) == Money(3)


def test_double():
    assert double(Money(2)) == Money(4)


def test_in_a_thread():
    done = []
    worker = threading.Thread(target=lambda: done.append(double(Money(1))))
    worker.start()
    worker.join()
    assert done == [Money(2)]


def test_add_pair():
    assert add(Money(1), Money(1)) == Pair(Money(2), Money(0)).first
"""


def _pytest(python: str, root: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """Plain pytest on the project with our spectrum plugin and `options`; its tests fail."""
    completed = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", protocol.SPECTRUM_PLUGIN, *options, "-p", "no:cacheprovider"],
        cwd=root,
        env={"PYTHONPATH": str(PLUGIN), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 1, completed.stdout + completed.stderr
    return completed


def _record(python: str, root: Path, *options: str) -> dict[str, set[str]]:
    """A second pass's recording of test_money.py, test_add first."""
    (root / "first.txt").write_text("test_money.py::test_add\n", encoding="utf-8")
    first = f"{protocol.OPTION_SPECTRUM_FIRST}={root / 'first.txt'}"
    _pytest(python, root, f"{protocol.OPTION_SPECTRUM}={root / 'spectrum.jsonl'}", first, *options, "test_money.py")
    spectrum = read_spectrum(root / "spectrum.jsonl", 1 << 20)
    names = [function.name for function in spectrum.functions]
    assert spectrum.recorder == ("sys.monitoring" if _monitored(python) else "sys.setprofile")
    return {trace.node_id: {names[i] for i in trace.functions} | {trace.outcome} for trace in spectrum.tests}


def _recorded_run(root: Path, files: dict[str, str]) -> Spectrum:
    """A run's own recording (`--pytest-mcp-spectrum-run`, Python 3.12+) of a project of these files."""
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    recorded = root / "spectrum"
    recorded.mkdir()
    _pytest(_monitoring_python(), root, f"{protocol.OPTION_SPECTRUM_RUN}={recorded}", "-p", "no:randomly")
    spectrum = read_run_spectrum(recorded, 1 << 20).spectrum
    assert spectrum is not None
    return spectrum


def _monitored(python: str) -> bool:
    check = "import sys; print(hasattr(sys, 'monitoring'))"
    return subprocess.run([python, "-c", check], capture_output=True, text=True).stdout.strip() == "True"


def _monitoring_python() -> str:
    """A Python 3.12+ with pytest: the compatibility matrix's newest combo, built once under .cache/compat/
    (it was a venv and a pip install of pytest at each run)."""
    newest = max(COMBOS, key=lambda combo: tuple(map(int, combo.python_version.split("."))))
    assert tuple(map(int, newest.python_version.split(".")[:2])) >= (3, 12), newest
    return str(compat_target(newest).python)


def test_each_test_records_the_functions_it_ran_and_not_the_repr_pytest_calls_to_explain_a_failure(
    tmp_path: Path,
) -> None:
    _check(sys.executable, tmp_path / "project")


@pytest.mark.slow
def test_sys_monitoring_records_the_same_on_python_3_12_and_later(tmp_path: Path) -> None:
    python = _monitoring_python()
    assert _monitored(python)
    _check(python, tmp_path / "project")


def _check(python: str, tmp_path: Path) -> None:
    tmp_path.mkdir()
    (tmp_path / "money.py").write_text(MONEY, encoding="utf-8")
    (tmp_path / "test_money.py").write_text(TESTS, encoding="utf-8")

    traces = _record(python, tmp_path)

    assert next(iter(traces)) == "test_money.py::test_add", "the failing test runs first"
    assert traces["test_money.py::test_add"] >= {"failed", "add", "Money.__init__", "Money.__eq__"}
    assert "Money.__repr__" not in traces["test_money.py::test_add"], "pytest's repr of the values is no evidence"
    # Nor is what such a repr calls in turn: a pair's repr of its parts.
    assert traces["test_money.py::test_add_pair"] >= {"failed", "add", "Pair.first"}
    assert not {"Pair.__repr__", "Money.__repr__"} & traces["test_money.py::test_add_pair"]
    assert traces["test_money.py::test_double"] >= {"passed", "double", "Money.__init__", "Money.__eq__"}
    assert "add" not in traces["test_money.py::test_double"]
    assert "double" in traces["test_money.py::test_in_a_thread"], "a thread the test starts is recorded"
    # pytest calls the test function itself: test code, never blamed, not even recorded.
    assert "test_add" not in traces["test_money.py::test_add"]


SHUFFLING = """
def pytest_collection_modifyitems(items):
    items.reverse()  # as pytest-randomly deals them: in another order at every run
"""


def test_a_second_pass_runs_its_count_of_other_tests_the_first_by_definition_whatever_the_order_dealt(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "money.py").write_text(MONEY, encoding="utf-8")
    (root / "test_money.py").write_text(TESTS, encoding="utf-8")
    (root / "conftest.py").write_text(SHUFFLING, encoding="utf-8")

    traces = _record(sys.executable, root, f"{protocol.OPTION_SPECTRUM_OTHERS}=2")

    assert list(traces) == ["test_money.py::test_add", "test_money.py::test_double", "test_money.py::test_in_a_thread"]


CONFTEST = """
import pytest

from money import Money


@pytest.fixture
def two():
    return Money(2)
"""

RUN_TESTS = """
from money import Money, add, double


def test_add(two):
    assert add(two, Money(1)) == Money(3)


def test_double(two):
    assert double(two) == Money(4)


def test_double_again():
    assert double(double(Money(1))) == Money(4)
"""


@pytest.mark.slow
def test_the_runs_own_recorder_arms_each_function_again_for_every_test_and_skips_what_pytest_calls(
    tmp_path: Path,
) -> None:
    """The run's own recording (3.12+, `--pytest-mcp-spectrum-run`): a function the last test ran is
    recorded again in the next (its event was turned off once seen); what pytest itself calls (the
    test function, a fixture, a failure's repr) is not recorded, so the passing tests' counts grow
    with the project's functions, not with the number of tests."""
    spectrum = _recorded_run(
        tmp_path / "project", {"money.py": MONEY, "conftest.py": CONFTEST, "test_money.py": RUN_TESTS}
    )
    assert spectrum.recorder == "sys.monitoring"
    names = [function.name for function in spectrum.functions]
    (failing,) = spectrum.tests
    assert failing.node_id == "test_money.py::test_add"
    assert {names[i] for i in failing.functions} == {"add", "Money.__init__", "Money.__eq__"}
    passing = {function.name: function.passing for function in spectrum.functions if function.passing}
    assert spectrum.passing_total == 2
    # Each passing test ran double and Money.__init__ (the second test twice over): one count a test.
    assert passing == {"double": 2, "Money.__init__": 2, "Money.__eq__": 2}
    assert not {"two", "test_add", "test_double", "test_double_again", "Money.__repr__"} & set(names)


COLORS = """
class Codes:
    def __init__(self):
        for name in dir(self):
            if not name.startswith("_"):
                setattr(self, name, "\\033[%dm" % getattr(self, name))


class Fore(Codes):
    RED = 31


class Lazy:
    def __getattr__(self, name):
        return name


FORE = Fore()
LAZY = Lazy()


def paint(text, colour):
    return colour + text + "\\033[0m"
"""

REGISTRY = """
NAMES = {}


def register(name):
    def add(function):
        NAMES[name] = function
        return function

    return add


@register("one")
def one():
    return 1
"""

COLOR_TESTS = """
from colors import FORE, LAZY, paint


def test_red():
    assert FORE.RED == "\\033[32m"


def test_paint():
    assert paint("x", "") == "x\\033[0m"
"""


@pytest.mark.slow
def test_the_run_records_the_functions_entered_before_the_first_test_and_not_what_pytest_calls_as_it_collects(
    tmp_path: Path,
) -> None:
    """A module's import-time code (a constructor called at module level, a decorator's registry) runs as
    a root conftest and the test modules are imported, before any test: the run records it once, apart
    from each test's functions. What pytest calls as it looks over a test module's names (a
    `__getattr__`) is not recorded, nor are module and class bodies."""
    files = {"colors.py": COLORS, "registry.py": REGISTRY, "conftest.py": "import registry\n"}
    spectrum = _recorded_run(tmp_path / "project", files | {"test_colors.py": COLOR_TESTS})

    names = [function.name for function in spectrum.functions]
    assert sorted(names[i] for i in spectrum.collected) == ["Codes.__init__", "register", "register.<locals>.add"]
    (failing,) = spectrum.tests
    assert failing.node_id == "test_colors.py::test_red"
    assert failing.functions == (), "the failing test itself entered no project code"
    assert {function.name for function in spectrum.functions if function.passing} == {"paint"}
    assert not {"Lazy.__getattr__", "Codes", "Fore", "Lazy", "one"} & set(names)


CLI_TESTS = """
import subprocess
import sys

from money import add


def test_through_a_process():
    assert subprocess.run([sys.executable, "-c", "print(2)"], capture_output=True, text=True).stdout == "3"


def test_in_process():
    assert add(1, 1) == 3
"""


def test_a_test_that_started_a_process_is_recorded_as_such(tmp_path: Path) -> None:
    """What a subprocess runs is not recorded: the recording says that the test started one, so that it is
    never taken for a test that ran nothing that changed (a second pass here; the run's own recorder on
    3.12 and later writes the same, tests/integration/test_run_spectrum.py)."""
    tmp_path.joinpath("money.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    tmp_path.joinpath("test_money.py").write_text(CLI_TESTS, encoding="utf-8")
    (tmp_path / "first.txt").write_text("test_money.py::test_through_a_process\ntest_money.py::test_in_process\n")
    spectrum_file = tmp_path / "spectrum.jsonl"
    first = f"{protocol.OPTION_SPECTRUM_FIRST}={tmp_path / 'first.txt'}"
    _pytest(sys.executable, tmp_path, f"{protocol.OPTION_SPECTRUM}={spectrum_file}", first, "-p", "no:randomly")

    started = {trace.node_id: trace.started_process for trace in read_spectrum(spectrum_file, 1 << 20).tests}
    assert started == {"test_money.py::test_through_a_process": True, "test_money.py::test_in_process": False}


CACHED = """
import functools


@functools.lru_cache(maxsize=64)
def lookup(name):
    return {"banana": "B"}.get(name)


@functools.cache
def unused(name):
    return name


class Table:
    def __init__(self, rows):
        self.rows = rows

    @functools.cached_property
    def width(self):
        return max(len(row) for row in self.rows) + 1  # the bug

    @functools.cache
    def cell(self, index):
        return self.rows[index]

    @staticmethod
    @functools.lru_cache
    def pad(text):
        return text + " "
"""

CACHED_TESTS = """
from cached import Table, lookup


def test_width():
    assert Table(["ab", "c"]).width == 2


def test_lookup():
    assert lookup("banana") == "B"


def test_cell_and_pad():
    assert Table.pad(Table(["x"]).cell(0)) == "x "
"""


@pytest.mark.slow
def test_the_runs_own_recorder_records_functions_that_a_cache_or_a_cached_property_holds(tmp_path: Path) -> None:
    """`functools.lru_cache`, `functools.cache` and `functools.cached_property` hold the project's function
    in an object that is no function: the run's recorder (3.12+) arms the code they hold, so a bug in a
    cached function is recorded where the tests enter it (emoji's `get_emoji_by_name`, in the fourth
    held-out set, was recorded by no test)."""
    spectrum = _recorded_run(tmp_path / "project", {"cached.py": CACHED, "test_cached.py": CACHED_TESTS})

    names = [function.name for function in spectrum.functions]
    (failing,) = spectrum.tests
    assert failing.node_id == "test_cached.py::test_width"
    assert {names[i] for i in failing.functions} >= {"Table.width", "Table.__init__"}
    passing = {function.name for function in spectrum.functions if function.passing}
    assert {"lookup", "Table.cell", "Table.pad"} <= passing
    assert "unused" not in names, "armed, but never entered"


FORGETTING_TESTS = """
import sys

import shapes


def test_area_afresh():
    assert shapes.area(2) == 4
    del sys.modules["shapes"]  # imported afresh by the next test that needs it, as some suites do


def test_fails():
    assert False
"""


def test_the_run_lists_the_project_files_it_imported_though_a_test_took_one_out_of_sys_modules(
    tmp_path: Path,
) -> None:
    """The imported files are what the server digests, and so what tells a change. A module a test took out
    of sys.modules is listed all the same: emoji's test_json.py deletes every `emoji` module, and until
    then none of the package's functions had a digest, so its planted change was never told (the fourth
    held-out set)."""
    tmp_path.joinpath("shapes.py").write_text("def area(side):\n    return side * side\n", encoding="utf-8")
    tmp_path.joinpath("test_shapes.py").write_text(FORGETTING_TESTS, encoding="utf-8")
    recorded = tmp_path / "spectrum"
    recorded.mkdir()
    _pytest(sys.executable, tmp_path, f"{protocol.OPTION_SPECTRUM_RUN}={recorded}", "-p", "no:randomly")

    assert read_run_spectrum(recorded, 1 << 20).imported == ("shapes.py", "test_shapes.py")
