"""Tool requests, parsed once at the edge: after `parse`, a request is proven safe to run."""

from __future__ import annotations

import copy
import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from pytest_mcp.domain.errors import MAX_LISTED_ERRORS, FieldError, InvalidArguments, field_errors
from pytest_mcp.domain.node_ids import argument_paths

if TYPE_CHECKING:  # serving lists the tools with this module, and imports no result model (test_lean_startup)
    from pytest_mcp.domain.runs import RunSpec

MAX_WORKERS = 64
MAX_SLOWEST = 50

Detail = Literal["summary", "failures", "all"]


@dataclass(frozen=True)
class RequestPolicy:
    """Limits that bound every request and its answer; set by configuration, enforced here."""

    root: Path
    default_timeout: int = 300
    max_timeout: int = 3600
    max_node_ids: int = 500
    max_node_id_length: int = 2000
    max_expression_length: int = 1000
    detach_after: float = 50.0
    """Seconds an execute_tests call waits before it answers "running" (0: it waits to the end);
    also the longest `wait` a get_test_run call may ask for."""
    localize: float = 0.5
    """A second pass after a run with failures may take this many times the run's wall time (0: none)."""
    localize_max_seconds: float = 120.0
    """And never more than this."""
    text_output_chars: int = 800
    text_output_chars_when_passing: int = 240
    coverage_files: int = 10
    coverage_missing_chars: int = 300

    def __post_init__(self) -> None:
        if not 1 <= self.default_timeout <= self.max_timeout:
            raise ValueError(
                f"default timeout {self.default_timeout}s must be between 1 and the maximum {self.max_timeout}s"
            )


_FORBIDDEN_CATEGORIES = {
    "Cc": "a control character (NUL, newline, escape, ...)",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
    "Cs": "a lone surrogate, which is not valid text",
}


def _check_text(value: str, max_length: int) -> str:
    if len(value) > max_length:
        raise ValueError(f"is {len(value)} characters long; the limit is {max_length}")
    if not value.strip():
        raise ValueError("must not be empty or blank; omit the field instead")
    for character in value:
        problem = _FORBIDDEN_CATEGORIES.get(unicodedata.category(character))
        if problem:
            raise ValueError(f"contains {problem}")
    return value


def _check_not_an_option(value: str) -> str:
    """Refuse a value that pytest's command line would read as something other than itself.

    pytest scans its raw argv for `-p<plugin>` before parsing, `--` or not, so nothing we pass may
    start with '-', even where it is an option's value. From pytest 8.2 on, argparse reads an
    argument starting with '@' as a file of further arguments (a response file), after `--` too.
    architecture/security.md lists every such reading and where it is refused.
    """
    if value.startswith("-"):
        raise ValueError("starts with '-', which pytest would read as an option")
    if value.startswith("@"):
        raise ValueError("starts with '@', which pytest (8.2 and later) would read as a file of further arguments")
    return value


def _check_expression(value: str) -> str:
    # Expressions are attached to their option (`-kEXPR`); argparse reads `-k=EXPR` as `-k EXPR`.
    _check_not_an_option(value)
    if value.startswith("="):
        raise ValueError("starts with '=', which pytest's option parser would drop")
    return value


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _check_path(value: str, root: Path) -> str:
    """Accept a node id or path whose path part stays inside `root` however it is read.

    pytest makes a path absolute lexically (`os.path.abspath`: `..` removed before any symlink
    is followed) against its working directory, the real root, and then the OS follows the
    symlinks left in it. `Path.resolve()` follows symlinks first, so `deep/../../x` with
    `deep -> a/b/c` resolves inside the root while pytest reads ROOT/../x. Every reading must
    stay inside: the lexical path, what the OS makes of it, and what the OS makes of the raw one.
    """
    _check_not_an_option(value)
    if value.startswith(("/", "\\")) or PurePosixPath(value).is_absolute() or (len(value) > 1 and value[1] == ":"):
        raise ValueError("is an absolute path; give a path relative to the project root")
    real_root = os.path.realpath(root)
    for part in argument_paths(value):
        lexical = os.path.normpath(os.path.join(real_root, part))
        if not _inside(lexical, real_root):
            raise ValueError("leads outside the project root")
        for followed in (os.path.realpath(lexical), os.path.realpath(os.path.join(real_root, part))):
            if not _inside(followed, real_root):
                raise ValueError("leads outside the project root through a symbolic link")
    return value


