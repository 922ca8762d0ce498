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


@pytest.mark.parametrize(
    "value",
    ["@/etc/passwd", "@/proc/self/environ", "@list.txt", "@tests", "@/dev/zero", "@fifo::test_x"],
)
def test_a_response_file_is_rejected_for_node_ids_and_path(value: str, policy: RequestPolicy) -> None:
    """pytest 8.2+ reads `@FILE` as more arguments, even after `--`: no value may start with '@'."""
    (policy.root / "@list.txt").write_text("../outside/test_x.py\n")

    node_ids = rejected_fields({"node_ids": [value]}, policy)["node_ids"]
    path = rejected_fields({"path": value}, policy, DiscoverTestsRequest)["path"]

    for reason in (node_ids, path):
        assert "starts with '@'" in reason
        assert "file of further arguments" in reason


@pytest.mark.parametrize("field", ["markers", "keywords"])
@pytest.mark.parametrize(("value", "reason"), [("@args", "starts with '@'"), ("=slow", "starts with '='")])
def test_expressions_that_argparse_would_reread_are_rejected(
    field: str, value: str, reason: str, policy: RequestPolicy
) -> None:
    """`-k=slow` is read by argparse as `-k slow`: the '=' would vanish from the expression."""
    assert reason in rejected_fields({field: value}, policy)[field]


def test_a_symlink_followed_by_dotdot_is_judged_as_pytest_reads_it(policy: RequestPolicy, tmp_path: Path) -> None:
    """pytest removes `..` lexically before the OS follows links; Path.resolve() follows links first.

    With `deep -> a/b/c`, resolve() puts `deep/../../outside` at ROOT/a/outside, inside the root,
    while pytest reads ROOT/../outside.
    """
    (policy.root / "a" / "b" / "c").mkdir(parents=True)
    os.symlink("a/b/c", policy.root / "deep")
    (policy.root / "a" / "outside").mkdir()

    fields = rejected_fields({"node_ids": ["deep/../../outside/test_x.py::test_x"]}, policy)
    path = rejected_fields({"path": "deep/../../outside"}, policy, DiscoverTestsRequest)["path"]

    assert "outside the project root" in fields["node_ids"]
    assert "outside the project root" in path


def test_the_path_part_is_checked_the_way_every_pytest_version_splits_it(policy: RequestPolicy) -> None:
    """pytest < 8 takes the path up to `::`; later versions stop at the first `[` as well."""
    accepted = ExecuteTestsRequest.parse({"node_ids": ["tests/t.py::test_z[x/../../../../etc]"]}, policy)
    assert accepted.node_ids == ["tests/t.py::test_z[x/../../../../etc]"]

    reason = rejected_fields({"node_ids": ["tests[/../../../outside/t.py"]}, policy)["node_ids"]
    assert "outside the project root" in reason

    # Whole, this climbs out and back in; cut at `[`, as pytest 8 and 9 cut it, it stays out.
    back_in = f"../outside[/../{policy.root.name}/tests"
    assert "outside the project root" in rejected_fields({"node_ids": [back_in]}, policy)["node_ids"]


def test_a_path_that_stays_inside_both_ways_is_accepted(policy: RequestPolicy) -> None:
    (policy.root / "a" / "b").mkdir(parents=True)
    os.symlink("a/b", policy.root / "inner")

    request = ExecuteTestsRequest.parse({"node_ids": ["inner/../tests", "a/b/../../tests::t"]}, policy)

    assert request.node_ids == ["inner/../tests", "a/b/../../tests::t"]


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
    assert set(schema["properties"]) == set(ExecuteTestsRequest.model_fields)


def test_a_default_timeout_above_the_maximum_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="default timeout 100s"):
        RequestPolicy(root=tmp_path, default_timeout=100, max_timeout=50)


def test_two_hundred_thousand_unknown_keys_are_counted_not_listed(policy: RequestPolicy) -> None:
    """Each unknown key once became its own error: 2.6 MB of keys made a 79.6 MB answer."""
    arguments: dict[str, Any] = {f"key{index}": 1 for index in range(200_000)}
    arguments["timeout"] = "soon"

    with pytest.raises(InvalidArguments) as caught:
        ExecuteTestsRequest.parse(arguments, policy)

    error = caught.value
    assert len(error.errors) == 20
    assert error.errors[0].field == "timeout", "the known fields' problems come first"
    assert error.omitted == 200_000 - 19
    assert str(error).endswith("; and 199,981 more problems")
    assert len(str(error)) < 5000


def test_a_million_node_ids_are_refused_by_their_count_alone(policy: RequestPolicy) -> None:
    fields = rejected_fields({"node_ids": [1] * 1_000_000}, policy)

    assert fields == {"node_ids": "has 1,000,000 entries; the limit is 500"}
