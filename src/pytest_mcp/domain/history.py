"""A project's recent failures, per owner: what tells a new failure from an old or a flaky one (ADR 0020). Pure.

The history is kept where runs are kept (in memory, or in Redis with --run-store), never in the
project's tree, and it is bounded: past its limits the oldest entries go first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

from pydantic import Field

from pytest_mcp.domain.models import ReportedTest, Since, _Value
from pytest_mcp.domain.runs import RunSpec

MAX_FAILING = 10_000
MAX_FLAKY = 1_000
MAX_DIGESTS = 50_000
MAX_FILES = 5_000
MAX_PASSED = 100_000


class History(_Value):
    """What the project's previous runs left: its failing tests and how they failed, the tests seen
    flaky, and the digests of the functions of the files they imported, as their tests last passed."""

    failing: dict[str, str] = Field(
        default_factory=dict, description="Node id -> the signature group id of its failure in the last run it ran in."
    )
    flaky: tuple[str, ...] = Field((), description="Node ids seen flaky, the most recent last.")
    digests: dict[str, str] = Field(
        default_factory=dict,
        description="`file::function` -> a digest of its code at the last run, or, for a changed function a "
        "failing test ran, at the last run before its change.",
    )
    files: tuple[str, ...] = Field((), description="The files whose functions `digests` holds.")
    heads: tuple[str, ...] = Field(
        (), description="Functions that differed from git's HEAD when a failing test ran them: still read against it."
    )
    passed: tuple[str, ...] = Field(
        (),
        description="Tests that passed in the last run they ran in, as `passed_key`s: what tells a suspect flaky "
        "failure from a new one.",
    )
    last_run: float = Field(0.0, description="When the last run ended, in seconds since the epoch; 0: never.")


def passed_key(node_id: str) -> str:
    """A node id as `History.passed` keeps it: 64 bits of its digest, so 100,000 passing tests cost 1.8 MB
    at most, not their ids' length; a collision could only call one new failure suspect flaky."""
    return hashlib.blake2b(node_id.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def since(
    members: Sequence[ReportedTest],
    signatures: Mapping[str, str],
    history: History,
    flaky_now: Iterable[str],
    unchanged: Iterable[str] = (),
    passed: frozenset[str] | None = None,
) -> Since | None:
    """How a group's failing tests stand against the history: flaky (now or before), else already failing
    the same way; in the project's first run, none of the rest can be told; else suspect flaky (it
    passed in the last run it ran in, and it is `unchanged`: nothing it runs changed since), else new.
    An xpass is no failure and is not labelled: a group of xpasses has no label. `signatures` gives each
    failing node id its signature group's id in this run; `passed`, `History.passed` as a set."""
    flaky = set(flaky_now) | set(history.flaky)
    steady = set(unchanged)
    passed = frozenset(history.passed) if passed is None else passed
    counts = {"new": 0, "preexisting": 0, "flaky": 0, "unknown": 0, "suspect_flaky": 0}
    first_run = not history.last_run
    for node_id in dict.fromkeys(test.node_id for test in members if test.is_failure):
        if node_id in flaky:
            counts["flaky"] += 1
        elif node_id in history.failing and history.failing[node_id] == signatures.get(node_id):
            counts["preexisting"] += 1
        elif first_run:
            counts["unknown"] += 1
        elif node_id in steady and passed_key(node_id) in passed:
            counts["suspect_flaky"] += 1
        else:
            counts["new"] += 1
    return Since(**counts) if any(counts.values()) else None


def _in_scope(node_id: str, spec: RunSpec) -> bool:
    """Whether this run ran the test, so that not failing now means it passed (or is gone).

    A run that selected by marker, keyword, last failures or affected tests may have left it out:
    its entry stays."""
    if spec.markers or spec.keywords or spec.last_failed or spec.affected:
        return False
    if not spec.node_ids:
        return True
    return any(
        node_id == wanted or node_id.startswith((wanted.rstrip("/") + "/", wanted + "::")) for wanted in spec.node_ids
    )


def updated(
    history: History,
    spec: RunSpec,
    signatures: Mapping[str, str],
    flaky_now: Iterable[str],
    digests: Mapping[str, str],
    files: Iterable[str] = (),
    implicated: Mapping[str, str] | None = None,
    passed: Iterable[str] = (),
) -> History:
    """The history after this run: its failures (node id -> signature) replace what it ran, the newly
    flaky are added, the tests that `passed` now (their `passed_key`s) are remembered as passing (and
    those failing now no longer), and the digests it read replace theirs, except those of the `implicated` functions
    (changed, and run by a failing test), which keep the digest from before their change; each part
    cut to its bound, oldest first."""
    failing = {node_id: sig for node_id, sig in history.failing.items() if not _in_scope(node_id, spec)}
    for node_id in list(failing):
        if node_id in signatures:
            del failing[node_id]  # re-added below, as the most recent
    failing.update(signatures)
    flaky = [node_id for node_id in history.flaky if node_id not in set(flaky_now)] + list(dict.fromkeys(flaky_now))
    # An implicated function keeps what it changed since: its digest from before the change, or none
    # (the next run compares it with git's HEAD again, or reads it as new in its file).
    held = dict(implicated or {})
    fresh = {key: value for key, value in digests.items() if key not in held}
    merged = {key: value for key, value in history.digests.items() if key not in fresh}
    merged.update(fresh)
    heads = [key for key in history.heads if key not in fresh and held.get(key, "head") == "head"]
    heads += [key for key, basis in held.items() if basis == "head" and key not in set(heads)]
    read = list(dict.fromkeys([*(file for file in history.files if file not in set(files)), *files]))
    now = dict.fromkeys(passed)
    gone = {passed_key(node_id) for node_id in signatures}
    kept = [key for key in history.passed if key not in now and key not in gone] + list(now)
    return History(
        failing=dict(list(failing.items())[-MAX_FAILING:]),
        flaky=tuple(flaky[-MAX_FLAKY:]),
        digests=dict(list(merged.items())[-MAX_DIGESTS:]),
        files=tuple(read[-MAX_FILES:]),
        heads=tuple(heads[-MAX_FLAKY:]),
        passed=tuple(kept[-MAX_PASSED:]),
        last_run=history.last_run,
    )
