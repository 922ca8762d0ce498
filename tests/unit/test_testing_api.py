"""The public surface of `pytest_mcp.testing`: its names, its docs, and a plugin that loads only on request."""

from __future__ import annotations

import inspect
from importlib.metadata import distribution
from types import ModuleType

import pytest_mcp.testing as testing

EXPECTED_ALL = [
    "RECORDING_FORMAT",
    "RECORDING_VERSION",
    "CollectSpec",
    "FailureKind",
    "FakeTestRunner",
    "RunSpec",
    "ScriptError",
    "ScriptedTest",
    "connect",
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
    for method in ("script", "fail_with", "from_dict", "from_recording", "to_recording"):
        assert (getattr(testing.FakeTestRunner, method).__doc__ or "").strip(), method


def test_the_package_declares_no_pytest11_entry_point() -> None:
    groups = {entry.group for entry in distribution("mcp-server-pytest").entry_points}

    assert "pytest11" not in groups
