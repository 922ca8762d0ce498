"""Every line a client can send over stdio is answered; none stops the server or starts anything.

These speak raw JSON-RPC to the real console script, because an SDK client cannot send most of
them: lines that are not JSON, not UTF-8, nested too deep, too long, or with ids and tokens of
the wrong type.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.answers import TOOLS
from tests.security.trapped_project import TrappedProject, build_trapped_project, server_parameters

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


def call(request_id: Any, arguments: Any, meta: Any = None, name: str = "execute_tests") -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


class RawServer:
    """The real stdio server, spoken to line by line."""

    def __init__(self, trapped: TrappedProject) -> None:
        parameters = server_parameters(trapped)
        self.process = subprocess.Popen(
            [parameters.command, *parameters.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=parameters.env,
        )
        self._pending = b""
        self.send(json.dumps(INITIALIZE).encode())
        assert self.reply()["id"] == 1
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def reply(self, timeout: float = 20) -> dict[str, Any]:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            remaining = deadline - time.monotonic()
            assert remaining > 0, "no answer: the client would wait forever"
            ready, _, _ = select.select([self.process.stdout], [], [], remaining)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                assert chunk, "the server closed stdout"
                self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        answer: dict[str, Any] = json.loads(line)
        return answer

    def still_serving(self) -> bool:
        self.send(b'{"jsonrpc":"2.0","id":"alive","method":"tools/list"}')
        answer = self.reply()
        return answer["id"] == "alive" and len(answer["result"]["tools"]) == len(TOOLS)

    def peak_memory_kib(self) -> int:
        status = open(f"/proc/{self.process.pid}/status").read()  # noqa: SIM115 - read whole at once
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def trapped(tmp_path_factory: pytest.TempPathFactory) -> TrappedProject:
    return build_trapped_project(tmp_path_factory.mktemp("raw"))


@pytest.fixture(scope="module")
def server(trapped: TrappedProject) -> Iterator[RawServer]:
    raw = RawServer(trapped)
    yield raw
    raw.close()


DEEP = b"[" * 1000 + b"]" * 1000
INVALID_UTF8 = b'{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"execute_tests",' + (
    b'"arguments":{"node_ids":["test_ok\xff.py"]}}}'
)

# (case, line, expected code, expected id, words the message must hold)
MALFORMED: list[tuple[str, bytes, int, Any, str]] = [
    ("not-json", b"this is not json", -32700, None, "not JSON"),
    ("method-not-a-string", b'{"jsonrpc":"2.0","id":7,"method":42}', -32600, 7, "not a valid JSON-RPC message"),
    ("nested-1000-deep", b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":' + DEEP + b"}}", -32700, 2, "deeply"),
    (
        "nested-300-deep",
        b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":' + b"[" * 300 + b"]" * 300 + b"}}",
        -32700,
        3,
        "recursion limit",
    ),
    ("lone-surrogate-id", b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', -32600, None, "lone surrogate"),
    ("lone-surrogate-method", b'{"jsonrpc":"2.0","id":4,"method":"pi\\udfffng"}', -32600, 4, "lone surrogate"),
    (
        "lone-surrogate-argument",
        call(5, {"node_ids": ["test_ok\\ud800.py"]}).replace(b"\\\\ud800", b"\\ud800"),
        -32602,
        5,
        "node_ids[0]: contains a lone surrogate",
    ),
    ("invalid-utf8-argument", INVALID_UTF8, -32700, 31, "not valid UTF-8"),
    ("invalid-utf8-everywhere", b"\xff\xfe\xfd", -32700, None, "not valid UTF-8"),
    ("nul-byte", b'{"jsonrpc":"2.0","id":8,"method":"ping"}\x00', -32700, None, ""),
    ("byte-order-mark", b'\xef\xbb\xbf{"jsonrpc":"2.0","id":9,"method":"ping"}', -32700, None, ""),
    ("batch", b'[{"jsonrpc":"2.0","id":10,"method":"ping"}]', -32600, None, "JSON object"),
    ("bare-number", b"42", -32600, None, "JSON object"),
    ("null", b"null", -32600, None, "JSON object"),
    ("empty-object", b"{}", -32600, None, "not a valid JSON-RPC message"),
    ("id-object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, None, "neither a string nor an integer"),
    ("id-float", b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, None, "neither a string nor an integer"),
    ("id-null", b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None, "neither a string nor an integer"),
    ("wrong-version", b'{"jsonrpc":"1.0","id":11,"method":"ping"}', -32600, 11, "not a valid JSON-RPC message"),
    ("over-the-size-limit", b'{"jsonrpc":"2.0","id":12,"p":"' + b"x" * (5 << 20) + b'"}', -32600, 12, "the limit"),
    (
        "progress-token-true",
        call(13, {"node_ids": ["test_ok.py"]}, meta={"progressToken": True}),
        -32602,
        13,
        "_meta.progressToken: must be a string or an integer",
    ),
    (
        "progress-token-object",
        call(14, {"node_ids": ["test_ok.py"]}, meta={"progressToken": {"a": 1}}),
        -32602,
        14,
        "",
    ),
    ("timeout-nan", call(15, {}).replace(b"{}", b'{"timeout": NaN}'), -32602, 15, "timeout"),
    ("timeout-overflow", call(16, {}).replace(b"{}", b'{"timeout": 1e400}'), -32602, 16, "timeout"),
    ("arguments-a-list", call(17, ["node_ids"]), -32602, 17, ""),
    ("unknown-tool-huge-name", call(18, {}, name="x" * 100_000), -32602, 18, "unknown tool"),
]


# JSON that Python's parser reads (NaN, and 1e400 as infinity) but the tool's schema refuses.
ARGUMENT_ERRORS = {case[1] for case in MALFORMED if case[0] in ("timeout-nan", "timeout-overflow")}


def test_the_malformed_table_has_unique_cases() -> None:
    names = [case[0] for case in MALFORMED]
    assert len(set(names)) == len(names) >= 20


@pytest.mark.parametrize(
    ("line", "code", "request_id", "words"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED]
)
def test_a_malformed_line_is_answered_and_the_server_keeps_serving(
    server: RawServer, trapped: TrappedProject, line: bytes, code: int, request_id: Any, words: str
) -> None:
    trapped.reset()

    server.send(line)
    answer = server.reply()

    # A well-formed call with an argument its schema refuses is a tool error (ADR 0011): an
    # isError result; everything else here is a protocol error.
    if "result" in answer:
        assert answer["result"]["isError"] is True, answer
        error = answer["result"]["_meta"]["pytest-mcp/error"]
        assert answer["result"]["content"] == [{"type": "text", "text": error["message"]}]
    else:
        error = answer["error"]
    assert (error["code"], "result" in answer) == (code, line in ARGUMENT_ERRORS), answer
    assert answer["id"] == request_id
    assert words in error["message"]
    assert len(json.dumps(answer)) < 4000
    assert server.still_serving()
    assert trapped.tripped() == [], "a malformed line started something"


def test_a_line_far_over_the_limit_is_skipped_without_being_held(trapped: TrappedProject) -> None:
    """A 50 MB line once took the reader 21.7 s (it re-split all it held on every read) and held it all."""
    raw = RawServer(trapped)
    try:
        assert raw.still_serving()
        before = raw.peak_memory_kib()

        line = b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"' + b"y" * (50 << 20) + b'"}'
        raw.send(line)
        answer = raw.reply(timeout=60)

        assert answer["error"]["code"] == -32600
        assert answer["id"] == 1, "answered to the request that waits for it"
        assert f"{len(line):,} bytes" in answer["error"]["message"]
        assert raw.still_serving()
        assert raw.peak_memory_kib() - before < 16 * 1024, "the line was held in memory"
    finally:
        raw.close()


def test_every_line_of_a_burst_is_answered(server: RawServer) -> None:
    """Requests may be answered in any order; what matters is that none is left unanswered."""
    lines = [
        b"not json",
        b'{"jsonrpc":"2.0","id":"b1","method":"ping"}',
        b"[]",
        DEEP,
        b'{"jsonrpc":"2.0","id":"b2","method":"ping"}',
    ]

    server.send(b"\n".join(lines))
    answers = [server.reply() for _ in lines]

    answered = sorted((str(a.get("id")), a.get("error", {}).get("code", 0)) for a in answers)
    assert answered == [("None", -32700), ("None", -32700), ("None", -32600), ("b1", 0), ("b2", 0)]
