"""Failure groups and skip reasons: a run's reports by cause, not by test (ADR 0014). Pure."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_mcp.domain.models import (
    Culprit,
    FailureGroup,
    Outcome,
    Phase,
    ReportedTest,
    Since,
    SkipReason,
    Symptom,
)

GROUPED: tuple[Outcome, ...] = ("failed", "error", "xpassed")
REASONED: tuple[Outcome, ...] = ("skipped", "xfailed")
MAX_MEMBER_ENTRIES = 12
"""At most this many entries in a group's `members`; past it, node ids are counted by module."""
MAX_MESSAGE_CHARS = 200
_RANGE_PARTS = 6  # past this many ranges, a parameter set is written as a count and its bounds

# Masks, applied in this order: a temporary path may hold numbers, a quoted literal may hold anything.
_TEMPORARY_PATH = re.compile(
    r"(?:/private)?/(?:tmp|var/folders|var/tmp)/\S*|\S*[/\\]pytest-of-[^/\\\s]+[/\\]\S*|[A-Za-z]:\\\S*\\Temp\\\S*"
)
_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,_]\d+)*(?:[eE][-+]?\d+)?(?![\w])")
_EXCEPTION_PREFIX = re.compile(r"^(?P<name>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failed)):")
# pytest's long traceback ends each entry with `path:line: Type` (its last entry) or `path:line: ` (the others);
# its short one with `path:line: in function`.
_FILE_LOCATION = re.compile(r"^(?!E )(?P<path>[^\s:>][^:\n]*?\.py):(?P<line>\d+):(?: (?P<what>.*))?$", re.MULTILINE)
_PARAMETRIZED = re.compile(r"^(?P<base>.*::[^:\[]*)\[(?P<param>.*)\]$")
_LAST_INTEGER = re.compile(r"^(?P<prefix>.*?)(?P<number>0|[1-9]\d*)(?P<suffix>\D*)$")


@dataclass(frozen=True)
class Signature:
    """What two reports must share to be one group: neither more (a missed merge) nor less (a wrong one)."""

    outcome: Outcome
    phase: Phase
    exception: str | None
    message: str
    crash: str | None

    @property
    def id(self) -> str:
        text = "\x1f".join((self.outcome, self.phase, self.exception or "", self.message, self.crash or ""))
        return "g" + hashlib.sha256(text.encode()).hexdigest()[:10]


def traceback_exception(traceback: str | None) -> str | None:
    """The exception type a pytest-layout traceback ends with (`path:line: TypeName`), if it does."""
    located = _FILE_LOCATION.findall(traceback or "")
    last = located[-1][2].strip() if located else ""
    return last if last.isidentifier() else None


def traceback_crash(traceback: str | None) -> str | None:
    """`path:line` of the deepest project frame a pytest-layout traceback names, if any."""
    frames = _project_frames(traceback)
    return frames[-1] if frames else None


def _project_frames(traceback: str | None) -> list[str]:
    """`path:line` of each project frame a pytest-layout traceback names, outermost first."""
    located = _FILE_LOCATION.findall(traceback or "")
    return [f"{path}:{line}" for path, line, _what in located if not _outside_project(path)]


def exception_of(test: ReportedTest, message: str | None = None) -> str | None:
    """The exception type: the reporter's, else the traceback's last entry, else the message's
    (`message`, else the report's)."""
    found = test.exception or traceback_exception(test.traceback)
    if found:
        return found
    first = (message or test.message or "").lstrip()
    if first.startswith("assert "):
        return "AssertionError"
    match = _EXCEPTION_PREFIX.match(first)
    return match["name"].rsplit(".", 1)[-1] if match else None


def frames_of(test: ReportedTest) -> tuple[str, ...]:
    """`path:line` of every project frame a failure's traceback shows, and its crash site: each is proof
    that its function was running when the test failed, whether or not the recorder saw it entered (a
    class's set-up that failed once and is re-raised for each of its tests enters nothing again)."""
    found = _project_frames(test.traceback)
    if test.crash:
        found.append(test.crash)
    return tuple(dict.fromkeys(found))


