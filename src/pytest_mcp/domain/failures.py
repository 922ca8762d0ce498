"""Exit-code semantics: which endings of a pytest process are results and which are errors."""

from __future__ import annotations

import re

from pytest_mcp.domain.errors import MAX_LISTED_ERRORS, ExecutionFailed, FailureDetails
from pytest_mcp.domain.models import CollectionError
from pytest_mcp.domain.runs import Termination
from pytest_mcp.domain.text import (
    FAULTHANDLER_FRAME,
    current_thread_only,
    keep_head,
    keep_tail,
    last_line,
    one_line,
    outside_project,
    project_frames_only,
)

RESULT_EXIT_CODES = (0, 1, 5)
_TAIL_CHARS = 4000
_SIGNAL_HINTS = {
    "SIGXCPU": " (its CPU-time limit was reached)",
    "SIGKILL": " (out of memory, or killed by another process)",
}


def collection_error_lines(errors: tuple[CollectionError, ...]) -> str:
    """One line per collection error (node id and exception line), at most MAX_LISTED_ERRORS of them."""
    lines = [
        f"- {one_line(error.node_id)}: {one_line(keep_head(error.message, 300))}"
        for error in errors[:MAX_LISTED_ERRORS]
    ]
    if len(errors) > MAX_LISTED_ERRORS:
        lines.append(f"- ... and {len(errors) - MAX_LISTED_ERRORS:,} more")
    return "\n".join(lines)


def execution_failure(
    termination: Termination,
    *,
    command: tuple[str, ...],
    duration: float,
    stdout: str,
    stderr: str,
    collection_errors: tuple[CollectionError, ...],
    timeout: float,
    session_finished: bool,
) -> ExecutionFailed | None:
    """The error for a run that gave no trustworthy result, or None when the run is a result.

    A run is a result only when pytest exited with 0, 1 or 5 *and* finished its session;
    everything else is an ExecutionFailed whose message alone tells a model what happened.
    """
    # A faulthandler dump of a timeout or crash: the test's thread, and the project's frames in it.
    stderr = project_frames_only(current_thread_only(stderr))
    details = FailureDetails(
        exit_code=termination.exit_code,
        command=command,
        duration=duration,
        stdout_tail=keep_tail(stdout, _TAIL_CHARS),
        stderr_tail=keep_tail(stderr, _TAIL_CHARS),
        collection_errors=tuple(error.model_dump() for error in collection_errors),
        signal=termination.signal,
    )
    if termination.kind == "timed_out":
        where = _dumped_site(stderr)
        return ExecutionFailed(
            "timeout",
            f"pytest did not finish within {timeout:g}s and was stopped with all its child processes"
            + (f" while running {where}" if where else "")
            + "; run fewer tests or pass a larger timeout",
            details,
        )
    if termination.kind == "command_too_long":
        return ExecutionFailed(
            "pytest_unavailable",
            f"pytest cannot be started: with this server's environment, {termination.detail}; start the "
            "server with a smaller environment",
            details,
        )
    if termination.kind == "pytest_unavailable":
        return ExecutionFailed("pytest_unavailable", termination.detail or "pytest could not be started", details)
    if termination.kind == "report_unreadable":
        return ExecutionFailed(
            "internal_error",
            f"the run's results cannot be read: {termination.detail}; something the run started replaced the "
            "file pytest-mcp reads them from, so no results are available",
            details,
        )
    if termination.kind == "busy":
        return ExecutionFailed(
            "busy",
            f"the server is busy: {termination.detail or 'other runs are in progress'}; "
            f"no run slot freed up within this call's {timeout:g}s timeout, so nothing was started. "
            "Retry later, or pass a larger timeout to wait longer",
            details,
        )
    if termination.kind == "signalled":
        where = _dumped_site(stderr)
        hint = _SIGNAL_HINTS.get(termination.signal or "", "")
        return ExecutionFailed(
            "crashed",
            f"pytest was killed by {termination.signal or 'a signal'}{hint}"
            + (f" while running {where}" if where else "")
            + "; no results are available",
            details,
        )
    code = termination.exit_code
    if code in RESULT_EXIT_CODES and session_finished:
        return None
    if code == 2 and session_finished and not collection_errors and _stopped_at_maxfail(stdout):
        return None  # pytest-xdist ends a --maxfail/-x stop as an interruption; its counts are whole
    if code == 2:
        if collection_errors:
            count = len(collection_errors)
            noun = "error" if count == 1 else "errors"
            return ExecutionFailed(
                "interrupted",
                f"pytest was interrupted: {count} {noun} during collection\n"
                + collection_error_lines(collection_errors),
                details,
            )
        why = last_line(stdout, startswith="!") or last_line(stderr) or "exit code 2"
        return ExecutionFailed("interrupted", f"pytest was interrupted: {why.strip('! ')}", details)
    if code == 4:
        usage = last_line(stderr, startswith="ERROR:") or last_line(stderr) or last_line(stdout) or ""
        return ExecutionFailed("usage_error", f"pytest reported a usage error: {usage}".rstrip(": "), details)
    if code == 3:
        internal = last_line(stderr, startswith="INTERNALERROR>") or last_line(stdout, startswith="INTERNALERROR>")
        text = internal.removeprefix("INTERNALERROR>").strip() if internal else "no details"
        return ExecutionFailed("internal_error", f"pytest hit an internal error: {text}", details)
    return ExecutionFailed(
        "internal_error",
        f"pytest exited with code {code} without finishing its session "
        "(a test or conftest may have called sys.exit or os._exit); results are unavailable",
        details,
    )


def _stopped_at_maxfail(stdout: str) -> bool:
    """Whether pytest's last `!!!` line says the run stopped at its failure limit (`-x`, `--maxfail`)."""
    why = last_line(stdout, startswith="!") or ""
    return bool(re.search(r"stopping after \d+ failures", why))


def _dumped_site(stderr: str) -> str | None:
    """The innermost project frame of the last thread faulthandler dumped (the main thread), if any.

    faulthandler dumps on a fatal signal, and on the signal a runner sends before it kills a run
    that overran its timeout.
    """
    marker = stderr.rfind("most recent call first")
    if marker < 0:
        return None
    for line in stderr[marker:].splitlines():
        match = FAULTHANDLER_FRAME.match(line)
        if match is not None and not outside_project(match["file"]):
            return f"{match['func']} ({match['file'].rsplit('/', 1)[-1]}:{match['line']})"
    return None
