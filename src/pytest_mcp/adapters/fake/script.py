"""What the fake plays back: scripted tests, each with the reports pytest would write for it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cached_property
from os import PathLike
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from pytest_mcp.domain.errors import field_errors
from pytest_mcp.domain.groups import traceback_crash, traceback_exception
from pytest_mcp.domain.models import Outcome, Phase, ReportedTest
from pytest_mcp.domain.node_ids import NodeId

# The phases pytest can report each outcome in; the first is the default.
PHASES: Mapping[str, tuple[Phase, ...]] = {
    "passed": ("call",),
    "failed": ("call",),
    "skipped": ("setup", "call"),
    "xfailed": ("call", "setup"),
    "xpassed": ("call",),
    "error": ("setup", "teardown"),
}
_DEFAULT_MESSAGES: Mapping[str, str] = {
    "failed": "assert False",
    "error": "RuntimeError: fixture failed",
    "skipped": "Skipped: unconditional skip",
}


class ScriptError(ValueError):
    """An argument of the test double is wrong: a script, a recording, or a value given to `fail_with`,
    `connect` or another method. Raised by the call that received it; the message names the argument
    (or the field of a script) and the reason."""


_CRASH_SITE = re.compile(r"[^/\s:-][^\s:]*\.py:[1-9]\d*")
ROOT_MARK = "<root>"
"""Stands for the project's root directory in scripted and recorded text; replaced when played back."""


