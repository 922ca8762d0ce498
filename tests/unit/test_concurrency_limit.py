from __future__ import annotations

import anyio
import pytest

from pytest_mcp.adapters.concurrency_limit import ConcurrencyLimitedProbe, ConcurrencyLimitedRunner, RunSlots
from pytest_mcp.adapters.fake.environment import FakeEnvironmentProbe
from pytest_mcp.adapters.fake.runner import FakeTestRunner
from pytest_mcp.domain.environment import ProbeReport
from pytest_mcp.domain.runs import RunSpec

pytestmark = pytest.mark.anyio


async def test_a_free_slot_passes_the_timeout_through_unchanged() -> None:
    fake = FakeTestRunner().script("t.py::test_a")
    limited = ConcurrencyLimitedRunner(fake, RunSlots(1))

    await limited.run(RunSpec(timeout=30))

    assert [spec.timeout for spec in fake.calls] == [30]


async def test_a_call_that_waited_gets_what_is_left_of_its_timeout_and_one_that_cannot_is_busy() -> None:
    class Slow(FakeTestRunner):
        async def run(self, spec: RunSpec, progress=None):  # type: ignore[no-untyped-def]
            await anyio.sleep(0.5)
            return await super().run(spec, progress)

    slow = Slow().script("t.py::test_a")
    limited = ConcurrencyLimitedRunner(slow, RunSlots(1))
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


class CountingProbe(FakeEnvironmentProbe):
    """Records how many probes ran at once."""

    def __init__(self) -> None:
        super().__init__()
        self.running = 0
        self.most = 0

    async def probe(self, timeout: float) -> ProbeReport:
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await anyio.sleep(0.05)
            return await super().probe(timeout)
        finally:
            self.running -= 1


async def test_probes_take_the_same_slots_as_runs() -> None:
    """check_environment once ignored the limit: 200 calls started 77 probe interpreters."""
    slots = RunSlots(2)
    inner = CountingProbe()
    probes = ConcurrencyLimitedProbe(inner, slots)
    reports: list[ProbeReport] = []

    async def probe() -> None:
        reports.append(await probes.probe(30))

    await slots.acquire(10)  # a run holds one of the two slots throughout
    async with anyio.create_task_group() as group:
        for _ in range(40):
            group.start_soon(probe)
    slots.release()

    assert inner.most == 1, "the run held the other slot, so one probe at a time"
    assert len(reports) == 40
    assert all(report.facts is not None for report in reports)


async def test_a_probe_with_no_free_slot_within_its_deadline_is_busy() -> None:
    slots = RunSlots(1)
    await slots.acquire(1)  # a run holds the only slot
    inner = CountingProbe()

    report = await ConcurrencyLimitedProbe(inner, slots).probe(0.1)

    assert report.busy == "1 run is already in progress, the configured maximum"
    assert report.interpreter is None
    assert inner.most == 0, "nothing was started"


async def test_the_slots_are_idle_only_while_no_run_holds_one() -> None:
    slots = RunSlots(2)
    assert slots.idle_seconds() > 0

    await slots.acquire(1)
    await slots.acquire(1)
    slots.release()
    assert slots.idle_seconds() == 0, "one run still holds a slot"

    slots.release()
    since = slots.idle_seconds()
    assert slots.idle_seconds() >= since >= 0
