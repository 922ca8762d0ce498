"""The oracle: what plain pytest itself says about a selection, parsed from its terminal output.

Integration tests compare the runner's structured report against this. The oracle never
uses pytest-mcp code: it runs `python -m pytest -p no:cacheprovider <args>` in the fixture
project and reads pytest's own words (the final summary line, the `collected` header, the
`--collect-only -q` listing).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pytest_mcp.domain.runs import CollectSpec, RunSpec

SUBTEST_KEYS = ("subtests_passed", "subtests_failed", "subtests_skipped")
COUNT_KEYS = ("passed", "failed", "skipped", "xfailed", "xpassed", "errors", "deselected", "warnings", *SUBTEST_KEYS)

# pytest's word for each count, as it appears in the summary line.
_WORDS = {
    "passed": "passed",
    "failed": "failed",
    "skipped": "skipped",
    "xfailed": "xfailed",
    "xpassed": "xpassed",
    "error": "errors",
    "errors": "errors",
    "deselected": "deselected",
    "warning": "warnings",
    "warnings": "warnings",
    "subtests passed": "subtests_passed",
    "subtests failed": "subtests_failed",
    "subtests skipped": "subtests_skipped",
}
# Words that may appear in the summary line but are not test counts.
_IGNORED_WORDS = {"rerun", "reruns"}

# A count is one word, or two for pytest's "N subtests passed" (never pluralised differently).
_PART = r"(?:no tests ran|\d+ (?:subtests )?\w+)"
_SUMMARY_LINE = re.compile(
    rf"^=*\s*(?P<parts>{_PART}(?:, {_PART})*)"
    r" in \d+(?:\.\d+)?s(?: \([^)]*\))?\s*=*$"
)
_COLLECTED = re.compile(r"^collected (?P<n>\d+) items?")
_COLLECT_ONLY_COUNT = re.compile(
    r"^(?:(?P<selected>\d+)/)?(?P<total>\d+) tests? collected(?: \((?P<deselected>\d+) deselected\))?"
)
_PLUGIN_DIR = Path(__file__).parent / "oracle_plugin"


def run_args(spec: RunSpec) -> list[str]:
    """The pytest arguments a user would type for the same selection."""
    args: list[str] = []
    if spec.markers is not None:
        args += ["-m", spec.markers]
    if spec.keywords is not None:
        args += ["-k", spec.keywords]
    if spec.maxfail is not None:
        args += [f"--maxfail={spec.maxfail}"]
    return [*args, *spec.node_ids]


def collect_args(spec: CollectSpec) -> list[str]:
    args: list[str] = []
    if spec.markers is not None:
        args += ["-m", spec.markers]
    if spec.keywords is not None:
        args += ["-k", spec.keywords]
    if spec.path is not None:
        args.append(spec.path)
    return args


def parse_summary_line(output: str) -> dict[str, int] | None:
    """The counts of pytest's final summary line, or None when there is no such line."""
    for line in reversed(output.splitlines()):
        match = _SUMMARY_LINE.match(line.strip())
        if not match:
            continue
        counts = dict.fromkeys(COUNT_KEYS, 0)
        for part in match["parts"].split(", "):
            if part == "no tests ran":
                continue
            number, word = part.split(" ", 1)
            if word in _IGNORED_WORDS:
                continue
            if word not in _WORDS:
                raise ValueError(f"unknown word {word!r} in pytest summary line {line!r}")
            counts[_WORDS[word]] += int(number)
        return counts
    return None


def summary_words(output: str) -> list[str] | None:
    """The parts of pytest's final summary line as printed: `["1 failed", "2 passed", "1 warning"]`."""
    for line in reversed(output.splitlines()):
        match = _SUMMARY_LINE.match(line.strip())
        if match:
            return list(match["parts"].split(", "))
    return None


def parse_collected(output: str) -> int | None:
    for line in output.splitlines():
        match = _COLLECTED.match(line.strip())
        if match:
            return int(match["n"])
    return None


