from __future__ import annotations

from pytest_mcp.adapters.pytest_subprocess.process import BoundedBuffer


def test_a_bounded_buffer_keeps_head_and_tail_and_marks_the_cut() -> None:
    buffer = BoundedBuffer(head=10, tail=20)
    for _ in range(10_000):
        buffer.feed(b"0123456789")

    text = buffer.text()

    assert buffer.total == 100_000
    assert text.startswith("0123456789\n[... 99,970 bytes of output cut by pytest-mcp ...]\n")
    assert text.endswith("01234567890123456789")
    assert len(text) < 200


def test_a_short_stream_is_kept_whole() -> None:
    buffer = BoundedBuffer(head=10, tail=20)
    buffer.feed("héllo wörld".encode())

    assert buffer.text() == "héllo wörld"
