"""What hostile clients cost the server: the figures behind issue 15's findings, before and after.

    .venv/bin/python bench/hostile.py                    # this tree
    .venv/bin/python bench/hostile.py --baseline 721ac5c # and the tree at that commit, side by side

- `line`: seconds from sending one 50 MB stdio line to its answer (the reader was quadratic; a
  server that cannot answer it at all shows "no answer" after 60 s).
- `sigterm`: seconds from SIGTERM to exit over streamable HTTP with a run in flight, and with
  200 sessions open besides; the promise is 2 s.

Writes bench/results/hostile.md. Each figure is the median of --rounds.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import baseline

REPO = Path(__file__).resolve().parent.parent
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def server(pythonpath: Path | None, *args: str, **popen: object) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    argv = [sys.executable, *baseline.server_args(), "--python", sys.executable, *args]
    return subprocess.Popen(argv, env=env, **popen)  # type: ignore[call-overload,no-any-return]


def line_seconds(pythonpath: Path | None, root: Path) -> float | None:
    process = server(
        pythonpath, "--root", str(root), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write(json.dumps(INIT).encode() + b"\n")
        process.stdin.flush()
        process.stdout.readline()
        line = b'{"jsonrpc":"2.0","id":2,"method":"ping","x":"' + b"y" * (50 << 20) + b'"}\n'
        started = time.perf_counter()
        writer = threading.Thread(target=lambda: (process.stdin.write(line), process.stdin.flush()), daemon=True)
        writer.start()
        ready, _, _ = select.select([process.stdout], [], [], 60)
        return time.perf_counter() - started if ready and process.stdout.readline() else None
    finally:
        process.kill()
        process.wait()


def _post(port: int, body: dict[str, object], headers: dict[str, str]) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    connection.request("POST", "/mcp", json.dumps(body), headers)
    return connection.getresponse()


def sigterm_seconds(pythonpath: Path | None, root: Path, sessions: int) -> float:
    port = 18000 + os.getpid() % 1000
    process = server(
        pythonpath, "--root", str(root), "--transport", "http", "--port", str(port), stderr=subprocess.DEVNULL
    )
    try:
        for _ in range(200):
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=2).request("GET", "/healthz")
                break
            except OSError:
                time.sleep(0.05)
        for _ in range(sessions):
            _post(port, INIT, HEADERS).read()
        opened = _post(port, INIT, HEADERS)
        opened.read()
        session = {
            **HEADERS,
            "mcp-session-id": opened.getheader("mcp-session-id") or "",
            "mcp-protocol-version": "2025-11-25",
        }
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "execute_tests", "arguments": {}}}
        threading.Thread(target=_quietly, args=(_post, port, call, session), daemon=True).start()
        time.sleep(1.5)  # pytest is running its sleeping test
        started = time.perf_counter()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        return time.perf_counter() - started
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _quietly(call: object, *args: object) -> None:
    try:
        call(*args).read()  # type: ignore[operator]
    except Exception:  # the server goes away mid-call: that is the point
        return


def measure(label: str, pythonpath: Path | None, rounds: int) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as base:
        root = Path(base)
        (root / "pytest.ini").write_text("[pytest]\n")
        (root / "test_sleep.py").write_text("import time\n\ndef test_sleep():\n    time.sleep(60)\n")
        lines = [line_seconds(pythonpath, root) for _ in range(rounds)]
        runs = [sigterm_seconds(pythonpath, root, 0) for _ in range(rounds)]
        many = [sigterm_seconds(pythonpath, root, 200) for _ in range(rounds)]
    answered = [seconds for seconds in lines if seconds is not None]
    return {
        "version": label,
        "50 MB stdio line answered": f"{statistics.median(answered):.2f} s" if answered else "no answer in 60 s",
        "SIGTERM, one run in flight": f"{statistics.median(runs):.2f} s",
        "SIGTERM, one run and 200 sessions": f"{statistics.median(many):.2f} s",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", help="also measure the tree at this commit")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rows = [measure("this tree", None, args.rounds)]
    if args.baseline:
        short, copy = baseline.build(args.baseline)
        rows.append(measure(f"@{short}", copy, args.rounds))
    keys = list(rows[0])
    table = ["| " + " | ".join(keys) + " |", "|" + " --- |" * len(keys)]
    table += ["| " + " | ".join(row[key] for key in keys) + " |" for row in rows]
    text = "# Hostile clients\n\n`bench/hostile.py`, median of {} rounds.\n\n{}\n".format(args.rounds, "\n".join(table))
    out = REPO / "bench" / "results" / "hostile.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
