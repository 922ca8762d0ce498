"""What `fail_with` scripts: a failure, checked when it is given, with its scope and how often it fires."""

from __future__ import annotations

import posixpath
import signal as signals
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast, get_args

from pytest_mcp.adapters.fake.script import ScriptedTest, ScriptError
from pytest_mcp.adapters.fake.selection import Argument, UsageError

FailureKind = Literal["timeout", "crash", "collection_error", "usage_error", "internal_error"]
FAILURE_KINDS: tuple[FailureKind, ...] = get_args(FailureKind)
CallKind = Literal["run", "collect"]

# Signals that end a process by default; SIGINT (pytest turns it into KeyboardInterrupt) and
# SIGUSR1 (the runner's request for faulthandler's dump) do not.
KILLING_SIGNALS = (
    "SIGABRT",
    "SIGALRM",
    "SIGBUS",
    "SIGFPE",
    "SIGHUP",
    "SIGILL",
    "SIGKILL",
    "SIGPIPE",
    "SIGPROF",
    "SIGQUIT",
    "SIGSEGV",
    "SIGSYS",
    "SIGTERM",
    "SIGTRAP",
    "SIGUSR2",
    "SIGVTALRM",
    "SIGXCPU",
    "SIGXFSZ",
)
_OWN_WORDS = {
    "timeout": "the error names the call's timeout and the test that was running",
    "crash": "the error names the signal and the test that was running",
}


@dataclass(frozen=True)
class ScriptedFailure:
    """An ending `fail_with` asked for (FakeTestRunner.fail_with says what each kind does).

    Scoped (`node_id` given), it fires on every call that selects its test or collects its module;
    unscoped, on the next call. `times` is how many calls it fires on; None: until cleared.
    """

    kind: FailureKind
    message: str | None = None
    node_id: str | None = None
    signal: str | None = None
    line: int | None = None
    on: CallKind | None = None
    times: int | None = 1
    traceback: str | None = None  # a recorded collection error's own traceback

    @property
    def kills(self) -> bool:
        return self.kind in ("timeout", "crash")

    @property
    def scoped(self) -> bool:
        return self.node_id is not None

    def applies_to(self, call: CallKind) -> bool:
        return self.on in (None, call)

    def strikes(self, test: ScriptedTest, first: ScriptedTest) -> bool:
        """Whether the run dies at `test`: a test this failure is scoped to, or unscoped, the first selected."""
        if self.node_id is None:
            return test is first
        return Argument.parse(0, self.node_id).selects(test)


def checked_failure(
    kind: object,
    message: object,
    node_id: object,
    signal: object,
    line: object,
    on: object,
    times: object,
    tests: Sequence[ScriptedTest],
) -> ScriptedFailure:
    """The failure `fail_with` was given, or ScriptError naming the first wrong argument and why."""
    if kind not in FAILURE_KINDS:
        raise ScriptError(f"kind: {kind!r} is not one of {', '.join(FAILURE_KINDS)}")
    if on not in ("run", "collect", None):
        raise ScriptError(f"on: {on!r} is not 'run', 'collect' or None")
    if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 1):
        raise ScriptError(f"times: must be a number of calls, 1 or more (or None, the default); got {times!r}")
    if message is not None:
        if kind in _OWN_WORDS:
            raise ScriptError(f"message: a {kind} has no message of its own ({_OWN_WORDS[kind]}); leave it out")
        if not isinstance(message, str) or not message.strip():
            raise ScriptError(f"message: must be a non-empty string; got {message!r}")
    if signal is not None:
        _check_signal(kind, signal)
    if line is not None:
        if kind not in _OWN_WORDS:
            raise ScriptError(f"line: only a timeout or a crash names a line (of the test it stops); not a {kind}")
        if isinstance(line, bool) or not isinstance(line, int) or line < 1:
            raise ScriptError(f"line: must be a line number, 1 or more; got {line!r}")
    if node_id is not None:
        _check_scope(kind, node_id, on, tests)
    if times is None and node_id is None:
        times = 1  # unscoped: the next call; scoped: every call that selects it, until cleared
    # node_id and signal were checked above; the casts only tell the type checker so.
    return ScriptedFailure(
        kind,
        message,
        cast(str | None, node_id),
        cast(str | None, signal),
        line,
        on,
        times,
    )


def _check_signal(kind: object, signal: object) -> None:
    if kind != "crash":
        raise ScriptError(f"signal: only a crash is a signal; a {kind} is not")
    if isinstance(signal, int) and not isinstance(signal, bool):
        try:
            hint = f" ({signals.Signals(signal).name} is {signal} here)"
        except ValueError:
            hint = ""
        raise ScriptError(f"signal: give the signal's name, like 'SIGSEGV', not the number {signal}{hint}")
    if signal not in KILLING_SIGNALS:
        raise ScriptError(
            f"signal: {signal!r} is not a signal that kills a process; use one of {', '.join(KILLING_SIGNALS)}"
        )


def _check_scope(kind: object, node_id: object, on: object, tests: Sequence[ScriptedTest]) -> None:
    if not isinstance(node_id, str) or not node_id:
        raise ScriptError(f"node_id: must be a node id or a path relative to the root; got {node_id!r}")
    if kind in ("usage_error", "internal_error"):
        raise ScriptError(
            f"node_id: a {kind.replace('_', ' ')} ends the whole call, whatever it selects; leave node_id out"
        )
    if node_id.startswith(("/", "-")) or ".." in node_id.partition("::")[0].split("/"):
        raise ScriptError(f"node_id: {node_id!r} must be relative to the root, like 'tests/test_x.py'")
    if kind == "collection_error":
        if "::" in node_id or "[" in node_id or not node_id.endswith(".py"):
            raise ScriptError(
                f"node_id: a collection error is a test module's; give the module's path, like 'tests/test_x.py', "
                f"not {node_id!r}"
            )
        if posixpath.normpath(node_id) != node_id:
            raise ScriptError(f"node_id: write the module's path as pytest prints it, {posixpath.normpath(node_id)!r}")
        return
    if on == "collect":
        raise ScriptError(
            f"on: a {kind} in a test happens when the test runs, and a discovery runs none; "
            "use on='run' or leave it out"
        )
    try:
        argument = Argument.parse(0, node_id)
    except UsageError as exc:
        raise ScriptError(f"node_id: pytest would refuse {node_id!r}: {exc.lines[0].removeprefix('ERROR: ')}") from None
    if not any(argument.selects(test) for test in tests):
        raise ScriptError(
            f"node_id: {node_id!r} selects no scripted test; script the test first, or name a scripted test, "
            "file or directory"
        )
