"""The fake's engine: the failures armed for the calls to come, and what a call selects once they fired."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_mcp.adapters.fake.affected import AffectedData
from pytest_mcp.adapters.fake.endings import DEFAULT_BROKEN_MODULE, Call, collection_error, usage_error
from pytest_mcp.adapters.fake.failures import CallKind, ScriptedFailure
from pytest_mcp.adapters.fake.last_failed import LastFailed
from pytest_mcp.adapters.fake.script import ScriptedTest, ScriptError
from pytest_mcp.adapters.fake.selection import Argument, UsageError, collect, deselect
from pytest_mcp.domain.models import CollectionError
from pytest_mcp.domain.runs import RunReport, RunSpec


@dataclass
class _Armed:
    """A scripted failure and how many more calls it fires on (None: until cleared)."""

    failure: ScriptedFailure
    remaining: int | None


class ArmedFailures:
    """The failures `fail_with` scripted, in order, each until it is used up or cleared.

    A scoped failure (with a node id) fires on every call that selects its test or collects its
    module; an unscoped one on the next call of its kind, which takes it.
    """

    def __init__(self) -> None:
        self._armed: list[_Armed] = []

    def arm(self, failure: ScriptedFailure) -> None:
        self._armed.append(_Armed(failure, failure.times))

    def clear(self, node_id: str | None = None) -> None:
        """Forget every failure, or those scoped to `node_id`; ScriptError when none is."""
        if node_id is None:
            self._armed.clear()
            return
        kept = [armed for armed in self._armed if armed.failure.node_id != node_id]
        if len(kept) == len(self._armed):
            scoped = sorted({a.failure.node_id for a in self._armed if a.failure.node_id is not None})
            raise ScriptError(f"node_id: no failure is scripted for {node_id!r}; scripted for: {scoped or 'none'}")
        self._armed[:] = kept

    def broken_modules(self) -> list[tuple[str, ScriptedFailure]]:
        """The modules broken until cleared, each with its failure: what a recording keeps as collection errors."""
        return [
            (armed.failure.node_id, armed.failure)
            for armed in self._armed
            if armed.failure.kind == "collection_error" and armed.failure.node_id and armed.remaining is None
        ]

    def scoped(self, call: CallKind) -> list[ScriptedFailure]:
        return [armed.failure for armed in self._armed if armed.failure.scoped and armed.failure.applies_to(call)]

    def take_unscoped(self, call: CallKind) -> ScriptedFailure | None:
        """The first unscoped failure for this kind of call, which this call uses up."""
        for armed in self._armed:
            if not armed.failure.scoped and armed.failure.applies_to(call):
                self.fired(armed.failure)
                return armed.failure
        return None

    def fired(self, failure: ScriptedFailure) -> None:
        for armed in self._armed:
            if armed.failure is failure:
                if armed.remaining is not None:
                    armed.remaining -= 1
                    if armed.remaining <= 0:
                        self._armed.remove(armed)
                return


@dataclass(frozen=True)
class Selected:
    """A call's selection once collection went well enough to go on."""

    collected: int
    tests: tuple[ScriptedTest, ...]
    errors: tuple[CollectionError, ...]
    status: str | None
    not_run: int = 0  # affected: unaffected tests left out, as pytest-testmon leaves them out


def select(
    call: Call,
    kind: CallKind,
    tests: Sequence[ScriptedTest],
    failures: ArmedFailures,
    pending: ScriptedFailure | None,
    last_failed: LastFailed,
    affected: AffectedData | None = None,
) -> Selected | RunReport:
    """Collect, deselect and order as pytest would; a usage error's report when pytest refuses.

    The modules broken for this call (scoped collection errors, and `pending`, the call's unscoped
    failure) fail to import, and fire; pytest's cache (`last_failed`) learns what was collected.
    With `affected` (testmon's data) unaffected tests are left out as testmon leaves them out.
    """
    spec = call.spec
    broken = {
        failure.node_id: failure
        for failure in failures.scoped(kind)
        if failure.kind == "collection_error" and failure.node_id is not None
    }
    if pending is not None and pending.kind == "collection_error":
        broken.setdefault(DEFAULT_BROKEN_MODULE, pending)
    try:
        collection = collect(tests, broken, call.targets, call.root)
    except UsageError as exc:
        return usage_error(exc, call)
    collected = list(collection.tests)
    skipped: list[str] = []
    if isinstance(spec, RunSpec) and spec.last_failed and last_failed.ids:
        initial = {Argument.parse(0, target).path for target in call.targets}
        known = {test.file for test in tests} | set(broken)
        collected, skipped = last_failed.collect(collected, collection.modules, initial, known)
    fired = [module for module in collection.broken if module not in skipped]
    if pending is not None and pending.kind == "collection_error" and DEFAULT_BROKEN_MODULE not in fired:
        fired.insert(0, DEFAULT_BROKEN_MODULE)  # unscoped: whatever the call selects
    errors = tuple(collection_error(module, broken[module], call.root) for module in fired)
    for module in dict.fromkeys(fired):
        if broken[module] is not pending:
            failures.fired(broken[module])
    for module in collection.modules:
        if module not in skipped:
            last_failed.collected(module, module in fired, tests)
    if collection.not_found:
        return usage_error(UsageError(collection.not_found, len(collected)), call, errors)
    not_collected = 0
    if affected is not None:
        collected, not_collected = affected.collected(collected)
    try:
        selected = deselect(collected, spec.markers, spec.keywords)
    except UsageError as exc:
        return usage_error(exc, call, errors)
    left_out = 0
    if affected is not None:
        kept = affected.selected(selected)
        selected, left_out = kept, len(selected) - len(kept)
    status = None
    if isinstance(spec, RunSpec) and (spec.last_failed or spec.failed_first):
        selected, _, line = last_failed.order(
            selected, last_failed=spec.last_failed, failed_first=spec.failed_first, skipped_files=len(skipped)
        )
        status = f"run-last-failure: {line}" if spec.verbosity >= 0 else None
    return Selected(len(collected), tuple(selected), errors, status, not_collected + left_out)
