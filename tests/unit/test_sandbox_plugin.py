"""The sandbox's part of a run (`_pytest_mcp_sandbox`), in-process: what its audit hook notes, and what it costs."""

from __future__ import annotations

import errno
import inspect
import socket
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

PLUGIN = resources.files("pytest_mcp.adapters.pytest_subprocess").joinpath("_plugin")

Hook = Callable[[str, tuple[Any, ...]], None]


def _load(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(PLUGIN))  # as in a run: the protocol lies beside the plugin
    module = ModuleType("_pytest_mcp_sandbox")
    source = PLUGIN.joinpath("_pytest_mcp_sandbox.py").read_text()
    exec(compile(source, "_pytest_mcp_sandbox.py", "exec"), module.__dict__)
    return module


def _causes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Any, list[Hook]]:
    """The plugin's SandboxCauses for a loopback-only run, and the audit hooks it added (caught, not added)."""
    hooks: list[Hook] = []
    monkeypatch.setattr(sys, "addaudithook", hooks.append)
    causes = _load(monkeypatch).SandboxCauses(SimpleNamespace(rootpath=tmp_path), "loopback", "512")
    return causes, hooks


def test_the_audit_hook_is_a_plain_function(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Every audit event of the run calls it, about 20 a test, and CPython looks `__cantrace__` up on
    # the hook each time: on a bound method that lookup raises and clears an AttributeError, which
    # cost 2.4 times a function's instructions an event, most of what a clean sandboxed run cost.
    _, hooks = _causes(monkeypatch, tmp_path)

    assert len(hooks) == 1
    assert inspect.isfunction(hooks[0]), hooks[0]


def test_the_hook_notes_the_address_a_refused_connection_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    causes, hooks = _causes(monkeypatch, tmp_path)
    hooks[0]("object.__getattr__", (causes, "__code__"))
    hooks[0]("socket.connect", (socket.socket, ("127.0.0.1", 5432)))
    hooks[0]("builtins.id", (1,))

    refused = ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")

    assert causes.cause(OSError("wrapped")) is None
    assert causes.cause(refused) == "connect 127.0.0.1:5432; --sandbox-network allows it"
    hooks[0]("socket.getaddrinfo", ("db.internal", 5432, 0, 0, 0))
    assert causes.cause(socket.gaierror(-2, "Name or service not known")) == (
        "DNS lookup db.internal; --sandbox-network allows it"
    )
