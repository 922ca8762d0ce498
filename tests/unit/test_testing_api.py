"""The public surface of `pytest_mcp.testing`: its names, its docs, and a plugin that loads only on request."""

from __future__ import annotations

import inspect
import pydoc
import subprocess
import sys
from importlib.metadata import distribution
from pathlib import Path
from types import ModuleType

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
RUNNER_API = [
    "script",
    "fail_with",
    "clear_failures",
    "install",
    "script_coverage",
    "script_environment",
    "hold",
    "release",
    "trace",
    "define",
    "change",
    "from_dict",
    "from_recording",
    "to_recording",
]
# Public names that are not API: the `from __future__` directive and the plugin's hook.
NOT_API = {"annotations", "pytest_configure"}


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
    assert len(description.splitlines()) < 60


def test_a_typed_test_file_using_the_api_passes_mypy_strict(tmp_path: Path) -> None:
    """tests/unit/typed_api_usage.py, checked as a user's mypy sees the installed package: strict, no plugins."""
    (tmp_path / "mypy.ini").write_text("[mypy]\n")
    checked = subprocess.run(
        [
            str(Path(sys.executable).with_name("mypy")),
            "--strict",
            "--config-file",
            str(tmp_path / "mypy.ini"),
            "--cache-dir",
            str(tmp_path / "cache"),
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
