"""McpPresenter: domain results as MCP tool results (structured content plus compact text)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pydantic_core
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from pytest_mcp.domain.models import (
    CollectedTest,
    CoverageReport,
    DiscoveryResult,
    FailureGroup,
    ModuleCount,
    ReportedTest,
    RunResult,
    SlowTest,
    StoppedProcesses,
    Symptom,
    _Value,
)
from pytest_mcp.domain.paging import LISTING_PRIORITY
from pytest_mcp.domain.text import (
    CAPTURE_LINES,
    EVIDENCE_LINES,
    evidence_lines,
    last_lines,
    one_line,
    quoted,
    short_line,
)
from pytest_mcp.ports.presenter import ResultPresenter

_LISTED_NODE_IDS = 200
_LISTED_MODULES = 20


def _attempts(test: ReportedTest) -> str:
    return f"{test.reruns + 1} attempts" if test.reruns else ""


def _render_flaky(test: ReportedTest) -> str:
    first = f"; first failure: {short_line(test.first_failure.splitlines()[0])}" if test.first_failure else ""
    return f"FLAKY {test.node_id}: passed on attempt {test.reruns + 1}{first}"


def _render_failure(test: ReportedTest) -> list[str]:
    label = "ERROR" if test.outcome == "error" else "FAILED"
    phase = "" if test.phase == "call" else f" [{test.phase}]"
    where = f" ({test.location})" if test.location else ""
    attempts = f" [failed all {_attempts(test)}]" if test.reruns else ""
    lines = [f"{label} {test.node_id}{phase}{where}{attempts}"]
    if test.message and test.message.startswith("subtest "):
        # Subtests share their test's node id; the description is what tells them apart.
        lines.append(f"  {short_line(test.message.splitlines()[0])}")
    if test.traceback:
        lines += [f"  {line}" for line in evidence_lines(test.traceback, EVIDENCE_LINES)]
    elif test.message:
        lines += [f"  {short_line(line)}" for line in test.message.splitlines()[:EVIDENCE_LINES]]
    for stream in ("stdout", "stderr"):
        captured = getattr(test, stream)
        if captured:
            lines.append(f"  captured {stream}:")
            lines += [f"    {line}" for line in last_lines(captured, CAPTURE_LINES)]
    return lines


def _render_group(group: FailureGroup, run_id: str | None = None) -> list[str]:
    """The title and the members, then the first member's evidence, indented. A group of one is its
    test's report under the group's id: its title would only repeat the report. A cause lists its
    symptoms, a count per assertion site; each group says whether its tests are new, old or flaky."""
    representative = group.representative
    if representative.is_failure:
        report = _render_failure(representative)
    else:
        report = [f"{representative.outcome.upper()} {representative.node_id}: {representative.message or ''}"]
    since = f"; {group.since.words()}" if group.since is not None else ""
    blocked = [f"  blocked by the sandbox: {group.blocked}"] if group.blocked else []
    if group.count == 1:
        return [f"[{group.id}] {report[0]}{since}", *blocked, *report[1:]]
    culprit = f"; likely cause {group.culprit.where}" if group.culprit is not None and not group.symptoms else ""
    members = ", ".join(group.members)
    if group.omitted_members:
        kept = f'"run_id": "{run_id}", ' if run_id else ""
        members += f'; {group.omitted_members} more: get_test_run with {{{kept}"group": "{group.id}"}}'
    lines = [f"[{group.id}] {group.title}{culprit}{since}", *blocked, f"  members: {members}"]
    if group.symptoms:
        lines.append("  symptoms:")
        lines += [f"    {_symptom(symptom)}" for symptom in group.symptoms]
        if group.omitted_symptoms:
            left = group.count - sum(symptom.count for symptom in group.symptoms)
            lines.append(f"    ... {group.omitted_symptoms} rarer ways, {left} tests: the group's members page them")
    return lines + [f"  {line}" for line in report]


def _symptom(symptom: Symptom) -> str:
    message = symptom.message or ""
    if symptom.exception and not message.startswith(symptom.exception):
        message = f"{symptom.exception}: {message}" if message else symptom.exception
    where = f"{symptom.sites} sites, first {symptom.crash}" if symptom.sites > 1 else (symptom.crash or "?")
    return f"{symptom.count} at {where}: {short_line(message or 'no message')}"


def _render_culprits(result: RunResult) -> list[str]:
    """The likely causes first: each culprit with its evidence; or why none is named, in one line."""
    lines = []
    for index, culprit in enumerate(result.culprits):
        head = "likely cause" if index == 0 else "also likely"
        lines.append(f"{head}: {culprit.where}: {culprit.evidence()}")
    note = result.localization
    if note is not None and note.reason:
        lines.append(f"culprits: {note.reason}" if result.culprits else f"no culprit named: {note.reason}")
    if result.changed_untested:
        lines.append(f"changed, run by no test: {', '.join(result.changed_untested)}")
    return lines


def _render_reasons(result: RunResult) -> list[str]:
    lines = []
    for outcome in ("skipped", "xfailed"):
        reasons = [reason for reason in result.reasons if reason.outcome == outcome]
        if reasons:
            count = sum(reason.count for reason in reasons)
            if result.omitted_reasons:  # the summary line counts them all
                lines.append(f"{count} {outcome}, by the {len(result.reasons)} most common reasons:")
            else:
                lines.append(f"{count} {outcome} ({len(reasons)} reason{'' if len(reasons) == 1 else 's'}):")
            lines += [f"  {reason.count} {short_line(reason.reason or '(no reason given)')}" for reason in reasons]
    if result.omitted_reasons:
        lines.append(f"  ... {result.omitted_reasons} rarer reasons left out: detail='all' lists every report")
    return lines


MAX_REASONS = 10
"""Skip and xfail reasons an answer lists, the most common first: a suite that skips each test for a
reason of its own (39 skips, 32 reasons in tabulate's) would otherwise spend 4 KB on them."""

MAX_REASONS_BESIDE_FAILURES = 3
"""As many when tests failed: the failures are what the agent reads, and a large suite's skips by
platform and version (lark's 21 reasons, pyflakes' 8) took a fifth of an answer that names the cause."""


def _common_reasons(result: RunResult) -> RunResult:
    most = MAX_REASONS_BESIDE_FAILURES if result.groups else MAX_REASONS
    if len(result.reasons) <= most:
        return result
    left = result.omitted_reasons + len(result.reasons) - most
    return result.model_copy(update={"reasons": result.reasons[:most], "omitted_reasons": left})


def render_run(result: RunResult) -> str:
    """A compact reading of the run for a model: the summary, then each failure group, largest
    first, with one report's evidence; skips and xfails by reason; then what else is listed."""
    lines = [_headline(result)]
    if result.affected is not None:
        lines.append(result.affected.line())
    lines += _render_culprits(result)
    if result.members:
        lines += result.members
    for group in result.groups:
        lines.append("")
        lines += _render_group(group, result.run_id)
    notes = dict.fromkeys(group.compressed for group in result.groups if group.compressed)
    if notes:
        lines.append(f"(members: {'; '.join(notes)})")
    if result.omitted_groups:
        fetch = (
            f'get_test_run with {{"run_id": "{result.run_id}", "offset": 0}} pages through every report'
            if result.run_id and result.status == "finished"
            else "run fewer tests to see them"
        )
        lines.append(
            f"[... {result.omitted_groups} smaller groups left out to keep this answer within its size "
            f"budget; {fetch} ...]"
        )
    reasons = _render_reasons(result)
    if reasons:
        lines.append("")
        lines += reasons
    flaky = [test for test in result.tests if test.outcome == "passed" and test.reruns]
    if flaky:
        lines.append("")
        lines += [_render_flaky(test) for test in flaky]
    listed = [test for test in result.tests if test.outcome != "passed"]
    if listed:  # detail='all': every report is in structured content; the text names the others
        lines.append("")
        lines += [f"{test.outcome.upper()} {test.node_id}" for test in listed]
    for error in result.collection_errors:
        lines.append(f"COLLECTION ERROR {error.node_id}: {error.message}")
    if result.page is not None:
        lines.append(_page_line(result))
    elif result.run_id and result.status == "finished" and not result.omitted_tests and not result.omitted_groups:
        # A group shows one member's report: every other one is kept for the run's TTL.
        lines.append(f'[every report in full: get_test_run with {{"run_id": "{result.run_id}", "offset": 0}}]')
    elif result.omitted_tests:
        lines.append(
            f"[... {result.omitted_tests} more test reports left out to keep this answer within its size budget; "
            + (
                f'get_test_run with {{"run_id": "{result.run_id}", "offset": 0}} pages through all of them ...]'
                if result.run_id and result.status == "finished"
                else "run fewer tests, or use detail='summary' for counts only ...]"
            )
        )
    if result.coverage is not None:
        lines.append("")
        lines += _render_coverage(result.coverage)
    if result.slowest:
        lines.append("")
        lines += _render_slowest(result.slowest)
    if result.stopped_processes is not None:
        lines.append(render_stopped(result.stopped_processes))
    lines += [f"NOTE: {note}" for note in result.notes]
    return as_text(lines)


def as_text(lines: list[str]) -> str:
    """The text block from its lines. Each line may quote the project (node ids, messages, output,
    process names): a newline, a control character or a bidirectional control in it is replaced, so
    the project's text can neither start a line of its own nor colour, hide or reorder the answer."""
    return "\n".join(map(one_line, lines))


def render_stopped(stopped: StoppedProcesses) -> str:
    """One line: how many processes the tests left running, and what they were."""
    more = stopped.count - len(stopped.commands)
    listed = "; ".join(map(quoted, stopped.commands)) + (f"; and {more} more" if more else "")
    noun = "process" if stopped.count == 1 else "processes"
    return f"STOPPED {stopped.count} {noun} the tests left running when pytest ended: {listed}"


def _page_line(result: RunResult) -> str:
    page = result.page
    assert page is not None
    listed, what = (result.members, "member ids") if page.group is not None else (result.tests, "reports")
    shown = f"{what} {page.offset + 1}-{page.offset + len(listed)} of {page.total}" if listed else "none"
    if page.next_offset is None:
        ending = "the last page" + ("; full reports: get_test_run with node_ids" if page.group is not None else "")
        return f"[page: {shown}; {ending}]"
    group = f'"group": "{page.group}", ' if page.group is not None else ""
    return (
        f'[page: {shown}; next: get_test_run with {{"run_id": "{result.run_id}", {group}"offset": {page.next_offset}}}]'
    )


def noted(answer: CallToolResult, note: str) -> CallToolResult:
    """`answer` with a note on what the server did unasked, in its text and, when it has structured
    content (a tool error has none: clients validate it against the output schema), there too."""
    structured = answer.structured_content
    if structured is not None:
        structured = {**structured, "notes": [*structured.get("notes", []), note]}
    content = [
        TextContent(type="text", text=f"{block.text}\nNOTE: {one_line(note)}")
        if index == 0 and block.type == "text"
        else block
        for index, block in enumerate(answer.content)
    ]
    return answer.model_copy(update={"structured_content": structured, "content": content})


def _headline(result: RunResult) -> str:
    if result.status == "finished" or result.progress is None:
        return f"{result.summary.line()} (exit code {result.exit_code})"
    progress = result.progress
    so_far = f"{progress.done} of {progress.total or '?'} tests done after {progress.elapsed:.1f}s; so far " + (
        result.summary.words()
    )
    if result.status == "cancelled":
        return f"Cancelled: the run and every process it started are gone. {so_far}."
    return (
        f"Still running: {so_far}. The run goes on; for its result call get_test_run with "
        f'{{"run_id": "{result.run_id}"}}. Each call waits for the run up to the server\'s limit, then answers '
        'the final result or "running" again; add "cancel": true to stop it.'
    )


def _render_coverage(coverage: CoverageReport) -> list[str]:
    lines = [f"coverage {coverage.percent:.1f}%; lowest first:"]
    lines += [f"  {f.file} {f.percent:.1f}%" + (f" missing {f.missing}" if f.missing else "") for f in coverage.files]
    if coverage.files_omitted:
        lines.append(f"  [... {coverage.files_omitted} more files ...]")
    return lines


def _render_slowest(slowest: tuple[SlowTest, ...]) -> list[str]:
    lines = [f"slowest {len(slowest)} (setup + call + teardown):"]
    return lines + [f"  {test.duration:.2f}s {test.node_id}" for test in slowest]


def render_discovery(result: DiscoveryResult) -> str:
    """The counts; for a collection too large to list in the text, the tests per file first and how
    to narrow; then the node ids."""
    noun = "test" if result.total == 1 else "tests"
    head = f"{result.total} {noun} collected"
    large = result.total > _LISTED_NODE_IDS and bool(result.modules)
    if large:
        head += f" in {len(result.modules) + result.omitted_modules} files"
    if result.deselected:
        head += f", {result.deselected} deselected"
    if result.collection_errors:
        errors = len(result.collection_errors)
        head += f", {errors} collection error{'' if errors == 1 else 's'}"
    lines = [head]
    if large:
        lines += _render_modules(result)
    lines += [test.node_id for test in result.tests[:_LISTED_NODE_IDS]]
    if len(result.tests) > _LISTED_NODE_IDS:
        lines.append(f"[... {len(result.tests) - _LISTED_NODE_IDS} more in structuredContent.tests ...]")
    if result.omitted_tests:
        lines.append(
            f"[... {result.omitted_tests} more tests left out to keep this answer within its size budget; "
            "narrow with path, keywords or markers to list them ...]"
        )
    lines += [f"COLLECTION ERROR {error.node_id}: {error.message}" for error in result.collection_errors]
    return as_text(lines)


def _render_modules(result: DiscoveryResult) -> list[str]:
    ranked = sorted(result.modules, key=lambda module: -module.tests)[:_LISTED_MODULES]
    lines = ["tests per file, most first:"]
    lines += [f"  {module.file}: {module.tests}" for module in ranked]
    rest = len(result.modules) - len(ranked) + result.omitted_modules
    if rest:
        lines.append(f"  [... {rest} more files in structuredContent.modules ...]")
    lines.append(
        f'narrow with path (a file or directory, e.g. {{"path": "{ranked[0].file}"}}), keywords or markers; '
        f"the first {_LISTED_NODE_IDS} node ids follow:"
    )
    return lines


DEFAULT_MAX_RESPONSE_BYTES = 32_000
_M = TypeVar("_M", bound=BaseModel)


def _largest_count(most: int, fits: Callable[[int], bool]) -> int:
    """The largest count in 0..most for which `fits` holds, by bisection (`fits` only ever turns false)."""
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _json_bytes(value: RunResult | DiscoveryResult | CollectedTest | ModuleCount) -> int:
    """The bytes of `value` as the answer carries it, serialised as the SDK serialises it."""
    return len(pydantic_core.to_json(value.wire()))


def _size(result: RunResult) -> int:
    return _json_bytes(result) + len(render_run(result).encode())


_OWN_RULES = frozenset({("tests",), ("groups",), ("command",)})
"""Lists the budget does not cut as any other: reports and groups have their order and counts (ADR
0014), and a command cut short would run something else (it is bounded where it is made)."""


def _parts(value: BaseModel, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Where the answer holds a list, at any depth of its values (not inside a list's items)."""
    found: list[tuple[str, ...]] = []
    for name in type(value).model_fields:
        item = getattr(value, name)
        if isinstance(item, tuple) and item and (*path, name) not in _OWN_RULES:
            found.append((*path, name))
        elif isinstance(item, BaseModel):
            found += _parts(item, (*path, name))
    return found


def _part(value: BaseModel, path: tuple[str, ...]) -> tuple[object, ...]:
    for name in path:
        value = getattr(value, name)
    return value  # type: ignore[return-value]


def _with_part(value: _M, path: tuple[str, ...], items: tuple[object, ...]) -> _M:
    name, *rest = path
    replaced = _with_part(getattr(value, name), tuple(rest), items) if rest else items
    return value.model_copy(update={name: replaced})


def _part_bytes(items: tuple[object, ...]) -> int:
    return len(pydantic_core.to_json([item.wire() if isinstance(item, _Value) else item for item in items]))


def _part_within(path: tuple[str, ...], limit: int) -> Callable[[RunResult], bool]:
    def fits(result: RunResult) -> bool:
        return _part_bytes(_part(result, path)) <= limit

    return fits


def _cut(result: RunResult, path: tuple[str, ...], fits: Callable[[RunResult], bool]) -> RunResult:
    """`result` with the longest head of the list at `path` for which `fits` holds, and a note saying
    how much was left out (an answer never drops a part silently)."""
    items = _part(result, path)

    def keeping(count: int) -> RunResult:
        kept = _with_part(result, path, items[:count])
        if count == len(items):
            return kept
        left = f"{len(items) - count} of {len(items)} entries of {'.'.join(path)} left out"
        return kept.model_copy(update={"notes": (*kept.notes, f"{left} to keep this answer within its size budget")})

    if fits(result):
        return result
    return keeping(_largest_count(len(items), lambda count: fits(keeping(count))))


class McpPresenter(ResultPresenter[CallToolResult]):
    """Structured content carries the exit code, every count, `tests` and `collection_errors`
    always, and the other fields when they are not at their default (the output schema states
    each default); the text block is a reading aid, not a copy.

    Budget: the whole answer (structured content plus text) stays within `max_response_bytes`.
    When the test reports do not fit, reports are left out (passes first, then skips and
    xfails, then failures from the end of the run), `omitted_tests` says how many, and the
    text says so. Failures are never dropped while they fit.
    """

    def __init__(self, max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES) -> None:
        self._budget = max_response_bytes

    def discovery_capacity(self) -> int:
        """Each listed test costs at least its JSON with empty strings plus a comma, so no more
        than this many fit the budget, whatever the text block adds."""
        smallest = _json_bytes(CollectedTest(node_id="", file="")) + len(",")
        return self._budget // smallest + 1

    def present_run(self, result: RunResult) -> CallToolResult:
        result = self._within_budget(_common_reasons(result))
        return CallToolResult(
            content=[TextContent(type="text", text=render_run(result))],
            structured_content=result.wire(),
        )

    def _within_budget(self, result: RunResult) -> RunResult:
        """Listed reports go first (passes, then skips and xfails, then failures from the end), then
        the smallest groups: a group is the answer's unit, a listed report only its detail."""
        if _size(result) <= self._budget:
            return result
        priority = sorted(range(len(result.tests)), key=lambda i: (LISTING_PRIORITY[result.tests[i].outcome], i))

        def keeping(count: int) -> RunResult:
            kept = sorted(priority[:count])
            update: dict[str, object] = {
                "tests": tuple(result.tests[i] for i in kept),
                "omitted_tests": result.omitted_tests + len(result.tests) - count,
            }
            if result.page is not None:  # a page's reports come in priority order: the kept ones are a prefix
                following = result.page.offset + count
                update["page"] = result.page.model_copy(
                    update={"next_offset": following if following < result.page.total else None}
                )
            return result.model_copy(update=update)

        count = _largest_count(len(result.tests), lambda count: _size(keeping(count)) <= self._budget)
        if result.page is not None:  # a page always moves on: one report (already trimmed) rather than none
            return self._every_part_within_budget(keeping(max(count, 1)))
        result = keeping(count)
        if _size(result) <= self._budget:
            return result
        # No other part may crowd the groups out: each gets at most a quarter of the budget first.
        for path in _parts(result):
            result = _cut(result, path, _part_within(path, self._budget // 4))
        if _size(result) <= self._budget:
            return result
        groups = result.groups

        def keeping_groups(count: int) -> RunResult:
            omitted = result.omitted_groups + len(groups) - count
            return result.model_copy(update={"groups": groups[:count], "omitted_groups": omitted})

        result = keeping_groups(_largest_count(len(groups), lambda count: _size(keeping_groups(count)) <= self._budget))
        return self._every_part_within_budget(result)

    def _every_part_within_budget(self, result: RunResult) -> RunResult:
        """Every other list of the answer (reasons, collection errors, coverage files, notes, a new
        fact's, ...), largest first, cut to the head that fits, until the whole answer does."""
        for path in sorted(_parts(result), key=lambda path: -_part_bytes(_part(result, path))):
            if _size(result) <= self._budget:
                break
            result = _cut(result, path, lambda cut: _size(cut) <= self._budget)
        return result

    def present_discovery(self, result: DiscoveryResult) -> CallToolResult:
        result = self._discovery_within_budget(result)
        return CallToolResult(
            content=[TextContent(type="text", text=render_discovery(result))],
            structured_content=result.wire(),
        )

    @staticmethod
    def _modules_within(result: DiscoveryResult, budget: int) -> DiscoveryResult:
        """The first files of `modules` whose entries fit in `budget` bytes; the rest are counted."""
        sizes = [_json_bytes(module) + 1 for module in result.modules]
        kept, used = 0, 0
        while kept < len(sizes) and used + sizes[kept] <= budget:
            used += sizes[kept]
            kept += 1
        if kept == len(sizes):
            return result
        omitted = result.omitted_modules + len(sizes) - kept
        return result.model_copy(update={"modules": result.modules[:kept], "omitted_modules": omitted})

    def _discovery_within_budget(self, result: DiscoveryResult) -> DiscoveryResult:
        """The first tests, in collection order, that fit the budget; the rest are counted.

        One serialisation per test, then prefix sums: a 10,000-test collection is not
        serialised again for every candidate count.
        """

        def keeping(count: int) -> DiscoveryResult:
            omitted = result.omitted_tests + len(result.tests) - count
            return result.model_copy(update={"tests": result.tests[:count], "omitted_tests": omitted})

        def size(count: int) -> int:
            # The JSON of the result with an empty `tests` list, plus each kept test and a comma between two.
            items = prefix[count] + max(count - 1, 0)
            return empty + items + len(render_discovery(keeping(count)).encode())

        result = self._modules_within(result, self._budget // 4)
        empty = _json_bytes(keeping(0))
        prefix = [0]
        for test in result.tests:
            prefix.append(prefix[-1] + _json_bytes(test))
        if size(len(result.tests)) <= self._budget:
            return result
        return keeping(_largest_count(len(result.tests), lambda count: size(count) <= self._budget))
