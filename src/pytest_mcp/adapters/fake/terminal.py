"""pytest's terminal output, rebuilt for FakeTestRunner from the reports it plays back.

It follows `_pytest.terminal` (pytest 8-9) on an 80-column terminal outside CI, without colour:
the session header, the `collected` line, progress lines with percentages, the ERRORS and
FAILURES sections, the short test summary (`-r fE`), and the final summary line. What it
cannot know it states plainly: the header names the fake instead of a platform and plugins.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pytest_mcp.domain.models import CollectionError, ReportedTest
from pytest_mcp.domain.node_ids import NodeId

WIDTH = 80
_FIXTURE_LOOKUP = re.compile(r"file .+, line \d+\n")
_LETTERS = {"passed": ".", "failed": "F", "skipped": "s", "xfailed": "x", "xpassed": "X", "error": "E"}


def separator(character: str, title: str | None = None, width: int = WIDTH) -> str:
    """A line like pytest's `TerminalWriter.sep`: `==== title ====`, as long as fits in `width`."""
    if title is None:
        return character * (width // len(character))
    fill = character * max((width - len(title) - 2) // (2 * len(character)), 1)
    line = f"{fill} {title} {fill}"
    if len(line) + len(character.rstrip()) <= width:
        line += character.rstrip()
    return line


def _trimmed(message: str, available: int) -> str | None:
    """pytest's `_format_trimmed(" - {}", ...)`: the first line, cut with `...` to fit."""
    message = message.split("\n", 1)[0]
    prefix = " - "
    if len(prefix) + 3 > available:
        return None
    if len(prefix) + len(message) > available:
        message = message[: available - 3 - len(prefix)] + "..."
    return prefix + message


def _head_line(node_id: str) -> str:
    """`TestCart.test_total` for `tests/x.py::TestCart::test_total`, as pytest titles a failure."""
    parsed = NodeId.parse(node_id)
    return ".".join(parsed.named) if parsed.names else parsed.path


@dataclass
class FakeTerminal:
    """Accumulates what pytest would print for one session, event by event.

    The runner calls the methods in pytest's order; `text()` at any point is what a process
    killed at that moment would have printed, which is how timeouts and crashes look.
    """

    root: str
    verbosity: int = 0
    show_capture: bool = True
    _parts: list[str] = field(default_factory=list)
    _column: int = 0
    _current_file: str | None = None
    _collected: int = 0
    _reported: set[str] = field(default_factory=set)
    _errors: list[ReportedTest | CollectionError] = field(default_factory=list)
    _failures: list[ReportedTest] = field(default_factory=list)

    # -- low level, as TerminalWriter and TerminalReporter write ------------------------------

    def _write(self, text: str) -> None:
        if not text:
            return
        self._parts.append(text)
        if "\n" in text:
            self._column = len(text.rsplit("\n", 1)[1])
        else:
            self._column += len(text)

    def _line(self, text: str = "") -> None:
        self._write(text + "\n")

    def _ensure_newline(self) -> None:
        if self._current_file:
            self._line()
            self._current_file = None

    def write_line(self, text: str) -> None:
        self._ensure_newline()
        self._line(text)

    def _write_sep(self, character: str, title: str | None = None) -> None:
        self._ensure_newline()
        self._line(separator(character, title))

    def text(self) -> str:
        return "".join(self._parts)

    # -- the session, in pytest's order ---------------------------------------------------------

    def session_start(self) -> None:
        if self.verbosity < 0:
            return
        self._write_sep("=", "test session starts")
        self.write_line(f"platform fake -- Python {platform.python_version()}, pytest-mcp FakeTestRunner")
        self.write_line(f"rootdir: {self.root}")

    def collected(
        self, collected: int, deselected: int, errors: Sequence[CollectionError] = (), status: str | None = None
    ) -> None:
        """The `collected` line, then what plugins report when collection is over (`run-last-failure: ...`)."""
        self._collected = collected - deselected
        self._errors.extend(errors)
        if self.verbosity < 0:
            return
        line = f"collected {collected} item{'' if collected == 1 else 's'}"
        if errors:
            line += f" / {len(errors)} error{'s' if len(errors) != 1 else ''}"
        if deselected:
            line += f" / {deselected} deselected / {collected - deselected} selected"
        self.write_line(line)
        if status is not None:
            self.write_line(status)

    def test_started(self, node_id: str) -> None:
        if self.verbosity >= 0:
            self._file_prefix(node_id)

    def report(self, report: ReportedTest) -> None:
        if report.outcome == "error":
            self._errors.append(report)
        elif report.outcome == "failed":
            self._failures.append(report)
        if self.verbosity >= 0:
            self._file_prefix(report.node_id)
        self._write(_LETTERS[report.outcome])
        self._reported.add(report.node_id)
        if len(self._reported) != self._collected:
            self._progress_if_past_edge()

    def loop_finished(self) -> None:
        """Every selected test ran (no maxfail stop): pytest writes the final percentage."""
        if self._reported:
            self._fill_progress()

    def internal_error(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write_line("INTERNALERROR> " + line)

    def collected_items(self, node_ids: Sequence[str]) -> None:
        """`--collect-only -q` lists one node id per line."""
        for node_id in node_ids:
            self._line(node_id)

    def session_finished(self, words: str, *, stop: str | None = None, interruption: str | None = None) -> None:
        """The end of the session: sections, short summary, `!!!` lines and the summary line.

        `words` is the summary line without its separators, e.g. `1 failed, 2 passed in 0.01s`.
        """
        self._line()
        if self._errors:
            self._write_sep("=", "ERRORS")
            for error in self._errors:
                if isinstance(error, CollectionError):
                    self._write_sep("_", f"ERROR collecting {error.node_id}")
                    self._body(error.traceback or f"E   {error.message}", raw=True)
                else:
                    self._write_sep("_", f"ERROR at {error.phase} of {_head_line(error.node_id)}")
                    self._body(error.traceback, raw=False)
                    self._captured(error)
        if self._failures:
            self._write_sep("=", "FAILURES")
            for failure in self._failures:
                self._write_sep("_", _head_line(failure.node_id))
                self._body(failure.traceback, raw=False)
                self._captured(failure)
        self._short_summary()
        if stop:
            self._write_sep("!", stop)
        if interruption:
            self._write_sep("!", interruption)
        if self.verbosity < -1:
            return
        if self.verbosity < 0:
            self.write_line(words)
        else:
            self._write_sep("=", words)

    # -- pieces ----------------------------------------------------------------------------------

    def _file_prefix(self, node_id: str) -> None:
        file = NodeId.parse(node_id).path
        if file != self._current_file:
            if self._current_file is not None:
                self._fill_progress()
            self._current_file = file
            self._line()
            self._write(file + " ")

    def _progress(self) -> str:
        if self._collected:
            return f" [{len(self._reported) * 100 // self._collected:3d}%]"
        return " [100%]"

    def _progress_if_past_edge(self) -> None:
        if self._column + len(" [100%]") + 1 >= WIDTH:
            self._write(self._progress() + "\n")

    def _fill_progress(self) -> None:
        self._write(self._progress().rjust(WIDTH - self._column - 1))

    def _body(self, traceback: str | None, *, raw: bool) -> None:
        if not traceback:
            return
        # A report's traceback is pytest's `longreprtext`, which is stripped: a rendered exception
        # (source lines, then `E` lines) starts with a blank line and a source line indented by 4,
        # or marked `>` for the failing line. Anything else (a fixture lookup error's `file ...,
        # line N`, a `pytrace=False` message) is printed as it is.
        lines = traceback.splitlines()
        first = lines[0]
        source_first = not first[:1].isspace() and not first.startswith(("E ", "file ", "Traceback", "["))
        if raw or not source_first or not any(line.startswith("E ") for line in lines):
            self._line(traceback)
        else:
            self._line()
            self._line(first if first.startswith(">") else "    " + first)
            rest = "\n".join(lines[1:])
            if rest:
                self._line(rest)

    def _captured(self, report: ReportedTest) -> None:
        if not self.show_capture:
            return
        for stream, content in (("stdout", report.stdout), ("stderr", report.stderr)):
            if content:
                self._line(separator("-", f"Captured {stream} {report.phase}"))
                self._line(content.removesuffix("\n"))

    def _short_summary(self) -> None:
        lines = []
        for failure in self._failures:
            lines.append(self._summary_entry("FAILED", failure.node_id, failure.message))
        for error in self._errors:
            message = error.message
            if isinstance(error, CollectionError) and error.message.startswith(("ModuleNotFoundError", "ImportError")):
                message = None  # pytest's ImportError report carries no crash line
            if isinstance(error, ReportedTest) and _FIXTURE_LOOKUP.match(error.traceback or ""):
                message = None  # nor does a fixture lookup error's (`file PATH, line N` first)
            lines.append(self._summary_entry("ERROR", error.node_id, message))
        if lines:
            self._write_sep("=", "short test summary info")
            for line in lines:
                self.write_line(line)

    @staticmethod
    def _summary_entry(word: str, node_id: str, message: str | None) -> str:
        line = f"{word} {node_id}"
        if message:
            line += _trimmed(message, WIDTH - len(line)) or ""
        return line


def collect_words(collected: int, deselected: int, errors: int, duration: float) -> str:
    """The summary line of `--collect-only`: `2/17 tests collected (15 deselected) in 0.01s`."""
    if collected == 0:
        words = "no tests collected"
    elif deselected == 0:
        words = f"{collected} test{'' if collected == 1 else 's'} collected"
    elif collected == deselected:
        words = f"no tests collected ({deselected} deselected)"
    else:
        words = f"{collected - deselected}/{collected} tests collected ({deselected} deselected)"
    if errors:
        words += f", {errors} error{'s' if errors != 1 else ''}"
    return f"{words} in {duration:.2f}s"


def interrupted(errors: int) -> str:
    return f"Interrupted: {errors} error{'s' if errors != 1 else ''} during collection"
