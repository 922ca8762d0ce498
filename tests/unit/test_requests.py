from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_mcp.domain.errors import InvalidArguments
from pytest_mcp.domain.requests import DiscoverTestsRequest, ExecuteTestsRequest, RequestPolicy


def rejected_fields(arguments: Any, policy: RequestPolicy, model: Any = ExecuteTestsRequest) -> dict[str, str]:
    with pytest.raises(InvalidArguments) as caught:
        model.parse(arguments, policy)
    return {error.field: error.reason for error in caught.value.errors}


@pytest.mark.parametrize(
    "node_id",
    [
        "tests/test_x.py::test_param[☃ snow]",
        "tests/test_x.py::TestOuter::TestInner::test_y",
        "tests/test_x.py::test_z[a::b/c]",
        "tests/test_x.py::test_z[../../etc]",
        "tests",
        ".",
    ],
)
def test_ordinary_node_ids_are_accepted_verbatim(node_id: str, policy: RequestPolicy) -> None:
    assert ExecuteTestsRequest.parse({"node_ids": [node_id]}, policy).node_ids == [node_id]


@pytest.mark.parametrize(
    ("node_id", "reason"),
    [
        ("--version", "starts with '-'"),
        ("-pX", "starts with '-'"),
        ("-c/etc/passwd", "starts with '-'"),
        ("/etc/passwd", "absolute path"),
        ("../outside.py", "outside the project root"),
        ("tests/../../outside.py::test", "outside the project root"),
        ("tests/test_x.py\x00", "control character"),
        ("tests/test_x.py\n--co", "control character"),
        ("tests/\x1b[31mred", "control character"),
        ("   ", "empty or blank"),
    ],
)
def test_hostile_node_ids_are_rejected_naming_the_field(node_id: str, reason: str, policy: RequestPolicy) -> None:
    fields = rejected_fields({"node_ids": ["tests/ok.py", node_id]}, policy)

    assert set(fields) == {"node_ids"}
    assert "[1]" in fields["node_ids"]
    assert reason in fields["node_ids"]


def test_a_symlink_that_escapes_the_root_is_rejected(policy: RequestPolicy, tmp_path_factory: Any) -> None:
    outside = tmp_path_factory.mktemp("outside")
    os.symlink(outside, policy.root / "tests" / "escape")

    assert "outside the project root" in rejected_fields({"node_ids": ["tests/escape/test_a.py"]}, policy)["node_ids"]
    assert "outside the project root" in rejected_fields({"path": "tests/escape"}, policy, DiscoverTestsRequest)["path"]


@pytest.mark.parametrize(
    ("arguments", "field", "reason"),
    [
        ({"extra_args": ["-x"]}, "extra_args", "unknown parameter"),
        ({"env": {"A": "1"}}, "env", "unknown parameter"),
        ({"node_ids": "tests"}, "node_ids", "valid list"),
        ({"maxfail": 0}, "maxfail", "greater than or equal to 1"),
        ({"maxfail": "3"}, "maxfail", "valid integer"),
        ({"maxfail": 2, "failfast": True}, "failfast", "cannot be combined with maxfail"),
        ({"verbosity": 3}, "verbosity", "less than or equal to 2"),
        ({"timeout": 121}, "timeout", "configured maximum is 120s"),
        ({"timeout": 0}, "timeout", "greater than or equal to 1"),
        ({"timeout": 1.5}, "timeout", "valid integer"),
        ({"detail": "everything"}, "detail", "'summary', 'failures' or 'all'"),
        ({"markers": ""}, "markers", "empty"),
        ({"keywords": "x" * 1001}, "keywords", "limit is 1000"),
        ({"show_capture": "yes"}, "show_capture", "valid boolean"),
        ({"node_ids": ["t.py"] * 501}, "node_ids", "limit is 500"),
    ],
)
def test_invalid_arguments_name_the_field_and_the_reason(
    arguments: dict[str, Any], field: str, reason: str, policy: RequestPolicy
) -> None:
    fields = rejected_fields(arguments, policy)

    assert field in fields
    assert reason in fields[field]


def test_every_problem_is_reported_at_once(policy: RequestPolicy) -> None:
    fields = rejected_fields({"node_ids": ["-x"], "rootdir": "/", "timeout": -1}, policy)

    assert set(fields) == {"node_ids", "rootdir", "timeout"}


def test_requests_cannot_be_built_without_a_policy() -> None:
    with pytest.raises(Exception, match="must be built with"):
        ExecuteTestsRequest.model_validate({"node_ids": ["tests"]})


def test_the_published_schema_carries_the_policy_limits(policy: RequestPolicy) -> None:
    schema = ExecuteTestsRequest.with_limits(ExecuteTestsRequest.base_schema(), policy)

    assert schema["additionalProperties"] is False
    assert schema["properties"]["timeout"]["anyOf"][0]["maximum"] == 120
    assert schema["properties"]["node_ids"]["maxItems"] == 500
    assert set(schema["properties"]) == {
        "node_ids",
        "markers",
        "keywords",
        "maxfail",
        "failfast",
        "verbosity",
        "show_capture",
        "timeout",
        "detail",
        "last_failed",
        "failed_first",
        "workers",
        "coverage",
    }


def test_a_default_timeout_above_the_maximum_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="default timeout 100s"):
        RequestPolicy(root=tmp_path, default_timeout=100, max_timeout=50)
