"""The run records its own spectrum on Python 3.12 and later (issue 41, ADR 0020): no second pass.

A venv made from pyenv's 3.12 (the machines have one) with pytest and pytest-xdist from the index,
once per session. Each test drives the real server in this process through `connect`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_mcp.testing import connect

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PRICE = """\
class Item:
    def __init__(self, cents):
        self._cents = cents

    @property
    def cents(self):
        return self._cents

    @cents.setter
    def cents(self, value):
        self._cents = value


def gross_price(net):
    return round(net * 1.2, 2)


def label(net):
    return f"{gross_price(net):.2f} EUR"


def net_price(gross):
    return round(gross / 1.2, 2)
"""
TESTS = """\
import pathlib

from shop.price import Item, gross_price, label, net_price


def test_gross():
    with pathlib.Path(__file__).with_name("ran.log").open("a") as log:
        log.write("gross\\n")  # how often the test ran: once, when no second pass repeats it
    assert gross_price(10) == 12.0


def test_label():
    assert label(10) == "12.00 EUR"


def test_net():
    assert net_price(12) == 10.0


def test_item():
    item = Item(3)
    item.cents = 4
    assert item.cents == 4
"""
MORE = """\
from shop.price import gross_price, net_price


def test_gross_{i}():
    assert gross_price({i} * 10) == {i} * 12.0


def test_net_{i}():
    assert net_price({i} * 12) == {i} * 10.0
