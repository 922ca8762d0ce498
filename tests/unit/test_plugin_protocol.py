"""The reporter's options and events have one source, _pytest_mcp_protocol, on both sides."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol

PLUGIN = resources.files("pytest_mcp.adapters.pytest_subprocess").joinpath("_plugin")


def test_the_reporter_declares_every_option_of_the_protocol_and_no_other(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(PLUGIN))  # as in a run: the protocol lies beside the reporter
    declared: list[str] = []

    class Group:
        def addoption(self, name: str, **_: object) -> None:
            declared.append(name)

    class Parser:
        def getgroup(self, *_: object) -> Group:
            return Group()

    # The testmon part: affected runs only; the spectrum: a second pass only (ADR 0020); the sandbox
    # part: sandboxed runs only.
    for plugin in (
        "_pytest_mcp_reporter.py",
        "_pytest_mcp_testmon.py",
        "_pytest_mcp_spectrum.py",
        "_pytest_mcp_sandbox.py",
    ):
        namespace: dict[str, object] = {}
        exec(compile(PLUGIN.joinpath(plugin).read_text(), plugin, "exec"), namespace)
        namespace["pytest_addoption"](Parser())  # type: ignore[operator]

    options = [value for name, value in vars(protocol).items() if name.startswith("OPTION_")]
    assert sorted(declared) == sorted(options)


def test_no_option_name_or_event_is_spelled_out_anywhere_but_the_protocol() -> None:
    plugin_files = (
        "_pytest_mcp_reporter.py",
        "_pytest_mcp_guard.py",
        "_pytest_mcp_bootstrap.py",
        "_pytest_mcp_testmon.py",
        "_pytest_mcp_spectrum.py",
        "_pytest_mcp_sandbox.py",
    )
    sources = {name: PLUGIN.joinpath(name).read_text() for name in plugin_files}
    server = resources.files("pytest_mcp.adapters.pytest_subprocess")
    readers = ("runner.py", "report.py", "testmon_data.py", "spectrum.py", "sandbox.py")
    sources |= {name: server.joinpath(name).read_text() for name in readers}

    for name, text in sources.items():
        assert not re.search(r"[\"']--pytest-mcp-", text), f"{name} spells out an option"
        assert not re.search(r"[\"']e[\"']\s*:", text), f"{name} spells out the event key"
        assert not re.search(r"\b8[67]\b", text), f"{name} spells out an exit code"
