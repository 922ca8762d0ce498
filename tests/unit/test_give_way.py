"""A run's session is given its share until Linux takes it (ADR 0022, `--run-priority low`)."""

from __future__ import annotations

import errno

import anyio
import pytest

from pytest_mcp.adapters.pytest_subprocess import process
from pytest_mcp.ports.worker import Inline

pytestmark = pytest.mark.anyio


async def test_the_share_is_asked_again_while_linux_refuses_for_the_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without CAP_SYS_ADMIN, Linux sets an autogroup's nice once a tenth of a second machine-wide:
    20 runs starting at once get EAGAIN, and each must still get its share."""
    answers = [OSError(errno.EAGAIN, "try again"), OSError(errno.EAGAIN, "try again"), None]
    asked: list[tuple[str, str]] = []

    class Proc:
        def __init__(self, path: str, mode: str, encoding: str) -> None:
            self.path = path

        def __enter__(self) -> Proc:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def write(self, text: str) -> None:
            asked.append((self.path, text))
            answer = answers.pop(0)
            if answer is not None:
                raise answer

    monkeypatch.setattr(process, "open", Proc, raising=False)
    monkeypatch.setattr(process, "_SHARE_RETRY_SECONDS", 0.001)

    with anyio.fail_after(10):
        await process.give_way(4321, 10, Inline())

    assert asked == [("/proc/4321/autogroup", "10")] * 3


@pytest.mark.parametrize("code", [errno.ENOENT, errno.EACCES, errno.EPERM, errno.EINVAL])
def test_where_there_is_no_share_to_set_it_is_not_asked_again(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """No autogroup (another kernel, a process gone), or a process of another owner: the process's
    own nice, set by the bootstrap, is what orders the run."""

    def refused(*args: object, **kwargs: object) -> None:
        raise OSError(code, "no")

    monkeypatch.setattr(process, "open", refused, raising=False)

    assert process._autogroup_nice(4321, 10) is True
