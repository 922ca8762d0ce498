"""Small, pure text helpers for trimming output with explicit markers."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

MASK = "****"
"""What a password becomes wherever a URL holding one is shown."""

REPLACEMENT = "\ufffd"
"""What a character that could forge or hide text becomes where the project's text is quoted."""
# C0 controls but tab and newline, DEL and C1 controls (ESC starts ANSI sequences; U+0085 is a line
# break), the line and paragraph separators, and the marks, embeddings, overrides and isolates that
# reorder text (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069). One character class: a
# search finds nothing in clean text at a regex engine's speed, and nothing is copied.
_HIDING = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_UNSAFE_IN_TEXT = re.compile(f"[{_HIDING}]")
_UNSAFE_IN_LINE = re.compile(f"[{_HIDING}\n]")


def printable(text: str) -> str:
    """`text` (the project's: output, a message, a node id) safe to quote in an answer's text, over
    as many lines as it has: every control character but tab and newline, and every bidirectional
    control, replaced by U+FFFD. Nothing it held can then colour, move, hide or reorder what follows."""
    return _UNSAFE_IN_TEXT.sub(REPLACEMENT, text) if _UNSAFE_IN_TEXT.search(text) else text


def one_line(text: str) -> str:
    """`text` safe to quote as (part of) one line: `printable`, and a newline replaced too, so that
    it cannot start a line of its own (`x\\nPASSED all ok`)."""
    return _UNSAFE_IN_LINE.sub(REPLACEMENT, text) if _UNSAFE_IN_LINE.search(text) else text


def quoted(text: str) -> str:
    """`text` as one line between double quotes, a quote or backslash in it escaped: where items are
    listed one after another, no item can pass for the separator or for the end of the list."""
    line = one_line(text)
    return '"' + line.replace("\\", "\\\\").replace('"', '\\"') + '"'


def keep_tail(text: str, limit: int, *, from_line_with: str | None = None) -> str:
    """The last `limit` characters of `text`, starting at a line boundary, with a marker if cut.

    With `from_line_with`, a cut starts instead at the last line containing it, when that line
    and everything after it fit in `limit`: the tail then begins where it means something.
    """
    if len(text) <= limit:
        return text
    found = text.rfind(from_line_with) if from_line_with else -1
    start = text.rfind("\n", 0, found) + 1 if found >= 0 else -1
    if found >= 0 and len(text) - start <= limit:
        tail = text[start:]
    else:
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


def keep_arguments(arguments: tuple[str, ...], limit: int) -> tuple[str, ...]:
    """The leading arguments that fit in `limit` characters, then one saying what was cut."""
    used = 0
    for index, argument in enumerate(arguments):
        used += len(argument) + 1
        if used > limit:
            rest = arguments[index:]
            cut = f"[... {len(rest):,} more arguments, {sum(map(len, rest)):,} characters, cut by pytest-mcp]"
            return (*arguments[:index], cut)
    return arguments


def last_line(text: str, *, startswith: str = "") -> str | None:
    """The last non-blank line of `text` that starts with `startswith`, stripped."""
    for line in reversed(text.splitlines()):
        stripped = line.strip()
        if stripped and stripped.startswith(startswith):
            return stripped
    return None


def current_thread_only(text: str) -> str:
    """`text` without the stacks of other threads in a faulthandler dump, with a marker if any left.

    faulthandler dumps every thread: `Current thread 0x...` is the one the signal interrupted (the
    test's, for a timeout or a crash); each `Thread 0x...` block is another thread (a plugin's
    server, a pool), noise in the evidence. A block ends at the first blank line or non-frame line.
    (The reporter applies the same rule, in the target's process, to captured output.)
    """
    if "Thread 0x" not in text:
        return text
    kept, dropped, skipping = [], 0, False
    for line in text.splitlines(keepends=True):
        if line.startswith("Thread 0x"):
            skipping, dropped = True, dropped + 1
            continue
        if skipping and not line.startswith("  File "):
            skipping = False
        if not skipping:
            kept.append(line)
    if dropped:
        kept.append(f"[... {dropped} other thread(s)' stacks left out ...]\n")
    return "".join(kept)


FAULTHANDLER_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')
"""A frame as faulthandler writes it: `  File "PATH", line N in FUNCTION`."""