"""


@pytest.fixture(scope="session")
def python312(tmp_path_factory: pytest.TempPathFactory) -> Path:
    candidates = sorted(Path.home().glob(".pyenv/versions/3.1[2-9]*/bin/python"))
    if not candidates:
        pytest.skip("no Python 3.12 or later under pyenv")
    venv = tmp_path_factory.mktemp("py312") / "venv"
    subprocess.run([str(candidates[0]), "-m", "venv", str(venv)], check=True, timeout=120)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "pytest", "pytest-xdist"],
        check=True,
        timeout=300,
    )
    return venv / "bin" / "python"


def shop(root: Path, files: int = 5) -> Path:
    (root / "shop").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "price.py").write_text(PRICE)
    (root / "tests" / "test_price.py").write_text(TESTS)
    for i in range(1, files + 1):
        (root / "tests" / f"test_more_{i}.py").write_text(MORE.format(i=i))
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    return root


def edit(root: Path, old: str, new: str) -> None:
    price = root / "shop" / "price.py"
    source = price.read_text()
    assert old in source
    price.write_text(source.replace(old, new))


async def run(client: Any, arguments: dict[str, Any] | None = None) -> tuple[dict[str, Any], str]:
    result = await client.call_tool("execute_tests", arguments or {})
    text = "".join(block.text for block in result.content if hasattr(block, "text"))
    assert result.structured_content is not None, text
    return result.structured_content, text


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@e.x", "-c", "user.name=t", *args], cwd=root, check=True)


async def test_the_run_records_every_test_itself_and_nothing_runs_again(tmp_path: Path, python312: Path) -> None:
    root = shop(tmp_path / "project")
    edit(root, "net * 1.2", "net * 1.3")

    async with connect(root=root, python=python312) as client:
        answer, text = await run(client)

    assert (root / "tests" / "ran.log").read_text() == "gross\n", "no second pass repeated the failing test"
    assert answer["localization"]["recorder"] == "sys.monitoring, in the run"
    assert answer["localization"]["repeated"] == 0
    culprit = answer["culprits"][0]
    # The cause of the six wrong values and of test_label's own failure, a symptom apart that runs it too:
    # its evidence is over all the run's failing tests.
    assert (culprit["function"], culprit["failing"], culprit["failing_total"]) == ("gross_price", 7, 7)
    assert answer["summary"]["failed"] == 7
    # Every passing test of the run counts, not only those of the failing tests' modules.
    assert culprit["passing_total"] == answer["summary"]["passed"] == 7
    assert "likely cause: shop/price.py::gross_price" in text.splitlines()[1]


async def test_under_xdist_each_worker_records_and_the_counts_are_the_same(tmp_path: Path, python312: Path) -> None:
    root = shop(tmp_path / "project")
    edit(root, "net * 1.2", "net * 1.3")

    async with connect(root=root, python=python312) as client:
        alone, _ = await run(client)
        (root / "tests" / "ran.log").unlink()
        spread, _ = await run(client, {"workers": 2})

    def evidence(culprit: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(culprit[key] for key in ("function", "failing", "failing_total", "passing", "passing_total"))

    assert [evidence(c) for c in spread["culprits"]] == [evidence(c) for c in alone["culprits"]]
    assert spread["localization"]["recorder"] == "sys.monitoring, in the run"


async def test_without_git_after_a_clean_run_only_the_edited_function_is_changed(
    tmp_path: Path, python312: Path
) -> None:
    root = shop(tmp_path / "project")

    async with connect(root=root, python=python312) as client:
        clean, _ = await run(client)
        edit(root, "gross / 1.2", "gross / 1.3")  # net_price broken; gross_price, label untouched
        broken, text = await run(client)

    assert clean["exit_code"] == 0
    [culprit] = broken["culprits"]
    assert (culprit["function"], culprit["changed"], culprit["changed_since"]) == ("net_price", True, "run")
    assert "changed since its tests last passed" in text
    assert broken["groups"][0]["since"] == {"new": 6}, "the clean run is the earlier run it compares with"


async def test_with_git_a_property_setter_is_told_apart_from_its_changed_getter(
    tmp_path: Path, python312: Path
) -> None:
    root = shop(tmp_path / "project")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "green")
    edit(root, "        return self._cents\n", "        return self._cents + 1\n")  # the getter only

    async with connect(root=root, python=python312) as client:
        answer, _ = await run(client)

    changed = [c["function"] for c in answer["culprits"] if c["changed"]]
    assert changed == ["Item.cents"]
    assert answer["groups"][0]["since"] == {"unknown": 1}, "the server's first run of this project"


async def test_the_first_run_of_a_project_has_no_earlier_run_and_says_so(tmp_path: Path, python312: Path) -> None:
    root = shop(tmp_path / "project", files=1)
    edit(root, "net * 1.2", "net * 1.3")

    async with connect(root=root, python=python312) as client:
        _, text = await run(client)

    assert "newly fail" not in text
    assert "no earlier run" in text


async def test_a_passing_run_names_the_edited_functions_no_test_of_it_entered(tmp_path: Path, python312: Path) -> None:
    root = shop(tmp_path / "project")

    async with connect(root=root, python=python312) as client:
        await run(client)
        edit(root, "round(gross / 1.2, 2)", "round(gross / 1.2, 3)")  # net_price, which test_gross_1 never runs
        answer, text = await run(client, {"node_ids": ["tests/test_more_1.py::test_gross_1"]})
        everything, _ = await run(client)

    assert answer["exit_code"] == 0
    assert answer["changed_untested"] == ["shop/price.py::net_price"]
    assert "changed, run by no test: shop/price.py::net_price" in text
    assert "changed_untested" not in everything, "the run before recorded the edit: it is no change since"


RATES = """\
class Rates:
    def __init__(self):
        self.vat = 1.2


RATES = Rates()  # built as the module is imported, before any test
"""
RATE_TESTS = """\
from shop.rates import RATES


def test_vat():
    assert RATES.vat == 1.2


def test_vat_is_a_rate():
    assert 1 < RATES.vat < 2