def crash_of(test: ReportedTest) -> str | None:
    """The deepest project frame: the reporter's, else the traceback's, else the test's own location (so
    that two tests whose crash site is unknown never meet by accident)."""
    return test.crash or traceback_crash(test.traceback) or test.location


def _outside_project(path: str) -> bool:
    return path.startswith(("/", "<")) or "site-packages" in path or "dist-packages" in path


def masked(message: str | None, node_id: str = "") -> str:
    """The first line of `message` with its variable parts masked, cut at MAX_MESSAGE_CHARS."""
    lines = (message or "").strip().splitlines()
    text = lines[0].strip() if lines else ""
    text = _TEMPORARY_PATH.sub("<tmp>", text)
    text = _ADDRESS.sub("<addr>", text)
    parametrized = _PARAMETRIZED.match(node_id)
    if parametrized and len(parametrized["param"]) > 1 and not _NUMBER.fullmatch(parametrized["param"]):
        # Whole words only: a parameter `ab` must not mask part of `abc`. Numbers are masked below.
        text = re.sub(rf"(?<!\w){re.escape(parametrized['param'])}(?!\w)", "<param>", text)
    text = _QUOTED.sub("<str>", text)
    text = _NUMBER.sub("<n>", text)
    return text[:MAX_MESSAGE_CHARS]


def _subtest(test: ReportedTest) -> tuple[str, str] | None:
    """(description, the failure's own message) of a subtest's report; None for any other report."""
    if not test.message or not test.message.startswith("subtest "):
        return None
    head, _, message = test.message.partition(": ")
    return head.removeprefix("subtest "), message


def signature_of(test: ReportedTest) -> Signature:
    subtest = _subtest(test)
    message = subtest[1] if subtest else test.message
    exception = exception_of(test, message)
    return Signature(test.outcome, test.phase, exception, masked(message, test.node_id), crash_of(test))


def member_name(test: ReportedTest) -> str:
    """The node id; for a subtest, which share their test's node id, followed by its description."""
    subtest = _subtest(test)
    return f"{test.node_id} {subtest[0]}" if subtest else test.node_id


def _grouped(reports: Iterable[ReportedTest]) -> list[tuple[str, Signature, list[ReportedTest]]]:
    """(id, signature, reports) for each group, largest first, ties in the order first seen."""
    found: dict[Signature, list[ReportedTest]] = {}
    for test in reports:
        if test.outcome in GROUPED:
            found.setdefault(signature_of(test), []).append(test)
    ranked = sorted(found.items(), key=lambda item: -len(item[1]))  # sorted() is stable
    ids: set[str] = set()
    grouped = []
    for signature, members in ranked:
        group_id = signature.id
        while group_id in ids:  # a hash collision within one run: still unique, still deterministic
            group_id += "x"
        ids.add(group_id)
        grouped.append((group_id, signature, members))
    return grouped


def failure_groups(
    reports: Iterable[ReportedTest],
    causes: Mapping[str, Culprit] | None = None,
    since: Callable[[Sequence[ReportedTest]], Since | None] | None = None,
    *,
    merge: Mapping[str, str] | None = None,
    compress: bool = True,
) -> tuple[FailureGroup, ...]:
    """Failures, errors and xpasses grouped by signature, largest first (ties: first seen first).

    `causes` names a culprit for each signature group whose evidence is strong, by the group's id.
    `merge` gives some of those groups a key: the groups of one key are one entry, the largest
    group's report as its evidence and each signature a symptom (one cause, ADR 0020); `cause_key`
    is a cause's. Every such report is in exactly one group; the representative is the group's first
    report. `since` labels a group's reports (new, preexisting, flaky); `compress=False` lists every
    member (what a kept run pages through).
    """
    causes = causes or {}
    merge = merge or {}
    merged: dict[str, list[tuple[str, Signature, list[ReportedTest]]]] = {}
    order: list[str] = []
    for group_id, signature, members in _grouped(reports):
        key = merge.get(group_id, group_id) if group_id in causes else group_id
        if key not in merged:
            merged[key] = []
            order.append(key)
        merged[key].append((group_id, signature, members))
    built = [_group(key, merged[key], causes, since, compress) for key in order]
    return tuple(sorted(built, key=lambda group: -group.count))


