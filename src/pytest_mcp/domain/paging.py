"""A finished run's non-passing reports, kept in one order so that pages of them never skip or repeat one."""

from __future__ import annotations

from pytest_mcp.domain.errors import FieldError, InvalidArguments
from pytest_mcp.domain.models import ReportedTest, RunFacts, RunPage, RunResult
from pytest_mcp.domain.requests import GetTestRunRequest

MEMBER_PAGE_CHARS = 12_000
"""A page of a group's member ids holds ids up to this many characters: about 190 ids of 60; the text lists them too."""

LISTING_PRIORITY = {"error": 0, "failed": 0, "xpassed": 1, "skipped": 2, "xfailed": 2, "passed": 3}
"""Which reports an answer keeps first when not all fit: failures, then surprises, then the expected;
a pass is listed only when it is flaky. Pages follow the same order, so a page is always a prefix."""


def kept_reports(reports: tuple[ReportedTest, ...]) -> tuple[ReportedTest, ...]:
    """The reports a finished run keeps for get_test_run: every non-passing one (and flaky passes),
    in listing priority, in run order within each priority."""
    listed = [test for test in reports if test.outcome != "passed" or test.reruns]
    return tuple(sorted(listed, key=lambda test: LISTING_PRIORITY[test.outcome]))


def page_of(kept: RunResult, request: GetTestRunRequest) -> RunResult:
    """The reports `request` asks for (its node ids, or all) from its offset on, with the run's counts;
    with `group`, a page of the group's member ids instead: a full report is asked for by node id.

    The presenter decides how many reports fit; `page.next_offset` is set once it has. A page of
    member ids is cut at MEMBER_PAGE_CHARS, so its size varies with the ids' lengths.
    """
    if request.group is not None:
        return _members_page(kept, request)
    reports = kept.tests
    if request.node_ids:
        known = {test.node_id for test in reports}
        unknown = [node_id for node_id in request.node_ids if node_id not in known]
        if unknown:
            shown = ", ".join(repr(node_id[:200]) for node_id in unknown[:5]) + (" ..." if len(unknown) > 5 else "")
            raise InvalidArguments([FieldError("node_ids", f"not among the run's non-passing tests: {shown}")])
        wanted = set(request.node_ids)
        reports = tuple(test for test in reports if test.node_id in wanted)
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


def _members_page(kept: RunResult, request: GetTestRunRequest) -> RunResult:
    """The group's member ids from the offset on, as many as fit in MEMBER_PAGE_CHARS (at least one)."""
    found = [group for group in kept.groups if group.id == request.group]
    if not found:
        raise InvalidArguments([FieldError("group", "not a failure group of this run")])
    if request.node_ids:
        raise InvalidArguments([FieldError("node_ids", "cannot be combined with group; a group pages its member ids")])
    members = found[0].members
    if request.offset >= len(members) and request.offset:
        raise InvalidArguments([FieldError("offset", f"is {request.offset}; the group has {len(members)} members")])
    end, used = request.offset, 0
    while end < len(members) and (end == request.offset or used + len(members[end]) <= MEMBER_PAGE_CHARS):
        used += len(members[end]) + 4
        end += 1
    return kept.model_copy(
        update={
            "tests": (),
            "groups": (),
            "reasons": (),
            "culprits": (),
            "localization": None,
            "members": members[request.offset : end],
            "omitted_groups": 0,
            "page": RunPage(
                offset=request.offset,
                total=len(members),
                next_offset=end if end < len(members) else None,
                group=request.group,
            ),
            "omitted_tests": 0,
            "command": (),
            "text_output": "",
            "coverage": None,
            **dict(RunFacts()),
        }
    )
