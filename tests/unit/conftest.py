from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mcp.adapters.fake.runner import FakeTestRunner
from pytest_mcp.domain.requests import RequestPolicy


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def policy(tmp_path: Path) -> RequestPolicy:
    (tmp_path / "tests").mkdir()
    return RequestPolicy(root=tmp_path, default_timeout=30, max_timeout=120)


@pytest.fixture
def runner() -> FakeTestRunner:
    return (
        FakeTestRunner()
        .script("tests/test_math.py::test_add", "passed", markers=["fast"])
        .script("tests/test_math.py::test_div", "failed", message="ZeroDivisionError", traceback="E  boom")
        .script("tests/test_io.py::TestFiles::test_read", "skipped", message="Skipped: no disk", markers=["io"])
        .script("tests/test_io.py::TestFiles::test_write", "error", message="fixture failed", stdout="setup log")
        .script("tests/test_flaky.py::test_known", "xfailed", message="bug 12")
    )
