"""Nothing an agent sends can become more than the tests it names.

Every case goes through the real console script over stdio. Each must be refused with
-32602 naming the field, load no plugin or conftest, and start no process at all.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from mcp import Client, MCPError

from tests.answers import ToolErrorSeen, call_error
from tests.security.trapped_project import TrappedProject

pytestmark = pytest.mark.anyio

E = "execute_tests"
D = "discover_tests"

HOSTILE: list[tuple[str, str, dict[str, Any], str]] = [
    # Option-looking node ids
    ("version-flag", E, {"node_ids": ["--version"]}, "node_ids"),
    ("plugin-with-space", E, {"node_ids": ["-p x"]}, "node_ids"),
    ("plugin-attached", E, {"node_ids": ["-pX"]}, "node_ids"),
    ("plugin-canary", E, {"node_ids": ["-pevil_canary_plugin"]}, "node_ids"),
    ("plugin-as-two-items", E, {"node_ids": ["-p", "evil_canary_plugin"]}, "node_ids"),
    ("config-file", E, {"node_ids": ["-c/etc/passwd"]}, "node_ids"),
    ("rootdir", E, {"node_ids": ["--rootdir=/"]}, "node_ids"),
    ("confcutdir", E, {"node_ids": ["--confcutdir=/"]}, "node_ids"),
    ("override-ini", E, {"node_ids": ["-o", "addopts=-pevil_canary_plugin"]}, "node_ids"),
    ("valid-then-option", E, {"node_ids": ["test_ok.py", "--co"]}, "node_ids"),
    # Paths outside the root
    ("dotdot", E, {"node_ids": ["../outside/test_outside.py"]}, "node_ids"),
    ("dotdot-inside-path", E, {"node_ids": ["sub/../../outside::test_outside"]}, "node_ids"),
    ("absolute", E, {"node_ids": ["/etc/passwd"]}, "node_ids"),
    ("absolute-tmp", E, {"node_ids": ["/tmp"]}, "node_ids"),
    ("symlink-escape-file", E, {"node_ids": ["escape/test_outside.py"]}, "node_ids"),
    ("symlink-escape-dir", E, {"node_ids": ["escape"]}, "node_ids"),
    ("windows-drive", E, {"node_ids": ["C:/Windows"]}, "node_ids"),
    # Control characters and invalid text
    ("nul", E, {"node_ids": ["test_ok.py\x00"]}, "node_ids"),
    ("newline-smuggles-option", E, {"node_ids": ["test_ok.py\n-pevil_canary_plugin"]}, "node_ids"),
    ("escape-sequence", E, {"node_ids": ["\x1b[2Jtest_ok.py"]}, "node_ids"),
    ("carriage-return", E, {"node_ids": ["test_ok.py\r"]}, "node_ids"),
    ("unicode-line-separator", E, {"node_ids": ["test_ok.py\u2028"]}, "node_ids"),
    ("empty-id", E, {"node_ids": [""]}, "node_ids"),
    ("blank-id", E, {"node_ids": ["   "]}, "node_ids"),
    # Sizes
    ("oversized-id", E, {"node_ids": ["t" * 3000]}, "node_ids"),
    ("too-many-ids", E, {"node_ids": ["test_ok.py"] * 501}, "node_ids"),
    ("oversized-markers", E, {"markers": "slow or " * 200}, "markers"),
    ("oversized-keywords", E, {"keywords": "k" * 1001}, "keywords"),
    # Wrong types
    ("ids-as-string", E, {"node_ids": "test_ok.py"}, "node_ids"),
    ("ids-of-numbers", E, {"node_ids": [1, 2]}, "node_ids"),
    ("ids-null", E, {"node_ids": None}, "node_ids"),
    ("markers-number", E, {"markers": 123}, "markers"),
    ("keywords-list", E, {"keywords": ["a"]}, "keywords"),
    ("verbosity-string", E, {"verbosity": "2"}, "verbosity"),
    ("failfast-string", E, {"failfast": "true"}, "failfast"),
    ("show-capture-number", E, {"show_capture": 1}, "show_capture"),
    ("timeout-float", E, {"timeout": 1.5}, "timeout"),
    ("detail-unknown", E, {"detail": "verbose"}, "detail"),
    # Expressions that look like options
    ("markers-plugin", E, {"markers": "-pevil_canary_plugin"}, "markers"),
    ("markers-version", E, {"markers": "--version"}, "markers"),
    ("keywords-plugin", E, {"keywords": "-pevil_canary_plugin"}, "keywords"),
    ("markers-newline", E, {"markers": "slow\n-pevil_canary_plugin"}, "markers"),
    ("keywords-empty", E, {"keywords": ""}, "keywords"),
    # Numbers out of bounds
    ("maxfail-zero", E, {"maxfail": 0}, "maxfail"),
    ("maxfail-negative", E, {"maxfail": -1}, "maxfail"),
    ("maxfail-huge", E, {"maxfail": 10**30}, "maxfail"),
    ("timeout-zero", E, {"timeout": 0}, "timeout"),
    ("timeout-negative", E, {"timeout": -5}, "timeout"),
    ("timeout-above-maximum", E, {"timeout": 61}, "timeout"),
    ("timeout-huge", E, {"timeout": 10**12}, "timeout"),
    ("verbosity-high", E, {"verbosity": 3}, "verbosity"),
    ("verbosity-low", E, {"verbosity": -3}, "verbosity"),
    ("maxfail-with-failfast", E, {"maxfail": 2, "failfast": True}, "failfast"),
    # Unknown parameters
    ("extra-args", E, {"extra_args": ["-pevil_canary_plugin"]}, "extra_args"),
    ("env", E, {"env": {"PYTEST_ADDOPTS": "-pevil_canary_plugin"}}, "env"),
    ("rootdir-param", E, {"rootdir": "/"}, "rootdir"),
    ("plugins-param", E, {"plugins": ["evil_canary_plugin"]}, "plugins"),
    ("python-param", E, {"python": "/bin/sh"}, "python"),
    ("huge-parameter-name", E, {"x" * 10_000: 1}, "x" * 64),
    # Response files: pytest 8.2+ reads `@FILE` as more arguments, after `--` too
    ("response-file-passwd", E, {"node_ids": ["@/etc/passwd"]}, "node_ids"),
    ("response-file-environ", E, {"node_ids": ["@/proc/self/environ"]}, "node_ids"),
    ("response-file-in-root", E, {"node_ids": ["@list.txt"]}, "node_ids"),
    ("response-file-zero", E, {"node_ids": ["@/dev/zero"]}, "node_ids"),
    ("response-file-fifo", E, {"node_ids": ["@fifo"]}, "node_ids"),
    ("response-file-after-a-valid-id", E, {"node_ids": ["test_ok.py", "@list.txt"]}, "node_ids"),
    ("response-file-node", E, {"node_ids": ["@list.txt::test_x"]}, "node_ids"),
    ("response-file-discover", D, {"path": "@list.txt"}, "path"),
    ("response-file-discover-environ", D, {"path": "@/proc/self/environ"}, "path"),
    ("response-file-keywords", E, {"keywords": "@list.txt"}, "keywords"),
    ("response-file-markers", D, {"markers": "@list.txt"}, "markers"),
    # How pytest reads a path, not how Path.resolve() does
    ("symlink-then-dotdot", E, {"node_ids": ["deep/../../../outside/test_outside.py"]}, "node_ids"),
    ("symlink-then-dotdot-discover", D, {"path": "deep/../../../outside"}, "path"),
    ("bracket-cut-leaves-root", E, {"node_ids": ["../outside[/../project/test_ok.py"]}, "node_ids"),
    ("node-part-climbs-back", E, {"node_ids": ["../outside/test_outside.py::x/../../project"]}, "node_ids"),
    ("equals-keywords", E, {"keywords": "=test_ok"}, "keywords"),
    ("equals-markers", E, {"markers": "=slow"}, "markers"),
    # Run controls
    ("workers-zero", E, {"workers": 0}, "workers"),
    ("workers-too-many", E, {"workers": 65}, "workers"),
    ("workers-bool", E, {"workers": True}, "workers"),
    ("workers-word", E, {"workers": "all"}, "workers"),
    ("coverage-string", E, {"coverage": "yes"}, "coverage"),
    ("last-failed-number", E, {"last_failed": 1}, "last_failed"),
    ("detail-upper", E, {"detail": "ALL"}, "detail"),
    ("million-node-ids", E, {"node_ids": [0] * 1_000_000}, "node_ids"),
    # discover_tests
    ("discover-option", D, {"path": "--collect-only"}, "path"),
    ("discover-plugin", D, {"path": "-pevil_canary_plugin"}, "path"),
    ("discover-dotdot", D, {"path": "../outside"}, "path"),
    ("discover-absolute", D, {"path": "/etc"}, "path"),
    ("discover-symlink", D, {"path": "escape"}, "path"),
    ("discover-nul", D, {"path": "test_ok.py\x00"}, "path"),
    ("discover-number", D, {"path": 5}, "path"),
    ("discover-markers-plugin", D, {"markers": "-pevil_canary_plugin"}, "markers"),
    ("discover-keywords-oversized", D, {"keywords": "k" * 5000}, "keywords"),
    ("discover-unknown", D, {"node_ids": ["test_ok.py"]}, "node_ids"),
    ("discover-path-list", D, {"path": ["tests"]}, "path"),
    ("environment-with-arguments", "check_environment", {"python": "/bin/sh"}, "python"),
    # Unknown tools
    ("unknown-tool", "run_shell", {"command": "id"}, "name"),
    ("unknown-tool-empty", "", {}, "name"),
    ("unknown-tool-case", "EXECUTE_TESTS", {}, "name"),
    ("unknown-tool-trailing-space", "execute_tests ", {}, "name"),
]


def test_the_table_is_large_enough_and_has_unique_ids() -> None:
    ids = [case[0] for case in HOSTILE]
    assert len(ids) >= 100
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize(("tool", "arguments", "field"), [case[1:] for case in HOSTILE], ids=[c[0] for c in HOSTILE])
async def test_hostile_input_is_refused_before_anything_runs(
    session: Client, trapped: TrappedProject, tool: str, arguments: dict[str, Any], field: str
) -> None:
    trapped.reset()

    if field == "name":  # an unknown tool: a protocol error, not a tool's
        with pytest.raises(MCPError) as caught:
            await session.call_tool(tool, arguments)
        error = ToolErrorSeen(caught.value.code, "unknown_tool", caught.value.message, caught.value.error.data)
    else:
        error = await call_error(session, tool, arguments)

    assert error.code == -32602
    assert re.search(rf"(^|[ ;]){re.escape(field)}(\[\d+\])?:", error.message), error.message
    assert field in [entry["field"].split("[")[0] for entry in error.data["errors"]]
    assert len(error.message) < 4000
    assert trapped.tripped() == [], "a canary fired or a process was spawned"


async def test_the_traps_fire_for_a_real_run(session: Client, trapped: TrappedProject) -> None:
    """Guards the table above: without this, a broken trap would make every case pass."""
    trapped.reset()

    result = await session.call_tool("execute_tests", {"node_ids": ["test_ok.py"]})

    assert result.structured_content is not None
    assert result.structured_content["summary"]["passed"] == 1
    assert trapped.tripped() == ["STARTED", "SPAWNED"]
    trapped.reset()


def test_the_plugin_canary_fires_when_pytest_loads_it(trapped: TrappedProject) -> None:
    import subprocess
    import sys

    trapped.reset()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "evil_canary_plugin", "-p", "no:cacheprovider", "test_ok.py"],
        cwd=trapped.root,
        capture_output=True,
        check=False,
    )

    assert "CANARY" in trapped.tripped()
    trapped.reset()