def outside_project(path: str) -> bool:
    """Whether a frame's file is not the project's: an installed package, the standard library, or
    code without a file (`<frozen runpy>`, the bootstrap's `<string>`). The reporter applies the
    same rule to failure tracebacks, in the target's process (ADR 0009)."""
    return (
        path.startswith("<")
        or "site-packages" in path
        or "dist-packages" in path
        or re.search(r"/lib/(pypy|python)\d", path) is not None
    )


def project_frames_only(text: str) -> str:
    """`text` with the frames of faulthandler dumps cut to the project's, with a line saying how many went.

    In each dump (`... (most recent call first):` and its `File` lines) the first frame, the
    innermost, always stays, as failure tracebacks keep the frame where the assertion is: for a
    hung test in a library call, that call is the evidence.
    """
    if "most recent call first" not in text:
        return text
    kept: list[str] = []
    dropped, first = 0, False
    for line in text.splitlines(keepends=True):
        frame = FAULTHANDLER_FRAME.match(line)
        if frame is None:
            first = "most recent call first" in line
            kept.append(line)
        elif first or not outside_project(frame["file"]):
            first = False
            kept.append(line)
        else:
            dropped += 1
    if dropped:
        kept.append(f"[... {dropped} frame(s) outside the project hidden by pytest-mcp ...]\n")
    return "".join(kept)


def masked_url(url: str) -> str:
    """The URL with any password (in the address or a `password=` query) replaced by ****."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}:{MASK}@{host}"
    query = parts.query
    if "password" in query.lower():
        query = urlencode([(k, MASK if k.lower() == "password" else v) for k, v in parse_qsl(query)], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str) -> list[str]:
    """The passwords a URL holds, to mask wherever a message might quote them."""
    parts = urlsplit(url)
    found = [parts.password, unquote(parts.password)] if parts.password else []
    return found + [v for k, v in parse_qsl(parts.query) if k.lower() == "password" and v]


EVIDENCE_LINES = 14
"""Lines of a traceback a group's representative keeps, and the text shows."""
CAPTURE_LINES = 6
"""Last lines of each captured stream a group's representative keeps, and the text shows."""
_LINE_CHARS = 300
_FRAME = re.compile(r"\S+:\d+:(?: in .+)?")  # pytest's `tests/test_a.py:17: in helper` and `tests/test_a.py:9:`


def short_line(line: str) -> str:
    if len(line) <= _LINE_CHARS:
        return line
    return f"{line[:_LINE_CHARS]} [... {len(line) - _LINE_CHARS:,} characters cut ...]"


def last_lines(text: str, count: int) -> list[str]:
    lines = [short_line(line) for line in text.rstrip().splitlines() if line.strip()]
    if len(lines) <= count:
        return lines
    return [f"[... {len(lines) - count} earlier lines ...]", *lines[-count:]]


def evidence_lines(traceback: str, count: int) -> list[str]:
    """What a traceback proves, at most `count` lines: the failing source lines (`>`), pytest's
    explanation (`E`), the frames passed through (`path:line: in name`) and the crash location.

    What a group's representative carries, and what the text shows of it; the whole traceback is
    kept for get_test_run with node_ids. A traceback with none of those lines (a plugin's own
    report) keeps its last lines. Reading the result again gives the same lines.
    """
    lines = [line for line in traceback.rstrip().splitlines() if line.strip()]
    if not lines:
        return []
    kept = [line for line in lines[:-1] if line.startswith((">", "E ")) or _FRAME.fullmatch(line)]
    if not kept:
        return last_lines(traceback, count)
    return last_lines("\n".join([*_explanations_cut(kept), lines[-1]]), count)


_EXPLANATION_LINES = 6
"""Lines of one `E` block kept: its head says what failed (pytest's full diff, with -vv or under CI,
runs to hundreds of lines, and its tail would crowd out the failing line)."""


def _explanations_cut(lines: list[str]) -> list[str]:
    """Each run of `E` lines longer than _EXPLANATION_LINES as its head and a count of the rest."""
    out: list[str] = []
    run: list[str] = []
    for line in [*lines, ""]:
        if line.startswith("E "):
            run.append(line)
            continue
        if len(run) > _EXPLANATION_LINES:
            run = [*run[: _EXPLANATION_LINES - 1], f"E   [... {len(run) - _EXPLANATION_LINES + 1} more lines ...]"]
        out += run
        run = []
        if line:
            out.append(line)
    return out
