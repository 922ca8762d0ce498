from __future__ import annotations

import anyio
import pytest

from pytest_mcp.adapters.concurrency_limit import ConcurrencyLimitedRunner
from pytest_mcp.adapters.fake_runner import FakeTestRunner
from pytest_mcp.domain.runs import RunSpec

pytestmark = pytest.mark.anyio


async def test_a_free_slot_passes_the_timeout_through_unchanged() -> None:
    fake = FakeTestRunner().script("t.py::test_a")
    limited = ConcurrencyLimitedRunner(fake, limit=1)

    await limited.run(RunSpec(timeout=30))

    assert [spec.timeout for spec in fake.calls] == [30]


async def test_a_call_that_waited_gets_what_is_left_of_its_timeout_and_one_that_cannot_is_busy() -> None:
    class Slow(FakeTestRunner):
        async def run(self, spec: RunSpec, progress=None):  # type: ignore[no-untyped-def]
            await anyio.sleep(0.5)
            return await super().run(spec, progress)

    slow = Slow().script("t.py::test_a")
    limited = ConcurrencyLimitedRunner(slow, limit=1)
    reports = {}

    async def call(name: str, timeout: float) -> None:
        reports[name] = await limited.run(RunSpec(timeout=timeout))

    async with anyio.create_task_group() as group:
        group.start_soon(call, "first", 10)
        await anyio.sleep(0.05)
        group.start_soon(call, "waits", 10)
        group.start_soon(call, "gives_up", 0.2)

    assert reports["first"].termination.kind == "exited"
    assert reports["waits"].termination.kind == "exited"
    assert reports["gives_up"].termination.kind == "busy"
    assert reports["gives_up"].termination.detail == "1 run is already in progress, the configured maximum"
    waited_timeout = slow.calls[1].timeout
    assert 9.0 < waited_timeout < 9.6
    assert len(slow.calls) == 2