class ScriptedTest(BaseModel):
    """One test as FakeTestRunner plays it back: the outcome pytest would report, and its evidence.

    `message` is the report's message verbatim, as pytest words it (`assert 4 == 5`,
    `RuntimeError: setup exploded`, `Skipped: no network`, an xfail reason). `phase` is where
    the outcome happens: an `error` in `teardown` is a test that passed and then failed in
    teardown (pytest counts both); a `skipped` test is skipped in `setup` (a marker) unless
    told `call` (`pytest.skip()` in the body). `line` is the 1-based line of the definition.
    `crash` is where a failure or error happens, `path:line` relative to the root (the deepest frame
    in the project's own code, as the real runner reads it: the assertion's line, a helper's, a
    fixture's); without it, the test's own `line`. A failure group's id is made of it (ADR 0014),
    so script the line a real run names to get the real run's group id.
    `runs` are the project functions the test runs (`shop/price.py::gross_price`), what the run
    records for it (or a second pass, before Python 3.12), each with one of the lines it runs or not
    (`shop/price.py::gross_price:4`, as a run on Python 3.12 and later records the lines of the
    functions a test enters: a function is as suspicious as its most telling line); a failing test
    that is `flaky` passes when that pass repeats it. One that `starts_process` (a CLI's test through a
    subprocess) ran code no record shows: it is never suspect flaky.
    `outcomes` is a sequence played over successive runs of the test, one a run, the last one
    repeated (`("failed", "passed")`: a failure that passes when the agent runs it again); `outcome`
    is then its first. The other fields hold for every outcome they fit (a message for a failure,
    not for a pass).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    node_id: str = Field(min_length=1)
    outcome: Outcome = "passed"
    message: str | None = None
    traceback: str | None = None
    duration: float = Field(default=0.0, ge=0)
    markers: tuple[str, ...] = ()
    stdout: str | None = None
    stderr: str | None = None
    line: int | None = Field(default=None, ge=1)
    phase: Phase | None = None
    crash: str | None = None
    runs: tuple[str, ...] = ()
    flaky: bool = False
    outcomes: tuple[Outcome, ...] = ()
    starts_process: bool = False

    @model_validator(mode="before")
    @classmethod
    def _first_of_the_outcomes(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get("outcomes"):
            outcomes = data["outcomes"]
            if isinstance(outcomes, str):
                raise ValueError(
                    f"outcomes: must be a list of outcomes, not the string {outcomes!r}; write [{outcomes!r}]"
                )
            outcomes = tuple(outcomes) if isinstance(outcomes, Iterable) else outcomes
            given = data.get("outcome")
            if isinstance(outcomes, tuple) and given not in (None, outcomes[0]):
                raise ValueError(
                    f"outcome: {given!r} is not the first of outcomes {list(outcomes)!r}; give one of them"
                )
            if isinstance(outcomes, tuple):
                data = {**data, "outcome": outcomes[0], "outcomes": outcomes}
        return data

    @field_validator("node_id")
    @classmethod
    def _is_a_test_id(cls, value: str) -> str:
        # Split as pytest splits an argument: at the first `[`, then at `::`.
        path, *names = value.partition("[")[0].split("::")
        if not path or value.startswith(("/", "-")) or ".." in path.split("/"):
            raise ValueError("must be a node id relative to the root, like 'tests/test_x.py::test_y'")
        if not names or not all(names):
            raise ValueError(
                f"{value!r} names no test: a test's node id is its file, then `::` and its name, "
                "like 'tests/test_x.py::test_y' or 'tests/test_x.py::TestClass::test_y[param]'"
            )
        return value

    @field_validator("markers", mode="before")
    @classmethod
    def _marker_names(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError(f"must be a list of marker names, not the string {value!r}; write [{value!r}]")
        if isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
            value = tuple(value)
            for index, name in enumerate(value):
                if not isinstance(name, str) or not name.isidentifier():
                    raise ValueError(f"[{index}] {name!r} is not a marker name (a Python identifier, like 'slow')")
        return value

    @field_validator("runs", mode="before")
    @classmethod
    def _function_keys(cls, value: Any) -> Any:
        return checked_functions(value)

    @cached_property
    def functions(self) -> tuple[str, ...]:
        """The keys of the functions it runs, once each, whether `runs` names their lines or not."""
        return tuple(dict.fromkeys(checked_run(entry)[0] for entry in self.runs))

    @cached_property
    def lines(self) -> tuple[tuple[str, int], ...]:
        """The (function key, line) pairs `runs` names: what a run on Python 3.12 and later records."""
        pairs = (checked_run(entry) for entry in self.runs)
        return tuple((key, line) for key, line in pairs if line is not None)

    @field_validator("flaky")
    @classmethod
    def _only_a_failure_is_flaky(cls, value: bool, info: ValidationInfo) -> bool:
        outcome = info.data.get("outcome")
        if value and outcome is not None and outcome not in ("failed", "error"):
            raise ValueError(f"only a failing test (outcome 'failed' or 'error') passes when repeated, not {outcome!r}")
        return value

    @field_validator("phase")
    @classmethod
    def _phase_fits_the_outcome(cls, value: Phase | None, info: ValidationInfo) -> Phase | None:
        outcome = str(info.data.get("outcome"))
        if value is not None and outcome in PHASES and value not in PHASES[outcome]:
            raise ValueError(
                f"{value!r} is impossible for outcome {outcome!r}; use one of {', '.join(map(repr, PHASES[outcome]))}"
            )
        return value

    @field_validator("crash")
    @classmethod
    def _is_a_site(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return value
        if _CRASH_SITE.fullmatch(value) is None or ".." in value.split("/"):
            raise ValueError(
                f"{value!r} is not a crash site: the file relative to the root, then its line, like 'src/cart.py:12'"
            )
        if info.data.get("outcome") not in ("failed", "error"):
            raise ValueError(f"only a failed or error test has a crash site, not a {info.data.get('outcome')!r} one")
        if info.data.get("traceback") is not None:
            raise ValueError("give crash or traceback, not both: a scripted traceback names its own crash site")
        return value

    @model_validator(mode="after")
    def _default_phase(self) -> Self:
        if self.phase is None:
            object.__setattr__(self, "phase", PHASES[self.outcome][0])
        for index, outcome in enumerate(self.outcomes[1:], start=1):
            try:
                self._as(outcome)
            except ValidationError as exc:
                reason = exc.errors(include_url=False)[0]["msg"].removeprefix("Value error, ")
                raise ValueError(f"outcomes[{index}]: {outcome!r}: {reason}") from None
        return self

    def _as(self, outcome: Outcome) -> ScriptedTest:
        """This test as it plays when its run ends `outcome`: the fields that fit that outcome kept."""
        fields = self.model_dump(exclude={"outcomes", "phase"} if self.phase not in PHASES[outcome] else {"outcomes"})
        failing = outcome in ("failed", "error")
        if not failing:
            fields.update(crash=None, traceback=None, flaky=False, stdout=None, stderr=None)
        if outcome == "passed" or (self.outcome in ("failed", "error")) != failing:
            fields["message"] = None  # a failure's message is no skip reason, nor a pass's
        return ScriptedTest.model_validate({**fields, "outcome": outcome})

    @cached_property
    def plays(self) -> tuple[ScriptedTest, ...]:
        """What each successive run of it plays: one per outcome of `outcomes`, the last one repeated."""
        if not self.outcomes:
            return (self,)
        return (self.model_copy(update={"outcomes": ()}), *(self._as(outcome) for outcome in self.outcomes[1:]))

    def played(self, runs_before: int) -> ScriptedTest:
        """What its run plays after `runs_before` runs of it."""
        plays = self.plays
        return plays[min(runs_before, len(plays) - 1)]

    @cached_property
    def id(self) -> NodeId:
        """The node id taken apart (once: selection asks for it often)."""
        return NodeId.parse(self.node_id)

    @cached_property
    def file(self) -> str:
        return self.id.path

    @property
    def function(self) -> str:
        """The test function's name, without class or parameters: what faulthandler prints."""
        return self.id.function

    def keywords(self) -> set[str]:
        """The names `-k` matches: directories below the root, module, classes, test, markers."""
        return {*self.file.split("/"), *self.id.named, *self.markers}

    def reports(self, root: str | None = None) -> list[ReportedTest]:
        """The reports pytest writes for this test, in order (two for a teardown error).

        `<root>` in a text becomes `root` (`.` when there is none)."""
        phase = self.phase or PHASES[self.outcome][0]
        failing = self.outcome in ("failed", "error")
        message = self.message if self.message is not None else _DEFAULT_MESSAGES.get(self.outcome)

        def rooted(text: str | None) -> str | None:
            return text.replace(ROOT_MARK, root or ".") if text else text

        traceback = rooted(self.traceback or _synthetic_traceback(self, message or "")) if failing else None
        report = ReportedTest(
            node_id=self.node_id,
            outcome=self.outcome,
            phase=phase,
            location=f"{self.file}:{self.line}" if self.line else self.file,
            message=rooted(message),
            traceback=traceback,
            duration=self.duration,
            stdout=rooted(self.stdout or None) if failing else None,
            stderr=rooted(self.stderr or None) if failing else None,
            # What the reporter reads from pytest's own traceback, read here from the scripted one.
            exception=traceback_exception(traceback) if failing else None,
            crash=traceback_crash(traceback) if failing else None,
        )
        if self.outcome == "error" and phase == "teardown":
            passed = ReportedTest(node_id=self.node_id, outcome="passed", phase="call", location=report.location)
            return [passed, report]
        return [report]


