"""A project's recent failures, per owner: what tells a new failure from an old or a flaky one (ADR 0020). Pure.

The history is kept where runs are kept (in memory, or in Redis with --run-store), never in the
project's tree, and it is bounded: past its limits the oldest entries go first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import Field

from pytest_mcp.domain.models import ReportedTest, Since, _Value
from pytest_mcp.domain.runs import RunSpec

MAX_FAILING = 10_000
MAX_FLAKY = 1_000
MAX_DIGESTS = 10_000


class History(_Value):
    """What the project's previous runs left: its failing tests and how they failed, the tests seen
    flaky, and the digests of the functions the last localization read."""

    failing: dict[str, str] = Field(
        default_factory=dict, description="Node id -> the signature group id of its failure in the last run it ran in."
    )
    flaky: tuple[str, ...] = Field((), description="Node ids seen flaky, the most recent last.")
    digests: dict[str, str] = Field(
        default_factory=dict, description="`file::function` -> a digest of its code, at the last localization."
    )
    last_run: float = Field(0.0, description="When the last run ended, in seconds since the epoch; 0: never.")


def since(
    members: Sequence[ReportedTest], signatures: Mapping[str, str], history: History, flaky_now: Iterable[str]
) -> Since:
    """How a group's tests stand against the history: flaky (now or before), else already failing the
    same way, else new. `signatures` gives each failing node id its signature group's id in this run."""
    flaky = set(flaky_now) | set(history.flaky)
    counts = {"new": 0, "preexisting": 0, "flaky": 0}
    for node_id in dict.fromkeys(test.node_id for test in members):
        if node_id in flaky:
            counts["flaky"] += 1
        elif node_id in history.failing and history.failing[node_id] == signatures.get(node_id):
            counts["preexisting"] += 1
        else:
            counts["new"] += 1
    return Since(**counts)


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
) -> History:
    """The history after this run: its failures (node id -> signature) replace what it ran, the newly
    flaky are added, and the digests it read replace theirs; each part cut to its bound, oldest first."""
    failing = {node_id: sig for node_id, sig in history.failing.items() if not _in_scope(node_id, spec)}
    for node_id in list(failing):
        if node_id in signatures:
            del failing[node_id]  # re-added below, as the most recent
    failing.update(signatures)
    flaky = [node_id for node_id in history.flaky if node_id not in set(flaky_now)] + list(dict.fromkeys(flaky_now))
    merged = {key: value for key, value in history.digests.items() if key not in digests}
    merged.update(digests)
    return History(
        failing=dict(list(failing.items())[-MAX_FAILING:]),
        flaky=tuple(flaky[-MAX_FLAKY:]),
        digests=dict(list(merged.items())[-MAX_DIGESTS:]),
        last_run=history.last_run,
    )