def cause_key(culprit: Culprit, *within: str | None) -> str:
    """The merge key of a cause's groups; `within` narrows it to some of them (one raise of its own)."""
    return "\x1f".join(("cause", culprit.file, culprit.function, *(part or "" for part in within)))


def _group(
    key: str,
    parts: list[tuple[str, Signature, list[ReportedTest]]],
    causes: Mapping[str, Culprit],
    since: Callable[[Sequence[ReportedTest]], Since | None] | None,
    compress: bool,
) -> FailureGroup:
    group_id, signature, first_members = parts[0]
    members = [test for _, _, part in parts for test in part]
    names = [member_name(test) for test in members]
    listed, compressed = compress_node_ids(names) if compress else (tuple(dict.fromkeys(names)), "")
    culprit = causes.get(group_id)
    symptoms: tuple[Symptom, ...] = ()
    ways = 0
    if len(parts) > 1 and culprit is not None:
        group_id = "g" + hashlib.sha256(key.encode()).hexdigest()[:10]
        symptoms, ways = _symptoms(parts)
    if len(members) == 1 and compress:
        return FailureGroup(
            id=group_id,
            count=1,
            representative=members[0],
            culprit=culprit,
            since=since(members) if since is not None else None,
            blocked=members[0].blocked,
        )
    return FailureGroup(
        id=group_id,
        count=len(members),
        outcome=signature.outcome,
        phase=signature.phase,
        exception=signature.exception,
        message=signature.message,
        crash=signature.crash,
        title=cause_title(culprit, len(members), len({sig.crash for _, sig, _ in parts}))
        if culprit is not None and symptoms
        else title(signature, len(members)),
        representative=first_members[0],
        members=listed,
        compressed=compressed,
        culprit=culprit,
        symptoms=symptoms,
        omitted_symptoms=ways - len(symptoms),
        since=since(members) if since is not None else None,
        blocked=first_members[0].blocked,
    )


MAX_SYMPTOMS = 6
"""A cause lists at most this many ways of failing, most first, and counts the rest; its title counts
every site. pyflakes' cause failed one harness assertion with eight lists of messages, three of
them once each: 2 KB of its 6.4 KB answer."""


def _symptoms(parts: list[tuple[str, Signature, list[ReportedTest]]]) -> tuple[tuple[Symptom, ...], int]:
    """The cause's signatures by exception and message, each with its count and its first site: the
    same check failing in twenty files is one symptom at twenty sites. The MAX_SYMPTOMS most common,
    and how many ways of failing there are."""
    found: dict[tuple[str | None, str], Symptom] = {}
    for _, signature, members in parts:
        key = (signature.exception, signature.message)
        known = found.get(key)
        if known is None:
            found[key] = Symptom(
                count=len(members), exception=signature.exception, message=signature.message, crash=signature.crash
            )
        else:
            found[key] = known.model_copy(update={"count": known.count + len(members), "sites": known.sites + 1})
    ranked = sorted(found.values(), key=lambda symptom: -symptom.count)[:MAX_SYMPTOMS]
    heads = (symptom.model_copy(update={"message": _head(symptom.message, symptom.exception)}) for symptom in ranked)
    return tuple(heads), len(found)


SYMPTOM_HEAD = 64
"""A symptom's message is its head: its group's representative shows one in full."""


def _head(message: str, exception: str | None) -> str:
    """The message's first SYMPTOM_HEAD characters, less a leading `package.module.Exception: `
    that names the symptom's `exception` again: the head is for what tells one symptom from another."""
    if exception:
        name, colon, rest = message.partition(": ")
        if colon and (name == exception or name.endswith(f".{exception}")):
            message = rest
    return message if len(message) <= SYMPTOM_HEAD else message[: SYMPTOM_HEAD - 1] + "…"