_FUNCTION_KEY = re.compile(r"[^:\s]+\.py::[A-Za-z_]\w*(\.(<locals>|[A-Za-z_]\w*))*")


def checked_function(value: object) -> str:
    """A project function's key, `file::qualified name` (what a culprit names); ValueError saying why not."""
    if not isinstance(value, str):
        raise ValueError(f"must be a function's key as a string, not {type(value).__name__}")
    path = value.split("::", 1)[0]
    if not _FUNCTION_KEY.fullmatch(value) or path.startswith(("/", "-")) or ".." in path.split("/"):
        raise ValueError(
            f"{value!r} is not a function's key: its file relative to the root, `::` and its qualified name, "
            "like 'shop/price.py::gross_price' or 'shop/cart.py::Cart.total'"
        )
    return value


_LINE = re.compile(r"(?P<key>.+\.py::[^:]+):(?P<line>[1-9][0-9]*)")


def checked_run(value: object) -> tuple[str, int | None]:
    """One of `runs`: a function's key, or a key and one of its lines the test runs (`shop/price.py::gross:4`),
    as (key, line or None); ValueError saying why not."""
    found = _LINE.fullmatch(value) if isinstance(value, str) else None
    if found is None:
        return checked_function(value), None
    return checked_function(found["key"]), int(found["line"])


def checked_functions(value: Any) -> Any:
    """`runs`: a list of function keys, each with one of its lines or not (a string alone is refused: it is
    one key, not a list)."""
    if isinstance(value, str):
        raise ValueError(f"must be a list of function keys, not the string {value!r}; write [{value!r}]")
    if isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
        value = tuple(value)
        for index, key in enumerate(value):
            try:
                checked_run(key)
            except ValueError as exc:
                raise ValueError(f"[{index}] {exc}") from None
        return tuple(dict.fromkeys(value))
    return value


def _synthetic_traceback(test: ScriptedTest, message: str) -> str:
    """A traceback in pytest's layout for a scripted failure that has none of its own."""
    if message.startswith("[XPASS(strict)]"):
        return message
    head = message.split(":", 1)[0]
    if message.startswith("assert "):
        exception = "AssertionError"
    elif head and head.replace(".", "").isidentifier():
        exception = head
    else:
        exception = "Exception"
    lines = [f"E       {line}" if line else "E" for line in message.splitlines() or [message]]
    crash = test.crash or f"{test.file}:{test.line or 1}"
    if crash.rpartition(":")[0] != test.file:  # in a helper's file: the test's frame, then the helper's
        lines = [
            f"{test.file}:{test.line or 1}: ",
            "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _",
            "",
            *lines,
        ]
    return "\n".join([f"def {test.function}():", *lines, "", f"{crash}: {exception}"])


