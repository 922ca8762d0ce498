"""Draw bench/results/benchmark.png from benchmark.json; bench/run.py runs it in a venv with matplotlib.

bench/.cache/chart-venv/bin/python bench/chart.py bench/results/benchmark.json bench/results/benchmark.png
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

COLOURS = {
    "pytest-mcp": "#1f77b4",
    "mcp-pytest-runner": "#d62728",
    "mcp-tools-py": "#2ca02c",
    "lovranran-mcp-test-runner": "#9467bd",
}
BASELINE_COLOUR = "#17becf"  # `pytest-mcp @<sha>`


def colour(key: str) -> str:
    return COLOURS.get(key, BASELINE_COLOUR)


STYLES = {0: ("-", "all pass"), 3: ("--", "3 failures")}
Pick = Callable[[dict[str, Any]], float | None]


def main(source: Path, target: Path) -> None:
    data = json.loads(source.read_text())
    suites = [entry for name, entry in data["suites"].items() if name != "mixed"]
    sizes = sorted({entry["tests"] for entry in suites})

    def series(failures: int, pick: Pick) -> tuple[list[int], list[float]]:
        points = []
        for size in sizes:
            entry = next((e for e in suites if e["tests"] == size and e["failures"] == failures), None)
            value = pick(entry) if entry else None
            if value is not None:
                points.append((size, value))
        return [p[0] for p in points], [p[1] for p in points]

    def ours(what: str, key: str, field: str) -> Pick:
        return lambda entry: (entry.get(what, {}).get(key) or {}).get(field)

    def peer(key: str, field: str) -> Pick:
        return lambda entry: (entry.get("peers", {}).get(key) or {}).get(field)

    servers = data["config"]["servers"]  # pytest-mcp, its baseline (`--baseline`) if any, then the peers

    def plot_runs(axes: Any, our_field: str, peer_field: str) -> None:
        """One line per server and suite kind: pytest-mcp's run figures, or the peer's."""
        for failures, (style, tag) in STYLES.items():
            for key in servers:
                pick = ours("run", key, our_field) if key.startswith("pytest-mcp") else peer(key, peer_field)
                xs, ys = series(failures, pick)
                if xs:
                    axes.plot(xs, ys, style, marker="o", color=colour(key), label=f"{key}, {tag}")

    figure, (overhead, answer) = plt.subplots(1, 2, figsize=(13, 5))
    plot_runs(overhead, "ratio", "ratio_to_raw")
    for key in (k for k in servers if k.startswith("pytest-mcp")):
        xs, ys = series(0, ours("collect", key, "ratio"))
        overhead.plot(xs, ys, ":", marker="s", color=colour(key), label=f"{key} discover_tests")
    overhead.axhline(1.0, color="grey", linewidth=0.8)
    overhead.set_xscale("log")
    overhead.set_xlabel("tests in the suite")
    overhead.set_ylabel("wall time / raw pytest in the same round")
    overhead.set_title("Overhead over raw pytest (1.0 = the floor; peers: their rounds only)")
    overhead.legend(fontsize=7)

    plot_runs(answer, "bytes", "bytes")
    for limit, words in ((1024, "1 KB target, all pass"), (4096, "4 KB target, 3 failures")):
        answer.axhline(limit, color="grey", linewidth=0.8, linestyle=":")
        answer.annotate(words, (sizes[-1], limit), fontsize=7, color="grey", ha="right", va="bottom")
    answer.set_xscale("log")
    answer.set_yscale("log")
    answer.set_xlabel("tests in the suite")
    answer.set_ylabel("answer bytes: structured JSON + content text (≈ 4 per token)")
    answer.set_title("Answer size of one execute call")
    answer.legend(fontsize=7)
    config = data["config"]
    figure.suptitle(f"pytest-mcp benchmark: {config['command']}, {config['date']}, {config['machine']}", fontsize=10)
    figure.tight_layout()
    figure.savefig(target, dpi=110)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