"""


async def test_an_edit_of_code_run_as_the_tests_are_collected_is_named_not_called_run_by_no_test(
    tmp_path: Path, python312: Path
) -> None:
    """A constructor called at module level runs as the test modules are imported: no test enters it, yet
    every test ran after it. Edited after a clean run, it is the failures' likely cause, said to have run
    before every test; it was "changed, run by no test" before the run recorded collection."""
    root = shop(tmp_path / "project", files=1)
    (root / "shop" / "rates.py").write_text(RATES)
    (root / "tests" / "test_rates.py").write_text(RATE_TESTS)

    async with connect(root=root, python=python312) as client:
        clean, _ = await run(client)
        rates = root / "shop" / "rates.py"
        rates.write_text(RATES.replace("self.vat = 1.2", "self.vat = 12"))
        broken, text = await run(client)

    assert clean["exit_code"] == 0
    assert broken["summary"]["failed"] == 2
    culprit = broken["culprits"][0]
    assert (culprit["file"], culprit["function"]) == ("shop/rates.py", "Rates.__init__")
    assert culprit["changed_since"] == "run"
    assert culprit["before_tests"] is True
    assert "run before every test, as they were collected; changed since its tests last passed" in text
    assert "changed_untested" not in broken


CLI = """\
import pathlib
import subprocess
import sys


def test_cli():
    root = pathlib.Path(__file__).parents[1]
    code = "from shop.price import net_price; print(net_price(12))"
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert done.stdout == "10.0\\n", done.stderr
"""


async def test_a_test_whose_process_runs_the_edited_code_newly_fails_and_is_not_suspect_flaky(
    tmp_path: Path, python312: Path
) -> None:
    """A CLI's test through a subprocess enters no project code in its own process: the run records that
    it started a process, so an edit its subprocess runs does not make it "suspect flaky" (nothing it
    ran changed, as far as any record shows); it newly fails, as it does, in the group of the edit's
    other failures (the process ran the edited code too)."""
    root = shop(tmp_path / "project", files=1)
    (root / "tests" / "test_cli.py").write_text(CLI)

    async with connect(root=root, python=python312) as client:
        clean, _ = await run(client)
        edit(root, "gross / 1.2", "gross / 1.3")
        broken, text = await run(client)

    assert clean["exit_code"] == 0
    (group,) = [group for group in broken["groups"] if "tests/test_cli.py::test_cli" in members(group)]
    assert group["since"] == {"new": group["count"]}
    assert "test_cli.py::test_cli is suspect flaky" not in text


FLAG = """\
import pathlib

from shop.price import gross_price


def test_flag():
    assert pathlib.Path(__file__).with_name("flag.txt").read_text() == "on"


def test_edited():
    assert gross_price(10) == 12.0
"""


async def suspect_flaky_then_new(root: Path, python: Path) -> tuple[dict[str, Any], str]:
    """A clean run; then a data file flips one test (no code it runs changed) and an edit of its own
    code breaks another: the first is suspect flaky, the second newly fails."""
    shop(root, files=1)
    (root / "tests" / "test_flag.py").write_text(FLAG)
    (root / "tests" / "flag.txt").write_text("on")
    async with connect(root=root, python=python) as client:
        clean, _ = await run(client)
        assert clean["exit_code"] == 0
        (root / "tests" / "flag.txt").write_text("off")
        test = root / "tests" / "test_flag.py"
        test.write_text(test.read_text().replace("== 12.0", "== 13.0"))
        return await run(client)


def members(group: dict[str, Any]) -> list[str]:
    """A group's node ids as its answer lists them (every one, in a group as small as these)."""
    assert not group.get("omitted_members")
    return list(group["members"])


