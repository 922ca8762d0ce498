"""Small, pure text helpers for trimming output with explicit markers."""

from __future__ import annotations


def keep_tail(text: str, limit: int) -> str:
    """The last `limit` characters of `text`, starting at a line boundary, with a marker if cut."""
    if len(text) <= limit:
        return text
    tail = text[len(text) - limit :]
    newline = tail.find("\n")
    if 0 <= newline < len(tail) - 1:
        tail = tail[newline + 1 :]
    return f"[... {len(text) - len(tail):,} characters cut ...]\n{tail}"


def keep_head(text: str, limit: int) -> str:
    """The first `limit` characters of `text`, with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit:,} characters cut ...]"


def last_line(text: str, *, startswith: str = "") -> str | None:
    """The last non-blank line of `text` that starts with `startswith`, stripped."""
    for line in reversed(text.splitlines()):
        stripped = line.strip()
        if stripped and stripped.startswith(startswith):
            return stripped
    return None
