"""A finished run's non-passing reports, kept in one order so that pages of them never skip or repeat one."""

from __future__ import annotations

from pytest_mcp.domain.errors import FieldError, InvalidArguments
from pytest_mcp.domain.groups import members_of
from pytest_mcp.domain.models import ReportedTest, RunFacts, RunPage, RunResult
from pytest_mcp.domain.requests import GetTestRunRequest

LISTING_PRIORITY = {"error": 0, "failed": 0, "xpassed": 1, "skipped": 2, "xfailed": 2, "passed": 3}
"""Which reports an answer keeps first when not all fit: failures, then surprises, then the expected;
a pass is listed only when it is flaky. Pages follow the same order, so a page is always a prefix."""


def kept_reports(reports: tuple[ReportedTest, ...]) -> tuple[ReportedTest, ...]:
    """The reports a finished run keeps for get_test_run: every non-passing one (and flaky passes),
    in listing priority, in run order within each priority."""
    listed = [test for test in reports if test.outcome != "passed" or test.reruns]
    return tuple(sorted(listed, key=lambda test: LISTING_PRIORITY[test.outcome]))


def page_of(kept: RunResult, request: GetTestRunRequest) -> RunResult:
    """The reports `request` asks for (its node ids, a group's members, or all) from its offset on, with
    the run's counts.

    The presenter decides how many fit; `page.next_offset` is set once it has.
    """
    reports = kept.tests
    if request.node_ids:
        known = {test.node_id for test in reports}
        unknown = [node_id for node_id in request.node_ids if node_id not in known]
        if unknown:
            shown = ", ".join(repr(node_id[:200]) for node_id in unknown[:5]) + (" ..." if len(unknown) > 5 else "")
            raise InvalidArguments([FieldError("node_ids", f"not among the run's non-passing tests: {shown}")])
        wanted = set(request.node_ids)
        reports = tuple(test for test in reports if test.node_id in wanted)
    if request.group is not None:
        reports = members_of(request.group, reports)
        if not reports:
            raise InvalidArguments([FieldError("group", "not a failure group of this run")])
    if request.offset > len(reports):
        raise InvalidArguments([FieldError("offset", f"is {request.offset}; the run kept {len(reports)} reports")])
    return kept.model_copy(
        update={
            "tests": reports[request.offset :],
            # A page is the reports; the run's first answer gave its groups and reasons.
            "groups": (),
            "reasons": (),
            "omitted_groups": 0,
            "page": RunPage(offset=request.offset, total=len(reports)),
            "omitted_tests": 0,
            "command": (),
            "text_output": "",
            "coverage": None,
            **dict(RunFacts()),  # and its facts (affected, ...)
        }
    )
