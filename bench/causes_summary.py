"""One table over bench/causes.py's results: per mode and interpreter, the planted function's rank, bytes, counts, time.

    .venv/bin/python bench/causes_summary.py causes-311 causes-311-git causes-312 causes-312-git
    .venv/bin/python bench/causes_summary.py causes-312+causes-312-more-itertools  # one row from two runs

Reads results/NAME.json for each NAME (NAME+NAME: the cases of runs in the same mode, on the same
interpreter, as one) and prints markdown (the figures as the bench wrote them; the
ratios are wall seconds over the raw pytest seconds of the same case, both single samples). Modes:
*git* is a run with `--git` and a fresh server (the bug uncommitted, no earlier run here); *git, after an
edit* the same with the server that ran the clean copy; *after an edit* and *failures alone* are the runs
without git (the server saw the clean run, or nothing).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
SIX_KB = 6_144


def raw_failures(summary: str) -> int:
    """failed + errors from pytest's closing line ("3 failed, 12 passed, 1 error in 2.1s")."""
    return sum(int(n) for n, word in re.findall(r"(\d+) (failed|errors?)\b", summary))


def rank(found: dict[str, Any]) -> str:
    if found["ranks"] is None:
        return "n/a"
    return "/".join("—" if r is None else str(r) for r in found["ranks"])


def row(name: str, mode: str, scenario: str, cases: list[dict[str, Any]], config: dict[str, Any]) -> str:
    real = [case for case in cases if not case["project"].startswith("generated")]
    first = sum(1 for case in real if case[scenario]["ranks"] and case[scenario]["ranks"][0] == 1)
    bugs = [groups for case in cases for groups in case[scenario]["groups_naming"]]
    named = sum(1 for groups in bugs if groups)  # a group of the answer names the bug's function as its culprit
    ranks = ", ".join(f"{case['key']} {rank(case[scenario])}" for case in cases)
    sizes = [(case[scenario]["bytes"], case["key"]) for case in cases]
    biggest = max(sizes)
    over = [key for size, key in sizes if size > SIX_KB]
    wrong = [
        f"{case['key']} {case[scenario]['failures']} vs {raw_failures(case['raw_planted']['summary'])}"
        for case in cases
        if case[scenario]["failures"] != raw_failures(case["raw_planted"]["summary"])
    ]
    ratios = [
        (case[scenario]["seconds"] / case["raw_planted"]["seconds"], case["key"])
        for case in cases
        if case["raw_planted"]["seconds"]
    ]
    low, high = min(ratios), max(ratios)
    recorders = sorted({case[scenario].get("localization_recorder") or "—" for case in cases})
    return (
        f"| {mode} | {config.get('suites_python', config['python_version'])} | **{first} of {len(real)}** "
        f"({named} of {len(bugs)} bugs named by a group, all cases) | {ranks} | {biggest[0]:,} ({biggest[1]})"
        f"{'; over 6 KB: ' + ', '.join(over) if over else ''} | "
        f"{'yes' if not wrong else 'no: ' + '; '.join(wrong)} | "
        f"{low[0]:.2f}x ({low[1]}) to {high[0]:.2f}x ({high[1]}) | {'; '.join(recorders)} | `{name}` |"
    )


def misses(name: str, scenario: str, cases: list[dict[str, Any]]) -> list[str]:
    lines = []
    for case in cases:
        found = case[scenario]
        ranks, naming = found["ranks"] or [None] * len(case["bugs"]), found["groups_naming"]
        for bug, r, groups in zip(case["bugs"], ranks, naming, strict=True):
            if r == 1 or (len(case["bugs"]) > 1 and groups):
                continue  # of several bugs, each one named by a group of its own is found
            named = "; ".join(
                f"{c.get('function')} ({c.get('score')}{', changed ' + str(c['changed']) if c.get('changed') else ''})"
                for c in found["culprits"][:4]
            )
            lines.append(
                f"- `{name}` {scenario} {case['key']} `{bug['function']}`: rank {r}; culprits: {named or 'none'}; "
                f"reason: {found['localization_reason'] or '—'}"
            )
    return lines


def main(names: list[str]) -> int:
    lines = [
        "| mode | suites' Python | planted first (real suites) | rank per case | answer bytes, max | counts exact "
        "| wall / raw pytest (planted), per case | recorder | results |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    notes = []
    for name in names:
        documents = [json.loads((RESULTS / f"{part}.json").read_text()) for part in name.split("+")]
        config, cases = documents[0]["config"], [case for document in documents for case in document["cases"]]
        for document in documents[1:]:
            for key in ("git", "suites_python", "revision"):
                if document["config"].get(key) != config.get(key):
                    raise SystemExit(f"{name}: the runs differ in {key}")
        scenarios = (
            (("git", "planted"), ("git, after an edit", "after_edit"))
            if config.get("git")
            else (("after an edit", "after_edit"), ("failures alone", "planted"))
        )
        for mode, scenario in scenarios:
            lines.append(row(name, mode, scenario, cases, config))
            notes += misses(name, scenario, cases)
        for document in documents:
            run, loads = document["config"], [case["load"] for case in document["cases"]]
            notes.append(
                f"- `{run['command']}`: {run['date']}, {run['minutes']} min, load {min(loads)} to {max(loads)}"
            )
    print("\n".join([*lines, "", *notes]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