@dataclass(frozen=True)
class PytestOutcome:
    """What plain pytest printed and how it exited."""

    argv: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    counts: dict[str, int] | None
    collected: int | None

    @property
    def selected(self) -> int | None:
        if self.collected is None or self.counts is None:
            return None
        return self.collected - self.counts["deselected"]


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # Make sure pytest's terminal output is plain text however the suite was started.
    for name in ("PY_COLORS", "FORCE_COLOR"):
        env.pop(name, None)
    env["NO_COLOR"] = "1"
    env.update(extra or {})
    return env


def pytest_says(python: Path, root: Path, args: list[str], *, timeout: float = 120) -> PytestOutcome:
    """Run plain pytest on `args` in `root` and parse what it printed."""
    argv = (str(python), "-m", "pytest", "-p", "no:cacheprovider", "--color=no", *args)
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, errors="replace", env=_env(), timeout=timeout)
    return PytestOutcome(
        argv=argv,
        exit_code=proc.returncode,
        stdout=proc.stdout,
        stderr=proc.stderr,
        counts=parse_summary_line(proc.stdout),
        collected=parse_collected(proc.stdout),
    )


def pytest_selects(python: Path, root: Path, args: list[str], *, timeout: float = 120) -> int | None:
    """How many tests `pytest --collect-only -q <args>` selects, from its `N/M tests collected` line.

    For quiet runs, whose output has no `collected N items` header.
    """
    listing = pytest_says(python, root, ["--collect-only", "-q", *args], timeout=timeout).stdout
    for line in reversed(listing.splitlines()):
        match = _COLLECT_ONLY_COUNT.match(line.strip())
        if match:
            return int(match["selected"] or match["total"])
        if line.strip().startswith("no tests collected"):
            return 0
    return None


def pytest_run(python: Path, root: Path, spec: RunSpec) -> PytestOutcome:
    return pytest_says(python, root, run_args(spec))


@dataclass(frozen=True)
class CollectedByPytest:
    exit_code: int
    node_ids: tuple[str, ...]
    total: int | None
    selected: int | None
    deselected: int
    output: str
    locations: dict[str, tuple[str, int]] = field(default_factory=dict)  # node id -> (file, 1-based line)


def pytest_collect(python: Path, root: Path, spec: CollectSpec) -> CollectedByPytest:
    """`pytest --collect-only -q` for the same selection, plus each item's location from pytest itself."""
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "items.json"
        env = _env({"ORACLE_PLUGIN_DUMP": str(dump)})
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_PLUGIN_DIR), env.get("PYTHONPATH", "")) if p)
        argv = [
            str(python), "-m", "pytest", "-p", "no:cacheprovider", "-p", "pytest_mcp_oracle_plugin",
            "--color=no", "--collect-only", "-q", *collect_args(spec),
        ]  # fmt: skip
        proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, errors="replace", env=env, timeout=120)
        items = json.loads(dump.read_text(encoding="utf-8")) if dump.exists() else []
    node_ids: list[str] = []
    total = selected = None
    deselected = 0
    for line in proc.stdout.splitlines():
        if "::" in line and not line.startswith((" ", "ERROR", "FAILED", "_", "=")):
            node_ids.append(line.strip())
        match = _COLLECT_ONLY_COUNT.match(line.strip())
        if match:
            total = int(match["total"])
            selected = int(match["selected"]) if match["selected"] else total
            deselected = int(match["deselected"] or 0)
    if total is None and "no tests collected" in proc.stdout:
        match = re.search(r"no tests collected \((\d+) deselected\)", proc.stdout)
        deselected = int(match[1]) if match else 0
        total, selected = deselected, 0
    locations = {item["nodeid"]: (item["file"], item["line"] + 1) for item in items}
    return CollectedByPytest(
        exit_code=proc.returncode,
        node_ids=tuple(node_ids),
        total=total,
        selected=selected,
        deselected=deselected,
        output=proc.stdout + proc.stderr,
        locations=locations,
    )