def scripted(fields: Any, where: str) -> ScriptedTest:
    """A ScriptedTest from its fields, or ScriptError naming each bad field under `where`."""
    try:
        return ScriptedTest.model_validate(fields)
    except ValidationError as exc:
        problems = field_errors(exc, prefix=where, fields=tuple(ScriptedTest.model_fields), show_input=True)
        raise ScriptError("; ".join(map(str, problems))) from None


def tests_from_dict(script: Mapping[str, str | Mapping[str, Any]]) -> list[ScriptedTest]:
    """`{node_id: outcome}` or `{node_id: {"outcome": ..., "message": ..., ...}}` as scripted tests.

    Raises ScriptError naming the node id and field of every problem.
    """
    if not isinstance(script, Mapping):
        raise ScriptError(f"a script is a mapping of node id to outcome, not {type(script).__name__}")
    tests = []
    problems: list[str] = []
    for node_id, value in script.items():
        fields: Mapping[str, Any]
        if isinstance(value, str):
            fields = {"outcome": value}
        elif isinstance(value, Mapping):
            fields = value
        else:
            problems.append(f"[{node_id!r}]: must be an outcome or a mapping of fields, not {value!r}")
            continue
        if "node_id" in fields:
            problems.append(f"[{node_id!r}].node_id: the node id is the key; leave it out of the fields")
            continue
        try:
            tests.append(scripted({"node_id": node_id, **fields}, f"[{node_id!r}]"))
        except ScriptError as exc:
            problems.append(str(exc))
    if problems:
        raise ScriptError("invalid script: " + "; ".join(problems))
    return tests


def checked_tests(tests: object) -> list[ScriptedTest]:
    """The runner's `tests` argument, checked: ScriptError names the argument or the item that is wrong."""
    if isinstance(tests, str | bytes | Mapping) or not isinstance(tests, Iterable):
        hint = (
            "; for a mapping of node id to outcome use FakeTestRunner.from_dict" if isinstance(tests, Mapping) else ""
        )
        raise ScriptError(f"tests: must be an iterable of ScriptedTest, not {type(tests).__name__}{hint}")
    checked = []
    for index, test in enumerate(tests):
        if not isinstance(test, ScriptedTest):
            raise ScriptError(
                f"tests[{index}]: must be a ScriptedTest, not {type(test).__name__}; "
                "build tests from mappings with FakeTestRunner.from_dict or script()"
            )
        checked.append(test)
    return checked


def checked_root(root: object) -> Path | None:
    """The runner's `root` argument as an absolute path; ScriptError when it is not a path."""
    if root is None:
        return None
    if not isinstance(root, str | PathLike) or not str(root):
        raise ScriptError(f"root: must be a directory's path, not {root!r}")
    return Path(root).expanduser().resolve()


class LeftRunning:
    """The processes scripted tests leave running, which runs report as the real runner's warden stops them."""

    def __init__(self) -> None:
        self._by_test: dict[str | None, tuple[str, ...]] = {}

    def script(self, commands: tuple[str, ...], node_id: str | None, known: Mapping[str, object]) -> None:
        """`commands` for the test `node_id` (None: every run), cut to 80 characters; none clears them."""
        for command in commands:
            if not isinstance(command, str) or not command.strip():
                raise ScriptError(f"leave_running: each command must be a non-empty string; got {command!r}")
        if node_id is not None and node_id not in known:
            raise ScriptError(f"node_id: {node_id!r} is not a scripted test")
        cut = tuple(c if len(c) <= 80 else c[:77] + "..." for c in commands)
        if cut:
            self._by_test[node_id] = cut
        else:
            self._by_test.pop(node_id, None)

    def of(self, node_id: str | None) -> tuple[str, ...]:
        return self._by_test.get(node_id, ())


def checked_plugins(plugins: Iterable[str]) -> Iterable[str]:
    """The runner's `plugins` argument: a list of distribution names, not one name."""
    if isinstance(plugins, str):
        raise ScriptError(f"plugins: must be a list of distribution names, not the string {plugins!r}")
    return plugins
