"""The stdio transport's line reader and the id it can still find in a message it cannot parse."""

from __future__ import annotations

import os
import threading

import pytest

from pytest_mcp.adapters.mcp.stdio_transport import MAX_LINE_BYTES, _WireReader, top_level_id

pytestmark = pytest.mark.anyio


async def lines_of(data: bytes) -> list[tuple[bytes, int]]:
    read, write = os.pipe()

    def feed() -> None:
        with os.fdopen(write, "wb") as out:
            for start in range(0, len(data), 10_000):  # arrives in pieces that cut lines anywhere
                out.write(data[start : start + 10_000])

    thread = threading.Thread(target=feed)
    thread.start()
    try:
        return [(line.data, line.too_long) async for line in _WireReader(read)]
    finally:
        thread.join()
        os.close(read)


async def test_lines_cut_across_reads_come_out_whole_and_the_last_needs_no_newline() -> None:
    data = b"a" * 25_000 + b"\n\nshort\n" + b"b" * 70_000

    assert await lines_of(data) == [(b"a" * 25_000, 0), (b"", 0), (b"short", 0), (b"b" * 70_000, 0)]


async def test_a_line_over_the_limit_keeps_only_its_head_and_says_how_long_it_was() -> None:
    too_long = b'{"jsonrpc":"2.0","id":42,"x":"' + b"y" * MAX_LINE_BYTES + b'"}'

    (head, size), (after, _) = await lines_of(too_long + b"\nnext\n")

    assert size == len(too_long)
    assert head == too_long[: len(head)]
    assert len(head) <= 64 * 1024
    assert top_level_id(head) == 42
    assert after == b"next"


@pytest.mark.parametrize(
    ("raw", "found"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"ping"}', 7),
        (b'{"jsonrpc":"2.0","id":"abc","params":{"x":', "abc"),
        (b'{"params":{"id":3},"id":-4}', -4),
        (b'{"params":{"id":3}', None),  # only a nested id
        (b'{"method":"say \\"id\\": 9","id":"q\\"r"}', 'q"r'),
        (b'{"id":"\\ud800"}', None),  # not valid text: no id to answer
        (b'{"id":{"a":1}}', None),
        (b"[" * 2000, None),
        (b'{"id":', None),
    ],
)
def test_the_top_level_id_is_found_where_it_is_and_nowhere_else(raw: bytes, found: object) -> None:
    assert top_level_id(raw) == found