def labels(answer: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {group["representative"]["node_id"].split("::")[1]: group["since"] for group in answer["groups"]}


async def test_a_test_that_passed_and_fails_while_nothing_it_runs_changed_is_suspect_flaky(
    tmp_path: Path, python312: Path
) -> None:
    answer, text = await suspect_flaky_then_new(tmp_path / "project", python312)

    assert labels(answer) == {"test_flag": {"suspect_flaky": 1}, "test_edited": {"new": 1}}
    assert "is suspect flaky (passed last run; nothing it runs changed)" in text


async def test_a_second_pass_tells_a_suspect_flaky_test_too(tmp_path: Path, json_report_python: Path) -> None:
    # Python 3.11 and earlier: the failing tests run again in a second pass, which records them. The
    # linked venv runs on this suite's interpreter.
    answer, _ = await suspect_flaky_then_new(tmp_path / "project", json_report_python)

    assert answer["localization"]["recorder"] == "sys.setprofile"
    assert labels(answer) == {"test_flag": {"suspect_flaky": 1}, "test_edited": {"new": 1}}


async def test_localize_0_arms_no_recorder_in_the_run(
    tmp_path: Path, python312: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "test_tools.py").write_text(
        "import sys\n\n\ndef test_no_recorder():\n"
        "    assert 'pytest-mcp' not in [sys.monitoring.get_tool(tool) for tool in range(6)]\n"
    )

    monkeypatch.setenv("PYTEST_MCP_LOCALIZE", "0")
    async with connect(root=root, python=python312) as client:
        off, _ = await run(client)
    monkeypatch.delenv("PYTEST_MCP_LOCALIZE")
    async with connect(root=root, python=python312) as client:
        on, _ = await run(client)

    assert off["exit_code"] == 0, "nothing records what the tests enter: no culprits will be named"
    assert on["exit_code"] == 1, "by default the run records itself"


CONSTANT_AND_CACHE = """\
import functools

RATE = 1.2


@functools.lru_cache(maxsize=None)
def rate_of(country):
    return {"de": 1.19, "fr": 1.2}[country]
"""
READS_THEM = """\
from shop import rates


def test_rate():
    assert round(10 * rates.RATE, 2) == 12.0


def test_country():
    assert rates.rate_of("de") == 1.19
"""


@pytest.mark.parametrize(
    ("old", "new", "failing"),
    [
        pytest.param("RATE = 1.2", "RATE = 1.3", "test_rate", id="a-module-constant"),
        pytest.param('"de": 1.19', '"de": 1.16', "test_country", id="a-cached-function"),
    ],
)
async def test_a_test_that_ran_changed_code_without_entering_a_function_is_not_suspect_flaky(
    tmp_path: Path, python312: Path, old: str, new: str, failing: str
) -> None:
    """A constant is read and a cache answers without entering any function: no record shows that the
    test ran the change. It newly fails; it is not "suspect flaky (nothing it runs changed)"."""
    root = shop(tmp_path / "project", files=1)
    (root / "shop" / "rates.py").write_text(CONSTANT_AND_CACHE)
    (root / "tests" / "test_rates.py").write_text(READS_THEM)
    (root / "tests" / "test_a_warm.py").write_text(
        "from shop import rates\n\n\ndef test_warm():\n    rates.rate_of('de')\n"
    )

    async with connect(root=root, python=python312) as client:
        clean, _ = await run(client)
        rates = root / "shop" / "rates.py"
        rates.write_text(rates.read_text().replace(old, new))
        broken, text = await run(client)

    assert clean["exit_code"] == 0
    assert labels(broken) == {failing: {"new": 1}}
    assert "suspect flaky" not in text


UNSEEN = """\
import functools


@functools.lru_cache(maxsize=None)
def rate_of(country):
    return {"de": 1.19, "fr": 1.2}[country]


def shown(rate):
    return f"{rate:.2f}"
"""
UNSEEN_TESTS = {
    "test_a_warm.py": "from shop import rates\n\n\ndef test_warm():\n    assert rates.rate_of('de') > 1\n",
    "test_cli.py": """\
import subprocess
import sys


def test_cli():
    code = "from shop import rates; print(rates.shown(rates.rate_of('de')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "1.19\\n"
""",
    "test_rates.py": """\
from shop import rates


def test_country():
    assert rates.shown(rates.rate_of("de")) == "1.19"


def test_shown():
    assert rates.shown(1.2) == "1.20"
""",
}


async def test_failures_that_met_a_change_unrecorded_name_the_changed_function(tmp_path: Path, python312: Path) -> None:
    """After an edit of a cached lookup, one test gets the cache's answer (an earlier test filled it) and one
    runs it in a subprocess: neither is recorded entering it, each entered no other changed code, and the
    changed lookup is named their cause, not the unchanged formatter the first did enter."""
    root = shop(tmp_path / "project", files=1)
    (root / "shop" / "rates.py").write_text(UNSEEN)
    for name, text in UNSEEN_TESTS.items():
        (root / "tests" / name).write_text(text)

    async with connect(root=root, python=python312) as client:
        clean, _ = await run(client)
        rates = root / "shop" / "rates.py"
        rates.write_text(rates.read_text().replace('"de": 1.19', '"de": 1.16'))
        broken, text = await run(client)

    assert clean["exit_code"] == 0
    assert broken["summary"]["failed"] == 2
    culprit = broken["culprits"][0]
    assert (culprit["function"], culprit["failing"], culprit["changed"]) == ("rate_of", 2, True), text
    assert {group["culprit"]["function"] for group in broken["groups"]} == {"rate_of"}


VERSION = """\
def parse(text):
    number, _, pre = text.partition("-")
    return tuple(int(part) for part in number.split(".")), pre


def compare(a, b):
    (numbers_a, pre_a), (numbers_b, pre_b) = parse(a), parse(b)
    if numbers_a != numbers_b:
        return -1 if numbers_a < numbers_b else 1
    if not pre_a or not pre_b:
        return (not pre_a) - (not pre_b)
    return -1 if pre_a > pre_b else (1 if pre_a < pre_b else 0)


def newest(versions):
    best = versions[0]
    for version in versions[1:]:
        if compare(version, best) > 0:
            best = version
    return best
"""
VERSION_TESTS = """\
import pytest

from shop.version import compare, newest


@pytest.mark.parametrize(
    "a, b, want",
    [
        ("1.0", "2.0", -1),
        ("2.0", "1.0", 1),
        ("1.2", "1.2", 0),
        ("1.0-a", "1.0", -1),
        ("1.0", "1.0-a", 1),
        ("3.1", "3.2", -1),
    ],
)
def test_compare(a, b, want):
    assert compare(a, b) == want


def test_newest():
    assert newest(["1.0", "2.0", "1.5"]) == "2.0"


@pytest.mark.parametrize("versions, want", [(["1.0-a", "1.0-b"], "1.0-b"), (["1.0-c", "1.0-b"], "1.0-c")])
def test_newest_prerelease(versions, want):
    assert newest(versions) == want
"""


async def test_the_failures_alone_name_the_function_by_the_line_only_they_ran(tmp_path: Path, python312: Path) -> None:
    """`compare` swaps its pre-releases' order: every passing test enters it, none runs its last line. By their
    functions' entries, `newest`, which one passing test runs, would be the likelier cause; by their lines, the
    line only the failing tests ran names `compare`."""
    root = shop(tmp_path / "project", files=0)
    (root / "shop" / "version.py").write_text(VERSION)
    (root / "tests" / "test_version.py").write_text(VERSION_TESTS)

    async with connect(root=root, python=python312) as client:
        answer, text = await run(client)

    assert answer["summary"]["failed"] == 2
    top = answer["culprits"][0]
    assert (top["function"], top["failing"], top["failing_total"], top["passing"], top["score"]) == (
        "compare",
        2,
        2,
        0,
        1.0,
    )
    assert len(answer["groups"]) == 1
    assert top["line"] == 12  # its last line, which swaps the pre-releases' order
    assert "likely cause: shop/version.py::compare (lines 6-12), line 12: run by both failing" in text, text


async def test_localize_lines_off_records_functions_only_and_names_no_line(
    tmp_path: Path, python312: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--localize-lines off` (here its variable) trades the lines for a cheaper run: the same project is ranked by
    its functions' entries, and `newest`, which one passing test runs, comes first, with no line named."""
    monkeypatch.setenv("PYTEST_MCP_LOCALIZE_LINES", "off")
    root = shop(tmp_path / "project", files=0)
    (root / "shop" / "version.py").write_text(VERSION)
    (root / "tests" / "test_version.py").write_text(VERSION_TESTS)

    async with connect(root=root, python=python312) as client:
        answer, _ = await run(client)

    top = answer["culprits"][0]
    assert (top["function"], top["failing"], top["passing"], "line" in top) == ("newest", 2, 1, False)