def cause_title(culprit: Culprit, count: int, sites: int) -> str:
    """`235 tests fail from one likely cause, at 21 sites: humanize/i18n.py::_ngettext (lines 102-120)`."""
    head = "1 test fails" if count == 1 else f"{count} tests fail"
    where = "at 1 site" if sites == 1 else f"at {sites} sites"
    return f"{head} from one likely cause, {where}: {culprit.where}"


def symptom_groups(reports: Iterable[ReportedTest]) -> dict[str, list[str]]:
    """Each failure's or error's signature group: its id and its tests' node ids, in run order; the
    symptoms a localization reads (an xpass is no failure of the code)."""
    return {
        group_id: [test.node_id for test in members]
        for group_id, signature, members in _grouped(reports)
        if signature.outcome in ("failed", "error")
    }


def skip_reasons(reports: Iterable[ReportedTest]) -> tuple[SkipReason, ...]:
    """Skips and xfails by (outcome, exact reason), largest first; reasons are not masked (a skip hides no bug)."""
    counts: dict[tuple[str, str], int] = {}
    for test in reports:
        if test.outcome in REASONED:
            key = (test.outcome, (test.message or "").strip().removeprefix("Skipped: "))
            counts[key] = counts.get(key, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: -item[1])
    return tuple(
        SkipReason(outcome="skipped" if outcome == "skipped" else "xfailed", reason=reason, count=count)
        for (outcome, reason), count in ranked
    )


_HEADS = {
    "failed": ("1 test fails", "{} tests fail the same way"),
    "error": ("1 test errors", "{} tests error the same way"),
    "xpassed": ("1 test passes unexpectedly (XPASS)", "{} tests pass unexpectedly (XPASS) the same way"),
}


def title(signature: Signature, count: int) -> str:
    """`180 tests fail the same way: ValueError at src/pkg/helper.py:42`; `1 test fails: ...` for one."""
    one, many = _HEADS[signature.outcome]
    head = one if count == 1 else many.format(count)
    phase = f" in {signature.phase}" if signature.phase != "call" else ""
    what = signature.exception or signature.message or "no message"
    where = f" at {signature.crash}" if signature.crash else ""
    return f"{head}{phase}: {what}{where}"


def compress_node_ids(node_ids: Sequence[str]) -> tuple[tuple[str, ...], str]:
    """Node ids as a few patterns, and how they were written (empty when every id is as given).

    Integer parameters of one test become a range in braces: `t.py::test_f[{0-179}]`, `[case-{1,4,7-9}]`;
    past MAX_MEMBER_ENTRIES entries, whole modules are counted: `t.py (37 tests)`.
    """
    entries = _entries(node_ids)
    return tuple(entry.text for entry in entries), _how(node_ids, entries)


@dataclass(frozen=True)
class _Entry:
    """One entry of a group's members: a node id or a pattern, the node ids it stands for, and how it was written."""

    text: str
    ids: tuple[str, ...]
    how: tuple[str, ...] = ()


def _how(node_ids: Sequence[str], entries: Sequence[_Entry]) -> str:
    twice = ["a node id reported more than once listed once"] if len(set(node_ids)) < len(node_ids) else []
    return "; ".join(dict.fromkeys([*twice, *(note for entry in entries for note in entry.how)]))


