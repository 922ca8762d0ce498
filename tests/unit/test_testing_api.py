"""The public surface of `pytest_mcp.testing`: its names, its docs, and a plugin that loads only on request."""

from __future__ import annotations

import builtins
import inspect
import pydoc
import re
import subprocess
import sys
from importlib.metadata import distribution
from pathlib import Path
from types import FunctionType, ModuleType

import pytest

import pytest_mcp.testing as testing

EXPECTED_ALL = [
    "RECORDING_FORMAT",
    "RECORDING_VERSION",
    "CollectSpec",
    "FailureGroup",
    "FailureKind",
    "FakeTestRunner",
    "Outcome",
    "Phase",
    "RunSpec",
    "ScriptError",
    "ScriptedTest",
    "SkipReason",
    "connect",
]
# The TestRunner port's methods are what the server calls, not what a user scripts with.
PORT_METHODS = {"run", "collect", "localize"}
RUNNER_API = sorted(
    name
    for name, value in vars(testing.FakeTestRunner).items()
    if not name.startswith("_") and name not in PORT_METHODS and isinstance(value, FunctionType | classmethod)
)
"""Every public method of the runner, read from the class: a method added later is held to its docs too."""
RUNNER_PROPERTIES = sorted(
    name for name, value in vars(testing.FakeTestRunner).items() if isinstance(value, property) and name[0] != "_"
)
# Public names that are not API: the `from __future__` directive and the plugin's hook.
NOT_API = {"annotations", "pytest_configure"}
FIXTURES = ["pytest_mcp_runner", "pytest_mcp_client"]
# Names the docs may mention that are not ours to export: a library, pytest's matcher, the port the fake fills.
NOT_OURS = {"AnyIO", "KeywordMatcher", "TestRunner"}


def test_all_is_exactly_the_documented_public_surface() -> None:
    assert testing.__all__ == EXPECTED_ALL


def test_every_public_name_is_in_all_and_every_name_in_all_exists() -> None:
    public = {
        name for name, value in vars(testing).items() if not name.startswith("_") and not isinstance(value, ModuleType)
    }

    assert public - NOT_API == set(testing.__all__)
    assert all(hasattr(testing, name) for name in testing.__all__)


def test_every_class_and_function_in_all_has_a_docstring() -> None:
    for name in testing.__all__:
        value = getattr(testing, name)
        if isinstance(value, type) or inspect.isfunction(value):
            assert (value.__doc__ or "").strip(), f"{name} has no docstring"
    for method in RUNNER_API:
        assert (getattr(testing.FakeTestRunner, method).__doc__ or "").strip(), method


def test_help_leads_with_the_api_before_any_inherited_method() -> None:
    """`help(pytest_mcp.testing)` opens with every public name and every method of the runner."""
    text = pydoc.render_doc(testing, renderer=pydoc.plaintext)
    lead = text[: text.index("Methods inherited from")]
    description = lead[: lead.index("PACKAGE CONTENTS")]

    assert all(name in description for name in [*EXPECTED_ALL, *(f".{method}(" for method in RUNNER_API)])
    assert all(f".{name}" in description for name in ["calls", *RUNNER_PROPERTIES])
    assert len(description.splitlines()) < 80


def test_help_names_every_keyword_of_every_runner_method() -> None:
    """A parameter left out of help() is one an agent developer never hears of (`containment=` was)."""
    description = testing.__doc__ or ""
    for method in ["__init__", *RUNNER_API]:
        parameters = inspect.signature(getattr(testing.FakeTestRunner, method)).parameters
        for name in parameters:
            if name not in ("self", "cls"):
                assert re.search(rf"\b{name}\b", description), f"help() leaves out {method}'s {name}"


def test_the_docs_name_only_what_they_export() -> None:
    """A class the docs point to (`see AffectedData`) must be importable from pytest_mcp.testing."""
    runner = testing.FakeTestRunner
    docs = [testing.__doc__, runner.__doc__, *(getattr(runner, name).__doc__ for name in [*RUNNER_API, "__init__"])]
    docs += [getattr(testing, name).__doc__ for name in testing.__all__]
    named = {word for doc in docs for word in re.findall(r"\b[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+\b", doc or "")}
    assert sorted(named - set(testing.__all__) - NOT_OURS - set(dir(builtins))) == []


def test_help_describes_each_fixture_and_pytest_lists_each_with_its_docstring(tmp_path: Path) -> None:
    description = testing.__doc__ or ""
    for fixture in FIXTURES:
        assert re.search(rf"^{fixture}\n    \S", description, flags=re.M), f"help() does not describe {fixture}"
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "pytest_mcp.testing", "--fixtures", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    ).stdout
    for fixture in FIXTURES:
        documented = re.search(rf"^{fixture} -- .*\n    (?P<doc>\S.*)$", listed, flags=re.M)
        assert documented, f"pytest --fixtures gives {fixture} no docstring:\n{listed}"


def test_help_says_how_a_group_pages_and_that_page_sizes_vary() -> None:
    description = " ".join((testing.__doc__ or "").split())
    assert "`group`" in description
    assert "`offset`" in description
    assert "page sizes vary" in description


def test_a_typed_test_file_using_the_api_passes_mypy_strict(tmp_path: Path, pytestconfig: pytest.Config) -> None:
    """tests/unit/typed_api_usage.py, checked as a user's mypy sees the installed package: strict, no plugins."""
    # mypy's cache stays in pytest's cache directory between runs, as a user's stays in theirs: a cold
    # one costs about 13 s of CPU (mcp, pydantic, pytest, anyio analysed again), a warm one 0.5 s.
    # mypy rechecks every module whose source or options changed, so an edit to pytest_mcp is seen.
    provider = getattr(pytestconfig, "cache", None)  # None under -p no:cacheprovider
    cache = provider.mkdir("mypy-typed-api") if provider is not None else tmp_path / "cache"
    (tmp_path / "mypy.ini").write_text("[mypy]\n")
    checked = subprocess.run(
        [
            str(Path(sys.executable).with_name("mypy")),
            "--strict",
            "--config-file",
            str(tmp_path / "mypy.ini"),
            "--cache-dir",
            str(cache),
            str(Path(__file__).with_name("typed_api_usage.py")),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Success: no issues found in 1 source file" in checked.stdout


def test_the_package_declares_no_pytest11_entry_point() -> None:
    groups = {entry.group for entry in distribution("mcp-server-pytest").entry_points}

    assert "pytest11" not in groups
