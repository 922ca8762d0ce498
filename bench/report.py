"""The report: bench/results/benchmark.md from every measurement's section, and the targets they meet or miss.

`render` also returns the figures behind the tables, which `run.py` writes to benchmark.json
for the chart.
"""

from __future__ import annotations

from typing import Any

import memory
import overhead
import peers
import startup
from harness import OURS, Results
from suites import Suite


def render(
    results: Results, suites: list[Suite], floors: dict[str, str], ours_keys: list[str]
) -> tuple[str, dict[str, Any]]:
    """The Markdown report and the figures behind it (written to benchmark.json for the chart)."""
    cfg = results.config
    summary: dict[str, Any] = {"suites": {}, "startup": {}, "targets": {}, "config": cfg}
    lines = [
        "# pytest-mcp benchmark",
        "",
        f"`{cfg['command']}` on {cfg['machine']}, {cfg['date']}, {cfg['minutes']} minutes "
        f"({', '.join(f'{name} {minutes}' for name, minutes in cfg['phase_minutes'].items())}). {cfg['rounds']} "
        f"interleaved rounds (peers in every round up to {peers.PEERS_EVERY_ROUND_UP_TO:,} tests, in the first "
        f"{cfg['peer_rounds']} on larger suites), {cfg['startup_reps']} start-ups per server, {cfg['rss_calls']} "
        f"sequential calls for memory. Target interpreter `{cfg['python']}` (Python "
        f"{cfg['python_version']}, pytest {cfg['pytest']}, mcp {cfg['mcp']}); pytest plugin autoload is **on** "
        f"for every run compared (installed plugins: {cfg['plugins']}), because two peers need the autoloaded "
        "pytest-json-report. Raw pytest writes to /dev/null. Ratios are the median of per-round ratios "
        "(server / floor measured in the same round); the ratio of the medians is shown beside them.",
        "",
    ]
    lines += startup.section(results, floors, summary)
    lines += overhead.sections(results, suites, ours_keys, summary)
    lines += memory.section(results, suites)
    others = [key for key in cfg["servers"] if key not in ours_keys]
    if others:
        lines += peers.section(results, suites, [*ours_keys, *others], summary)
    lines += ["", "## Targets", ""]
    lines += ["| target | " + " | ".join(ours_keys) + " |", "|---|" + "---|" * len(ours_keys)]
    verdicts = {key: targets(summary, results, suites, others, key) for key in ours_keys}
    for index, (name, _, _) in enumerate(verdicts[OURS]):
        cells = []
        for key in ours_keys:
            _, measured, met = verdicts[key][index]
            cells.append(f"{measured}: {'met' if met else '**missed**'}" if measured else "not measured")
            summary["targets"].setdefault(key, []).append({"target": name, "measured": measured, "met": met})
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "![overhead and answer size against suite size](benchmark.png)", ""]
    return "\n".join(lines), summary


def targets(
    summary: dict[str, Any], results: Results, suites: list[Suite], others: list[str], key: str
) -> list[tuple[str, str, bool]]:
    """(target, measured, met) for one pytest-mcp variant, in a fixed order."""
    return [
        *startup.targets(summary, key),
        *overhead.targets(summary, suites, key),
        *memory.targets(results, key),
        *peers.targets(summary, suites, others, key),
    ]