def _entries(node_ids: Sequence[str]) -> list[_Entry]:
    """compress_node_ids' entries, in run order, each with the node ids it stands for."""
    entries: list[_Entry | tuple[str, str, str]] = []  # an entry, or where a range of them goes
    ranged: dict[tuple[str, str, str], list[tuple[int, str]]] = {}
    for node_id in dict.fromkeys(node_ids):  # a test that fails in its call and its teardown; a test's subtests
        parametrized = _PARAMETRIZED.match(node_id)
        integer = _LAST_INTEGER.match(parametrized["param"]) if parametrized else None
        if parametrized is None or integer is None:
            entries.append(_Entry(node_id, (node_id,)))
            continue
        key = (parametrized["base"], integer["prefix"], integer["suffix"])
        if key not in ranged:
            ranged[key] = []
            entries.append(key)
        ranged[key].append((int(integer["number"]), node_id))
    listed: list[_Entry] = []
    for entry in entries:
        if isinstance(entry, _Entry):
            listed.append(entry)
            continue
        (base, prefix, suffix), numbered = entry, ranged[entry]
        numbers = sorted({number for number, _ in numbered})
        if len(numbered) == 1 or len(numbers) != len(numbered):
            listed += [_Entry(node_id, (node_id,)) for _, node_id in numbered]
            continue
        ranges = _ranges(numbers)
        how = ["integer parameters as ranges in braces ({0-179}: every id from 0 to 179)"]
        if " values from " in ranges:
            how.append(f"more than {_RANGE_PARTS} ranges as a count and its bounds")
        listed.append(_Entry(f"{base}[{prefix}{{{ranges}}}{suffix}]", tuple(i for _, i in numbered), tuple(how)))
    if len(listed) > MAX_MEMBER_ENTRIES:
        return _by_module([node_id for entry in listed for node_id in entry.ids])
    return listed


LISTED_MEMBER_CHARS = 120
"""How much of a group's members an answer whose run is kept lists (issue 41): all of them when their
entries fit in twice this many characters (the call that pages the others costs about this much);
else the first entry, then more while they stay within this many characters in all. The others are
counted in `omitted_members`, and get_test_run with the group's id pages through every one. Seven
failures of one cause, each with a 100-character node id, cost 1.4 KB listed in full in the text and
the structured content alike; a few short ids still fit."""


def with_paged_members(group: FailureGroup, names: Sequence[str], chars: int = LISTED_MEMBER_CHARS) -> FailureGroup:
    """`group` listing only the first entries of its members, within `chars` characters (the first always),
    and counting the node ids the others stand for in `omitted_members`; as it is when all its entries fit
    in twice `chars`. `names` are its members' names
    in run order, as the kept run pages through them (`failure_groups(..., compress=False)`)."""
    entries = _entries(names)
    if sum(len(entry.text) for entry in entries) <= 2 * chars:  # the pointer would cost about what it saves
        return group
    kept, used = entries[:1], len(entries[0].text)
    for entry in entries[1:]:
        used += len(entry.text)
        if used > chars:
            break
        kept.append(entry)
    if len(kept) == len(entries):
        return group
    twice = "a node id reported more than once listed once"
    how = [twice] if twice in group.compressed else []  # `names` are each once: the group's own words say so
    return group.model_copy(
        update={
            "members": tuple(entry.text for entry in kept),
            "compressed": "; ".join(dict.fromkeys([*how, *(note for entry in kept for note in entry.how)])),
            "omitted_members": len(set(names)) - sum(len(entry.ids) for entry in kept),
        }
    )


def _by_module(node_ids: list[str]) -> list[_Entry]:
    how = (f"counted by module past {MAX_MEMBER_ENTRIES} entries; get_test_run with the group's id lists them",)
    modules: dict[str, list[str]] = {}
    for node_id in node_ids:
        modules.setdefault(node_id.split("::", 1)[0], []).append(node_id)
    listed = [
        _Entry(ids[0] if len(ids) == 1 else f"{module} ({len(ids)} tests)", tuple(ids), how)
        for module, ids in modules.items()
    ]
    if len(listed) > MAX_MEMBER_ENTRIES:
        rest = tuple(node_id for entry in listed[MAX_MEMBER_ENTRIES - 1 :] for node_id in entry.ids)
        more = len(listed) - MAX_MEMBER_ENTRIES + 1
        last = _Entry(f"... {len(rest)} more tests in {more} more modules", rest, how)
        listed = [*listed[: MAX_MEMBER_ENTRIES - 1], last]
    return listed


def _ranges(numbers: list[int]) -> str:
    parts: list[str] = []
    start = previous = numbers[0]
    for number in numbers[1:]:
        if number != previous + 1:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
            start = number
        previous = number
    parts.append(str(start) if start == previous else f"{start}-{previous}")
    if len(parts) > _RANGE_PARTS:
        return f"{len(numbers)} values from {numbers[0]} to {numbers[-1]}"
    return ",".join(parts)
