"""affected=true on the newest pytest 9 (the cases and checks are in affected.py), and with pytest's
cache provider turned off, in the `testmon` target (pytest 9 and testmon alone)."""

from pathlib import Path

import pytest

from tests.plugins.affected import PROJECT, TESTS, Affected, edit, execute, failures, ran
from tests.plugins.support import target

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


class TestAffectedOnPytest9(Affected):
    environment = "pytest9"

    async def test_the_cache_provider_turned_off_does_not_stop_affected(self, root: Path) -> None:
        # testmon 2.2.0 reads --lf's option, which only the cache provider declares; with
        # `-p no:cacheprovider` on pytest's command line it dies (KeyError: 'lf'). From a project's
        # addopts (or PYTEST_ADDOPTS) it does not, and the server never puts it on the command line.
        env = target("testmon")
        (root / "pytest.ini").write_text(PROJECT["pytest.ini"] + "addopts = -p no:cacheprovider\n")

        first = await execute(root, env.python, {"affected": True})
        edit(root, "calc.py", "return a * b", "return a * b + 1")
        answer = await execute(root, env.python, {"affected": True, "detail": "all"})

        assert first["summary"]["total"] == TESTS, first
        assert (
            failures(answer) == ran(answer) == ["tests/test_mul.py::test_mul_small", "tests/test_mul.py::test_mul_zero"]
        )
