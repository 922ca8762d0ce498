"""Measurement: the server's memory, after every call and across many sequential calls on one server.

The RSS after each call of `overhead.py`'s rounds is kept there; this module makes `--rss-calls`
sequential `execute_tests` calls on one fresh pytest-mcp and reads its RSS as it goes (drift =
last - first).
"""

from __future__ import annotations

from harness import OURS, Results, connect, rss_mb
from servers import ServerKind
from suites import Suite


async def measure_rss_growth(kind: ServerKind, suite: Suite, calls: int, results: Results) -> None:
    """One fresh pytest-mcp, `calls` sequential execute_tests on a failing suite: RSS as it goes."""
    marks = {1, 10, 25, 50, 100, 150, calls} | set(range(0, calls + 1, max(calls // 8, 1)))
    async with connect(kind.params(suite), f"{kind.key}-rss-{suite.name}") as session:
        await session.client.list_tools()
        if session.pid is None:
            raise RuntimeError("could not find the server's process id")
        for call in range(1, calls + 1):
            await session.client.call_tool("execute_tests", {})
            if call in marks:
                results.rss_calls.append((call, rss_mb(session.pid) or 0.0))
        print(f"  {calls} calls done", flush=True)


def section(results: Results, suites: list[Suite]) -> list[str]:
    """RSS at chosen points of the sequential calls."""
    lines = ["", f"## Server memory across {results.config['rss_calls']} sequential calls (`{suites[1].label}`)", ""]
    lines += ["| calls | server RSS MB |", "|---:|---:|"] + [f"| {n} | {rss:.1f} |" for n, rss in results.rss_calls]
    return lines


def targets(results: Results, key: str) -> list[tuple[str, str, bool]]:
    """(target, measured, met) for one pytest-mcp variant: peak RSS, and drift across the sequential calls."""
    found: list[tuple[str, str, bool]] = []
    rss = [value for suite in results.rss_after_run.values() for value in suite.get(key, [])]
    rss += [value for _, value in results.rss_calls] if key == OURS else []
    found.append(("server RSS ≤ 120 MB", f"peak {max(rss):.1f} MB" if rss else "", bool(rss) and max(rss) <= 120))
    if key == OURS and len(results.rss_calls) >= 2:
        drift = results.rss_calls[-1][1] - results.rss_calls[0][1]
        found.append(("RSS drift ≤ 5 MB across the sequential calls", f"{drift:+.1f} MB", drift <= 5))
    else:
        found.append(("RSS drift ≤ 5 MB across the sequential calls", "", False))
    return found
