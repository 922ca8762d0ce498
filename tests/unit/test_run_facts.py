"""What pytest's process learns besides its reports crosses one typed channel (ADR 0019): the reporter's
facts event, validated as RunFacts in report.py, carried as RunReport.facts, answered as RunResult's
own fields by the use case without a copy per fact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_mcp.adapters.pytest_subprocess import report
from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
from pytest_mcp.domain.execute_tests import ExecuteTests
from pytest_mcp.domain.models import AffectedRun, RunFacts, RunResult, Summary
from pytest_mcp.domain.requests import ExecuteTestsRequest, RequestPolicy
from pytest_mcp.domain.runs import RunReport, RunSpec, Termination
from pytest_mcp.ports.progress import ProgressSink
from tests.unit.support import KeepResult

pytestmark = pytest.mark.anyio

AFFECTED = {"not_run": 7, "ran_everything": None, "changed_files": [], "changed_file_count": 0, "run": 3}
COUNTS = dict.fromkeys(("passed", "failed", "deselected"), 0) | {"passed": 3}


def event(kind: str, **fields: object) -> str:
    return json.dumps({protocol.EVENT: kind, **fields}) + "\n"


def write_report(path: Path, facts: dict[str, Any], *, padding: int = 0) -> None:
    lines = [event(protocol.TEST, node_id=f"t.py::test_{n}", outcome="skipped", phase="call") for n in range(padding)]
    lines.append(event(protocol.FACTS, **facts))
    lines.append(event(protocol.SUMMARY, counts=COUNTS, total=3, duration=1.0, exit_code=0))
    path.write_text("".join(lines))


def test_the_facts_event_is_read_as_run_facts(tmp_path: Path) -> None:
    write_report(tmp_path / "report.jsonl", {"v": protocol.FACTS_VERSION, "affected": AFFECTED})

    parsed = report.read_report(tmp_path / "report.jsonl", max_bytes=1 << 20)

    assert parsed.facts == RunFacts(affected=AffectedRun(run=3, not_run=7))


def test_the_facts_are_read_past_the_byte_budget_as_the_summary_is(tmp_path: Path) -> None:
    write_report(tmp_path / "report.jsonl", {"v": protocol.FACTS_VERSION, "affected": AFFECTED}, padding=100)

    parsed = report.read_report(tmp_path / "report.jsonl", max_bytes=1000)

    assert len(parsed.tests) < 100  # the budget stopped the reading of reports
    assert parsed.summary is not None
    assert parsed.facts.affected == AffectedRun(run=3, not_run=7)


@pytest.mark.parametrize(
    "facts",
    [
        {"v": protocol.FACTS_VERSION + 1, "affected": AFFECTED},
        {"affected": AFFECTED},
        {"v": protocol.FACTS_VERSION, "affected": AFFECTED, "no_such_fact": 1},
        {"v": protocol.FACTS_VERSION, "affected": {"run": "many"}},
    ],
    ids=["another version", "no version", "an unknown fact", "a fact that does not fit"],
)
def test_facts_of_another_version_or_shape_are_no_facts_and_the_run_stands(
    tmp_path: Path, facts: dict[str, Any]
) -> None:
    write_report(tmp_path / "report.jsonl", facts)

    parsed = report.read_report(tmp_path / "report.jsonl", max_bytes=1 << 20)

    assert parsed.facts == RunFacts()
    assert parsed.summary is not None
    assert parsed.summary.passed == 3


def test_the_answer_has_every_fact_as_a_field_of_its_own() -> None:
    for name, fact in RunFacts.model_fields.items():
        assert RunResult.model_fields[name].annotation == fact.annotation, name


class _Reporting:
    """A runner whose run learnt `facts`."""

    def __init__(self, facts: RunFacts) -> None:
        self.facts = facts
        self.specs: list[RunSpec] = []

    async def run(self, spec: RunSpec, progress: ProgressSink | None = None) -> RunReport:
        self.specs.append(spec)
        return RunReport(
            termination=Termination(kind="exited", exit_code=0),
            command=("python", "-m", "pytest"),
            duration=0.1,
            summary=Summary(passed=3, total=3),
            facts=self.facts,
        )


async def test_the_use_case_answers_the_facts_of_the_run(policy: RequestPolicy) -> None:
    facts = RunFacts(affected=AffectedRun(run=3, not_run=7))
    result = await ExecuteTests(_Reporting(facts), KeepResult(), policy).execute(ExecuteTestsRequest.parse({}, policy))

    assert RunFacts.model_validate({name: getattr(result, name) for name in RunFacts.model_fields}) == facts


def test_a_run_spec_asks_only_for_facts_there_are() -> None:
    with pytest.raises(ValueError, match="no_such_fact is not a field of RunFacts"):
        RunSpec(facts={"no_such_fact": 1})