class _Request(BaseModel):
    """A tool's arguments. The tool's name is not the request's: the MCP side names each tool once
    (adapters/mcp/tools.py), and names it in the errors its caller reads."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)

    @classmethod
    def parse(cls, arguments: Mapping[str, Any] | None, policy: RequestPolicy) -> Self:
        """Validate raw tool arguments, or raise InvalidArguments naming the bad fields.

        Unknown keys are set aside before validation, so a request with 200,000 of them costs
        what a request with one does; InvalidArguments lists the first problems and counts the rest.
        """
        given = dict(arguments or {})
        unknown = [key for key in given if key not in cls.model_fields]
        errors: list[FieldError] = []
        try:
            request = cls.model_validate({key: given[key] for key in given if key in cls.model_fields}, context=policy)
        except ValidationError as exc:
            errors = field_errors(exc)
        listed = unknown[: max(MAX_LISTED_ERRORS - len(errors), 0)]
        errors += [_unknown_parameter(cls, str(key)) for key in listed]
        if errors:
            raise InvalidArguments(errors, omitted=len(unknown) - len(listed))
        return request

    @classmethod
    def base_schema(cls) -> dict[str, Any]:
        """The model's own JSON Schema without titles: what every policy's schema starts from."""
        schema = cls.model_json_schema()
        schema.pop("title", None)
        for prop in schema["properties"].values():
            prop.pop("title", None)
        return schema

    @staticmethod
    def with_limits(base: Mapping[str, Any], policy: RequestPolicy) -> dict[str, Any]:
        """A copy of `base` with the policy's limits (lengths, counts, the timeout) written into it."""
        schema: dict[str, Any] = copy.deepcopy(dict(base))
        properties = schema["properties"]
        for name in ("markers", "keywords"):
            if name in properties:
                properties[name]["anyOf"][0]["maxLength"] = policy.max_expression_length
        if "path" in properties:
            properties["path"]["anyOf"][0]["maxLength"] = policy.max_node_id_length
        if "node_ids" in properties:
            properties["node_ids"]["maxItems"] = policy.max_node_ids
            properties["node_ids"]["items"]["maxLength"] = policy.max_node_id_length
        if "timeout" in properties:
            properties["timeout"]["anyOf"][0]["maximum"] = policy.max_timeout
            properties["timeout"]["description"] += f" Default {policy.default_timeout}."
        if "wait" in properties:
            properties["wait"]["description"] += f" At most, and by default, {policy.detach_after:g}."
        return schema

    @classmethod
    def _policy(cls, info: ValidationInfo) -> RequestPolicy:
        if not isinstance(info.context, RequestPolicy):
            raise TypeError(f"{cls.__name__} must be built with {cls.__name__}.parse(arguments, policy)")
        return info.context

    @field_validator("node_ids", mode="before", check_fields=False)
    @classmethod
    def _not_too_many(cls, value: Any, info: ValidationInfo) -> Any:
        # Before each item is validated: a million wrong items would make a million errors.
        policy = cls._policy(info)
        if isinstance(value, list) and len(value) > policy.max_node_ids:
            raise ValueError(f"has {len(value):,} entries; the limit is {policy.max_node_ids}")
        return value

    @field_validator("node_ids", check_fields=False)
    @classmethod
    def _node_ids(cls, value: list[str], info: ValidationInfo) -> list[str]:
        policy = cls._policy(info)
        problems = []
        for index, node_id in enumerate(value):
            try:
                _check_text(node_id, policy.max_node_id_length)
                _check_path(node_id, policy.root)
            except ValueError as exc:
                problems.append(f"[{index}] {exc}")
        if problems:
            raise ValueError("; ".join(problems[:5]) + (" ..." if len(problems) > 5 else ""))
        return value

    @field_validator("markers", "keywords", check_fields=False)
    @classmethod
    def _expression(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        return _check_expression(_check_text(value, cls._policy(info).max_expression_length))


def _unknown_parameter(model: type[BaseModel], key: str) -> FieldError:
    # Field names come from the caller; keep an absurd one from flooding messages and logs.
    name = key[:64]
    if not model.model_fields:
        return FieldError(name, "unknown parameter; this tool takes no parameters")
    return FieldError(name, f"unknown parameter; accepted parameters are: {', '.join(model.model_fields)}")


ToolArguments = _Request
"""The base of every tool's request: what the MCP side's tools are typed by, with no list of them."""


class _Selects(_Request):
    """Which tests: the fields that choose them, as pytest's own arguments do."""

    node_ids: list[str] = Field(
        default_factory=list,
        description="Test files, directories or node ids relative to the root. Empty: pytest's default selection.",
    )
    markers: str | None = Field(None, description="Marker expression, as for `pytest -m`.")
    keywords: str | None = Field(None, description="Keyword expression, as for `pytest -k`.")


class RunRequest(_Request):
    """What every tool that runs tests takes besides its selection: how long the run may take, and
    what its answer lists. A tool that runs tests composes these with its own fields and says, in
    `spec`, what it runs; the execute_tests use case runs any of them."""

    verbosity: int = Field(
        -1,
        ge=-2,
        le=2,
        description="Verbosity of text_output, from -2 (-qq) to 2 (-vv), added to the project's own; 0 adds no flag. "
        "Default -1 (-q): quicker than 0 on large suites, and pytest 9 then counts passing subtests.",
    )
    show_capture: bool = Field(True, description="Include captured stdout/stderr of failing tests.")
    timeout: int | None = Field(None, ge=1, description="Seconds before the run is stopped.")
    detail: Detail = Field(
        "failures",
        description="'summary': counts only; 'failures': non-passing tests; 'all': every test, and the command and "
        "output tail even when the run was clean.",
    )
    slowest: int = Field(
        0,
        ge=0,
        le=MAX_SLOWEST,
        description="List this many of the slowest tests, slowest first, each with its setup, call and teardown "
        f"summed; 0 lists none. At most {MAX_SLOWEST}.",
    )

    @field_validator("timeout")
    @classmethod
    def _timeout(cls, value: int | None, info: ValidationInfo) -> int | None:
        policy = cls._policy(info)
        if value is not None and value > policy.max_timeout:
            raise ValueError(f"is {value}s; the configured maximum is {policy.max_timeout}s")
        return value

    def spec(self, policy: RequestPolicy) -> RunSpec:
        """The run this request asks for, every default applied."""
        return self._spec(policy)

    def _spec(self, policy: RequestPolicy, **run: Any) -> RunSpec:
        """The run with this group's fields, and `run`: what the composing request adds (RunSpec's
        fields, by keyword, so that the spec is validated as a whole)."""
        from pytest_mcp.domain.models import RunFacts
        from pytest_mcp.domain.runs import RunSpec

        return RunSpec(
            verbosity=self.verbosity,
            show_capture=self.show_capture,
            timeout=self.timeout or policy.default_timeout,
            include_passed=self.detail == "all",
            # A field of this group named after a fact of the run asks pytest's process for it (ADR 0019).
            facts={name: value for name, value in self if name in _ASKING and name in RunFacts.model_fields and value},
            **run,
        )


_ASKING = frozenset(RunRequest.model_fields)
"""The fields that may ask for a fact: RunRequest's own (a composing request's `affected` selects)."""


class _Stops(_Request):
    """When a run stops early: after some failures."""

    maxfail: int | None = Field(None, ge=1, le=1_000_000, description="Stop after this many failures.")
    failfast: bool = Field(False, description="Stop at the first failure (same as maxfail=1).")

    @field_validator("failfast")
    @classmethod
    def _failfast(cls, value: bool, info: ValidationInfo) -> bool:
        # Fields validate in declaration order, so maxfail is already in info.data.
        if value and info.data.get("maxfail") is not None:
            raise ValueError("cannot be combined with maxfail; give one of them")
        return value

    @property
    def effective_maxfail(self) -> int | None:
        return 1 if self.failfast else self.maxfail


# The bases give the schema's order: the selection, when to stop, how long and what to answer, then its own.
class ExecuteTestsRequest(RunRequest, _Stops, _Selects):
    """What execute_tests accepts, and nothing more."""

    last_failed: bool = Field(False, description="Run only the tests that failed last time (pytest's cache, --lf).")
    failed_first: bool = Field(False, description="Run last time's failures first, then the rest (--ff).")
    workers: int | Literal["auto"] | None = Field(
        None, description="Run in parallel with pytest-xdist (-n): a number of workers, or 'auto'."
    )
    coverage: bool = Field(False, description="Measure coverage with pytest-cov: total and the worst files.")
    affected: bool = Field(
        False,
        description="Run only the tests affected by changes since the last affected run (pytest-testmon). "
        "Everything runs the first time, and after a change to a file that is not Python. Combines with the "
        "other selections.",
    )

    @field_validator("workers", mode="before")
    @classmethod
    def _workers(cls, value: Any) -> Any:
        # One clear message instead of one per member of the union.
        is_count = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_WORKERS
        if value is not None and value != "auto" and not is_count:
            raise ValueError(f"must be 'auto' or a number of workers from 1 to {MAX_WORKERS}")
        return value

    def spec(self, policy: RequestPolicy) -> RunSpec:
        return self._spec(
            policy,
            node_ids=tuple(self.node_ids),
            markers=self.markers,
            keywords=self.keywords,
            maxfail=self.effective_maxfail,
            last_failed=self.last_failed,
            failed_first=self.failed_first,
            workers=self.workers,
            coverage=self.coverage,
            affected=self.affected,
        )


class LastFailedRequest(RunRequest, _Stops):
    """What last_failed accepts: when to stop, how long and what to answer. It selects the tests itself,
    with pytest's own cache: those that failed last time (`--lf`); when none is recorded, pytest runs
    every test (its default for `--lf`, `--last-failed-no-failures all`)."""

    def spec(self, policy: RequestPolicy) -> RunSpec:
        return self._spec(policy, maxfail=self.effective_maxfail, last_failed=True)


class DiscoverTestsRequest(_Request):
    """What discover_tests accepts, and nothing more."""

    path: str | None = Field(None, description="A file, directory or node id relative to the root.")
    markers: str | None = Field(None, description="Marker expression, as for `pytest -m`.")
    keywords: str | None = Field(None, description="Keyword expression, as for `pytest -k`.")

    @field_validator("path")
    @classmethod
    def _path(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        policy = cls._policy(info)
        _check_text(value, policy.max_node_id_length)
        _check_path(value, policy.root)
        return value


class CheckEnvironmentRequest(_Request):
    """What check_environment accepts: nothing."""


RUN_ID_PATTERN = r"^[A-Za-z0-9_-]{16,64}$"


class GetTestRunRequest(_Request):
    """What get_test_run accepts: the run, how long to wait for it, and whether to stop it."""

    run_id: str = Field(
        pattern=RUN_ID_PATTERN,
        description="The run_id of a 'running' answer in this session.",
    )
    wait: float | None = Field(
        None,
        ge=0,
        allow_inf_nan=False,
        description="Seconds to wait for the run to finish before answering; a longer wait than the server's "
        "limit is cut to it, and the answer says so.",
    )
    cancel: bool = Field(False, description="Stop the run and every process it started, and confirm it.")
    node_ids: list[str] = Field(
        default_factory=list,
        description="Of a finished run: these tests' full reports (each must be one of its non-passing tests).",
    )
    group: str | None = Field(
        None,
        pattern=r"^g[0-9a-f]{10,16}$",
        description="Of a finished run: this failure group's member ids (its `id` in `groups`), in `members`, "
        "from `offset` on, as many as fit in 12,000 characters; `tests` is empty: `node_ids` gives full reports.",
    )
    offset: int = Field(
        0,
        ge=0,
        description="Of a finished run: its non-passing reports (or those of `node_ids` or `group`) from this "
        "position on (failures and errors first, then xpassed, skipped, xfailed), as many as fit the answer's size "
        "budget, so page sizes vary; the answer's page.next_offset gives the next page, null on the last.",
    )

    @property
    def pages(self) -> bool:
        """Whether the call asks for reports of the run rather than its answer."""
        return bool(self.node_ids) or self.group is not None or self.offset > 0 or "offset" in self.model_fields_set

    def wait_cut(self, policy: RequestPolicy) -> bool:
        """The wait asked for is longer than a call may wait."""
        return self.wait is not None and self.wait > policy.detach_after

    def wait_seconds(self, policy: RequestPolicy) -> float:
        return policy.detach_after if self.wait is None else min(self.wait, policy.detach_after)
