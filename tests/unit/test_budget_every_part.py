"""The size budget covers every part of an answer: each list the result model holds, found in the model,
whatever it is and however deep (ADR 0019). A new part is covered the day it is added."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal

import pydantic_core
import pytest
from pydantic import BaseModel

from pytest_mcp.adapters.mcp.presenter import McpPresenter
from pytest_mcp.domain.models import FailureGroup, ReportedTest, RunResult, SkipReason, Summary

BUDGET = 8_000
LONG = 300  # characters of every text in a sampled item
OWN_RULES = {("tests",), ("groups",), ("command",)}  # cut by their own rules (ADR 0014), or never


def _bare(annotation: Any) -> Any:
    """The annotation without `| None`."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        (kept,) = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return kept
    return annotation


def sample(annotation: Any) -> Any:
    """A value of `annotation`, with every text in it LONG characters long."""
    annotation = _bare(annotation)
    origin = typing.get_origin(annotation)
    if annotation is str:
        return "x" * LONG
    if annotation is bool:
        return True
    if annotation in (int, float):
        return annotation(1)
    if origin is Literal:
        return typing.get_args(annotation)[0]
    if origin is typing.Annotated:
        return sample(typing.get_args(annotation)[0])
    if origin is tuple:
        return ()
    if origin is dict:
        return {}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation(**{name: sample(field.annotation) for name, field in annotation.model_fields.items()})
    raise AssertionError(f"no sample for {annotation}")


def list_parts(model: type[BaseModel], path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """(path, item type) of every list in the model, at any depth of its values."""
    found = []
    for name, field in model.model_fields.items():
        annotation = _bare(field.annotation)
        if typing.get_origin(annotation) is tuple:
            found.append(((*path, name), typing.get_args(annotation)[0]))
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found += list_parts(annotation, (*path, name))
    return found


PARTS = [(path, item) for path, item in list_parts(RunResult) if path not in OWN_RULES]


def with_part(model: type[BaseModel], path: tuple[str, ...], items: tuple[Any, ...], **values: Any) -> Any:
    """A `model` whose list at `path` holds `items`, its other required fields sampled."""
    for name, field in model.model_fields.items():
        if field.is_required() and name not in values:
            values[name] = sample(field.annotation)
    name, *rest = path
    values[name] = with_part(_bare(model.model_fields[name].annotation), tuple(rest), items) if rest else items
    return model(**values)


def answer_bytes(result: RunResult) -> tuple[int, dict[str, Any]]:
    answer = McpPresenter(BUDGET).present_run(result)
    structured = answer.structured_content or {}
    return len(pydantic_core.to_json(structured)) + len(answer.content[0].text.encode()), structured  # type: ignore[union-attr]


def test_the_model_has_the_parts_this_test_knows_of() -> None:
    assert {".".join(path) for path, _ in PARTS} >= {
        "reasons",
        "collection_errors",
        "coverage.files",
        "stopped_processes.commands",
        "notes",
        "affected.changed_files",
        "slowest",
    }


@pytest.mark.parametrize(("path", "item"), PARTS, ids=[".".join(path) for path, _ in PARTS])
def test_a_large_part_of_each_kind_is_cut_to_the_budget_and_the_answer_says_so(
    path: tuple[str, ...], item: Any
) -> None:
    items = tuple(sample(item) for _ in range(3 * BUDGET // LONG))
    result = with_part(RunResult, path, items, exit_code=1, summary=Summary(failed=1, total=1))

    size, structured = answer_bytes(result)

    assert size <= BUDGET
    kept = structured
    for name in path:
        kept = kept.get(name, {})
    assert 0 < len(kept) < len(items) or path == ("notes",)
    said = any(f"entries of {'.'.join(path)} left out" in note for note in structured.get("notes", ()))
    if path == ("reasons",):  # past the 10 most common, reasons are counted before any budget applies
        said = said or structured.get("omitted_reasons", 0) + len(kept) == len(items)
    assert said


def test_no_other_part_crowds_the_failure_groups_out() -> None:
    report = ReportedTest(node_id="t.py::test_x", outcome="failed", phase="call", message="assert 1 == 2")
    groups = tuple(
        FailureGroup(
            id=f"g{n:010x}",
            count=1,
            outcome="failed",
            phase="call",
            exception="AssertionError",
            message="assert <n> == <n>",
            crash=f"t.py:{n}",
            title="t.py::test_x",
            representative=report,
            members=("t.py::test_x",),
            compressed="",
        )
        for n in range(5)
    )
    reasons = tuple(SkipReason(outcome="skipped", reason=f"{n} " + "y" * LONG, count=1) for n in range(200))
    result = RunResult(exit_code=1, summary=Summary(failed=5, skipped=200, total=205), groups=groups, reasons=reasons)

    size, structured = answer_bytes(result)

    assert size <= BUDGET
    assert len(structured["groups"]) == 5
    assert 0 < len(structured["reasons"]) < 200
