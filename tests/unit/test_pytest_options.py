"""Both runners start (or report) pytest with the options built in one place."""

from __future__ import annotations

import pytest

from pytest_mcp.adapters.fake.runner import FakeTestRunner
from pytest_mcp.adapters.pytest_options import COVERAGE_PLACEHOLDER, collect_options, run_options
from pytest_mcp.domain.runs import CollectSpec, RunSpec

pytestmark = pytest.mark.anyio

EVERY_OPTION = RunSpec(
    verbosity=1,
    markers="slow",
    keywords="db",
    maxfail=2,
    show_capture=False,
    last_failed=True,
    failed_first=True,
    workers=2,
    coverage=True,
)


def test_a_run_spec_becomes_the_options_a_person_would_type() -> None:
    assert run_options(EVERY_OPTION) == [
        "--color=no",
        "-v",
        "-mslow",
        "-kdb",
        "--maxfail=2",
        "--show-capture=no",
        "--last-failed",
        "--failed-first",
        "--numprocesses=2",
        "--cov",
        f"--cov-report=json:{COVERAGE_PLACEHOLDER}",
    ]
    # The default run is `pytest -q`: at 0 pytest works out and compares each test's file path
    # before printing its dot, about 1.5% of a large run's instructions (valgrind, ADR 0007).
    assert run_options(RunSpec()) == ["--color=no", "-q"]
    assert run_options(RunSpec(verbosity=0)) == ["--color=no"]


@pytest.mark.parametrize("expression", ["-p evil", "--rootdir=/", " -pno:x"])
def test_an_expression_never_becomes_an_option_of_its_own(expression: str) -> None:
    options = run_options(RunSpec(markers=expression, keywords=expression))
    options += collect_options(CollectSpec(markers=expression, keywords=expression))

    assert f"-m{expression}" in options
    assert f"-k{expression}" in options
    assert all(option.startswith(("--", "-m", "-k", "-v", "-q")) for option in options)
    assert expression not in options


async def test_the_fake_reports_the_command_the_subprocess_runner_would_run() -> None:
    fake = FakeTestRunner().script("tests/test_a.py::test_one", markers=["slow"])

    report = await fake.run(EVERY_OPTION.model_copy(update={"node_ids": ("tests/test_a.py::test_one",)}))
    collection = await fake.collect(CollectSpec(markers="slow", path="tests"))

    assert report.command == ("fake", "-m", "pytest", *run_options(EVERY_OPTION), "--", "tests/test_a.py::test_one")
    assert collection.command == ("fake", "-m", "pytest", *collect_options(CollectSpec(markers="slow")), "--", "tests")
