"""The pytest options a run or a collection starts with: what a person would type.

One definition for both runners: the subprocess runner starts pytest with these options (and
its private reporter options), and the fake runner reports the command the subprocess runner
would have run. Agent-provided expressions are attached to their option (`-kEXPR`), so no argv
element can start with `-p`; node ids and paths follow `--`.
"""

from __future__ import annotations

from pytest_mcp.domain.runs import CollectSpec, RunSpec

VERBOSITY_FLAGS: dict[int, tuple[str, ...]] = {-2: ("-qq",), -1: ("-q",), 0: (), 1: ("-v",), 2: ("-vv",)}
COVERAGE_PLACEHOLDER = "<coverage-report>"
"""Stands for the coverage report's path, which is private to each run; the runner replaces it."""


def _selection(markers: str | None, keywords: str | None) -> list[str]:
    options = []
    if markers is not None:
        options.append(f"-m{markers}")
    if keywords is not None:
        options.append(f"-k{keywords}")
    return options


def run_options(spec: RunSpec) -> list[str]:
    options = ["--color=no", *VERBOSITY_FLAGS[spec.verbosity], *_selection(spec.markers, spec.keywords)]
    if spec.maxfail is not None:
        options.append(f"--maxfail={spec.maxfail}")
    if not spec.show_capture:
        options.append("--show-capture=no")
    if spec.last_failed:
        options.append("--last-failed")
    if spec.failed_first:
        options.append("--failed-first")
    if spec.workers is not None:
        options.append(f"--numprocesses={spec.workers}")
    if spec.affected:
        # forceselect, not --testmon: with -m, -k, --lf or a test's node id, --testmon stops selecting.
        options.append("--testmon-forceselect")
    if spec.coverage:
        # The report goes to the run's private directory; the data file is pytest-cov's usual one.
        options += ["--cov", f"--cov-report=json:{COVERAGE_PLACEHOLDER}"]
    return options


def collect_options(spec: CollectSpec) -> list[str]:
    return ["--color=no", "--collect-only", "-q", *_selection(spec.markers, spec.keywords)]
