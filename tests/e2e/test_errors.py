"""Errors reach the client with the documented codes and telling messages.

Invalid arguments and runs without a trustworthy result are `isError` results (ADR 0011), or
JSON-RPC errors with `--error-mode jsonrpc`; an unknown tool is always a JSON-RPC error.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError

from tests.answers import call_error
from tests.e2e.e2e_support import (
    MARKER_ENV,
    assert_all_gone,
    sleeper_file,
    start_server,
    structured,
    write_project,
    write_sleeper_project,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

INVALID_PARAMS = -32602
EXECUTION_ERROR = -32000
# The server the tests share that only need *a* server on a one-test project: each of their calls is
# refused before any pytest starts (or runs one that ends), so no call leaves the next one anything.
SHARED_FLAGS = ("--max-timeout", "120", "--timeout", "60")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("shared") / "proj", {"test_x.py": "def test_x():\n    pass\n"})


@pytest.fixture(scope="module")
async def shared(shared_root: Path) -> AsyncIterator[Client]:
    """One server for the module's tests that only need a server; gone, with all it started, at the end.

    The per-test leftover check (conftest.py) looks for the test's own tmp_path, which this server's
    command line does not hold: this fixture checks its own root the same way once the module is done.
    """
    server = start_server(shared_root, shared_root.parent, *SHARED_FLAGS)
    async with server.client() as client:
        yield client
    print(server.stderr())
    await assert_all_gone(str(shared_root))


async def _assert_still_serving(client: Client) -> None:
    """The same session answers a normal run afterwards."""
    with anyio.fail_after(30):
        result = await client.call_tool("execute_tests", {"node_ids": ["test_quick.py"]})
    data = structured(result)
    assert data["exit_code"] == 0
    assert data["summary"]["passed"] == 1


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        pytest.param({"extra_args": ["-x"]}, "extra_args", id="unknown parameter"),
        pytest.param({"node_ids": ["--version"]}, "node_ids", id="node id that is an option"),
        pytest.param({"node_ids": ["../outside"]}, "node_ids", id="node id outside the root"),
        pytest.param({"maxfail": 2, "failfast": True}, "failfast", id="maxfail with failfast"),
        pytest.param({"timeout": 121}, "timeout", id="timeout above the maximum"),
        pytest.param({"node_ids": "x"}, "node_ids", id="node ids not a list"),
        pytest.param({"verbosity": "2"}, "verbosity", id="verbosity not an integer"),
    ],
)
async def test_invalid_arguments_are_invalid_params_naming_the_field(
    shared: Client, arguments: dict[str, Any], field: str
) -> None:
    error = await call_error(shared, "execute_tests", arguments)
    assert error.code == INVALID_PARAMS, error.message
    assert field in error.message, error.message
    fields = [entry["field"] for entry in error.data["errors"]]
    assert any(field in name for name in fields), fields


async def test_unknown_tool_is_a_json_rpc_invalid_params_error(shared: Client) -> None:
    with anyio.fail_after(30), pytest.raises(MCPError) as caught:
        await shared.call_tool("run_shell", {})
    assert caught.value.code == INVALID_PARAMS
    assert "run_shell" in caught.value.message
    assert "execute_tests" in caught.value.message


async def test_collection_error_in_execute_tests_is_an_execution_error_naming_file_and_exception(
    tmp_path: Path,
) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "test_fine.py": "def test_fine():\n    pass\n",
            "test_broken.py": "import module_that_does_not_exist_e2e\n\ndef test_never():\n    pass\n",
        },
    )
    async with start_server(root, tmp_path).client() as client:
        error = await call_error(client, "execute_tests", {})
    assert error.code == EXECUTION_ERROR
    assert "test_broken.py" in error.message
    assert "ModuleNotFoundError" in error.message
    assert error.data["reason"] == "interrupted"


async def test_node_id_for_a_missing_file_is_a_usage_error_saying_not_found(shared: Client) -> None:
    error = await call_error(shared, "execute_tests", {"node_ids": ["test_missing.py"]})
    assert error.code == EXECUTION_ERROR
    assert "not found" in error.message
    assert "test_missing.py" in error.message
    assert error.data["reason"] == "usage_error"


async def test_pytest_internal_error_is_an_execution_error_with_the_cause(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "conftest.py": """
                def pytest_collection_modifyitems(items):
                    raise RuntimeError("boom-internal")
            """,
            "test_x.py": "def test_x():\n    pass\n",
        },
    )
    async with start_server(root, tmp_path).client() as client:
        error = await call_error(client, "execute_tests", {})
    assert error.code == EXECUTION_ERROR
    assert "boom-internal" in error.message
    assert error.data["reason"] == "internal_error"
    assert error.data["exit_code"] == 3


async def test_timeout_is_an_execution_error_and_the_session_keeps_serving(tmp_path: Path, marker: str) -> None:
    root = write_sleeper_project(tmp_path / "proj", marker)
    server = start_server(root, tmp_path, env={MARKER_ENV: marker})
    async with server.client() as client:
        started = anyio.current_time()
        error = await call_error(client, "execute_tests", {"node_ids": [sleeper_file(marker)], "timeout": 2})
        elapsed = anyio.current_time() - started
        assert error.code == EXECUTION_ERROR
        assert "timeout" in error.message or "did not finish within 2s" in error.message, error.message
        assert "2s" in error.message
        assert error.data["reason"] == "timeout"
        assert 2 <= elapsed < 10, elapsed
        await _assert_still_serving(client)


async def test_segfault_is_an_execution_error_naming_sigsegv_and_the_session_keeps_serving(
    tmp_path: Path,
) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "test_crash.py": """
                import ctypes

                def test_crashes():
                    ctypes.string_at(0)
            """,
            "test_quick.py": "def test_quick():\n    assert True\n",
        },
    )
    async with start_server(root, tmp_path).client() as client:
        error = await call_error(client, "execute_tests", {"node_ids": ["test_crash.py"]})
        assert error.code == EXECUTION_ERROR
        assert "SIGSEGV" in error.message
        assert error.data["reason"] == "crashed"
        await _assert_still_serving(client)


async def test_interpreter_without_pytest_is_an_execution_error_naming_the_interpreter(tmp_path: Path) -> None:
    env_dir = tmp_path / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=60)
    python = env_dir / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import pytest"], capture_output=True, timeout=30)
    assert probe.returncode != 0, "the bare venv unexpectedly has pytest"

    root = write_project(tmp_path / "proj", {"test_x.py": "def test_x():\n    pass\n"})
    async with start_server(root, tmp_path, "--python", str(python)).client() as client:
        error = await call_error(client, "execute_tests", {})
    assert error.code == EXECUTION_ERROR
    assert str(python) in error.message, error.message
    assert "pytest" in error.message
    assert any(words in error.message for words in ("not installed", "cannot be run", "could not")), error.message


async def test_node_ids_too_long_for_the_os_are_invalid_arguments_not_a_missing_pytest(tmp_path: Path) -> None:
    """E2BIG once read "pytest cannot be run with the target interpreter ... install pytest"."""
    root = write_project(tmp_path / "proj", {"test_quick.py": "def test_quick():\n    assert True\n"})
    # 1.2 MB of environment (each value under Linux's 128 KiB per string) plus 1 MB of node ids.
    bulky = {f"E2E_BULK_{index}": "b" * 100_000 for index in range(12)}
    node_ids = [f"test_quick.py::test_{index}_" + "x" * 1970 for index in range(500)]

    async with start_server(root, tmp_path, env=bulky).client() as client:
        error = await call_error(client, "execute_tests", {"node_ids": node_ids})
        await _assert_still_serving(client)

    assert error.code == INVALID_PARAMS
    assert error.message.startswith("invalid arguments for execute_tests: node_ids: with the rest of pytest's command")
    assert "the system passes at most" in error.message
    assert "install pytest" not in error.message


@pytest.mark.parametrize(
    ("arguments", "code", "reason"),
    [
        pytest.param({"node_ids": ["--version"]}, INVALID_PARAMS, None, id="invalid arguments"),
        pytest.param({"node_ids": ["test_missing.py"]}, EXECUTION_ERROR, "usage_error", id="usage error"),
    ],
)
async def test_error_mode_jsonrpc_gives_the_same_code_message_and_data_as_a_json_rpc_error(
    shared: Client, shared_root: Path, tmp_path: Path, arguments: dict[str, Any], code: int, reason: str | None
) -> None:
    """The shared server answers as a result; one that differs from it only by the mode, as an error."""
    as_result = await call_error(shared, "execute_tests", arguments)
    async with start_server(shared_root, tmp_path, *SHARED_FLAGS, "--error-mode", "jsonrpc").client() as client:
        with anyio.fail_after(30), pytest.raises(MCPError) as caught:
            await client.call_tool("execute_tests", arguments)

    assert as_result.code == caught.value.code == code
    assert as_result.message == caught.value.message
    assert as_result.data.get("reason") == reason

    def timeless(data: dict[str, Any]) -> dict[str, Any]:
        """The data without the timings that no two runs share (pytest's "in 0.01s" included)."""
        return {
            key: re.sub(r" in [\d.]+s", " in Xs", value) if isinstance(value, str) else value
            for key, value in data.items()
            if key != "duration"
        }

    assert timeless(caught.value.error.data) == timeless(as_result.data)
