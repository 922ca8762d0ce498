"""A second pass's spectrum, read: the functions each test ran, and what changed in them (ADR 0020).

The pass's plugin (`_plugin/_pytest_mcp_spectrum.py`) writes the events; this module reads them,
bounded, and gives each function two digests of its syntax tree (so that a comment or a blank
line is no change): as the file is now, and as it is at git's HEAD, when the project is in a git
work tree. The domain decides which of them counts as changed.
"""

from __future__ import annotations

import ast
import hashlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
from pydantic import ValidationError

from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
from pytest_mcp.adapters.structlog_logging import routed_logger
from pytest_mcp.domain.localization import CodeFunction, Spectrum, Trace, is_test_code
from pytest_mcp.ports.worker import Worker

_log = routed_logger("pytest_mcp.runner")
MAX_FILES = 200
"""Files whose functions get digests: those the failing tests ran come from few files."""
GIT_SECONDS = 10.0


def read_spectrum(path: Path, max_bytes: int) -> Spectrum:
    """The events of a pass, up to `max_bytes` (a pass stopped mid-line loses that line only)."""
    functions: dict[int, CodeFunction] = {}
    tests: list[Trace] = []
    modules: tuple[str, ...] = ()
    recorder = ""  # from the modules event: a pass killed before its end still says what recorded it
    end: dict[str, Any] = {}
    consumed = 0
    if not path.exists():
        return Spectrum()
    with path.open("rb") as handle:
        for raw in handle:
            consumed += len(raw)
            if consumed > max_bytes:
                break
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            kind = event.pop(protocol.EVENT, None)
            try:
                if kind == protocol.SPECTRUM_FUNCTION:
                    index = int(event.pop("id"))
                    functions[index] = CodeFunction.model_validate(event)
                elif kind == protocol.SPECTRUM_TEST:
                    tests.append(Trace.model_validate(event))
                elif kind == protocol.SPECTRUM_MODULES:
                    modules = tuple(str(module) for module in event["modules"])
                    recorder = str(event.get("recorder") or "")
                elif kind == protocol.SPECTRUM_END:
                    end = event
            except (ValidationError, KeyError, TypeError, ValueError):
                _log.warning("spectrum_event_unreadable", kind=str(kind)[:20])
    # Ids are dense from 0 in the order first seen; a cut file may lack the last ones.
    ordered = [functions[index] for index in range(len(functions)) if index in functions]
    known = len(ordered)
    tests = [trace.model_copy(update={"functions": tuple(f for f in trace.functions if f < known)}) for trace in tests]
    return Spectrum(
        functions=tuple(ordered),
        tests=tuple(tests),
        test_modules=modules,
        recorder=str(end.get("recorder") or recorder),
        stopped=end.get("stopped") if end else "stopped before it finished",
    )


def _qualified(tree: ast.AST) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of a module with its qualified name, as Python gives it (`Outer.<locals>.inner`)."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                yield name, child
                yield from walk(child, name + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def _digest(node: ast.AST) -> str:
    return hashlib.sha256(ast.dump(node).encode()).hexdigest()[:16]


def _digests(source: str | bytes | None) -> tuple[dict[str, str], dict[int, tuple[str, str]]]:
    """(qualified name -> digest, first line -> (qualified name, digest)) of a module's functions; empty
    when it does not parse. A function's first line is its first decorator's, as its code object's."""
    if source is None:
        return {}, {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}, {}
    by_name: dict[str, str] = {}
    by_line: dict[int, tuple[str, str]] = {}
    for name, node in _qualified(tree):
        digest = _digest(node)
        by_name[name] = digest
        by_line[min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])] = (name, digest)
    return by_name, by_line


async def _at_head(root: Path, files: list[str]) -> dict[str, bytes | None] | None:
    """Each file as git's HEAD has it (None: not in HEAD); None when the root is not in a git work tree."""
    try:
        prefix = await anyio.run_process(
            ["git", "rev-parse", "--show-prefix"], cwd=root, check=False, stdin=subprocess.DEVNULL
        )
        if prefix.returncode != 0:
            return None
        base = prefix.stdout.decode().strip()
        request = "".join(f"HEAD:{base}{file}\n" for file in files).encode()
        with anyio.fail_after(GIT_SECONDS):
            batch = await anyio.run_process(["git", "cat-file", "--batch"], cwd=root, input=request, check=False)
    except (OSError, TimeoutError):
        return None
    if batch.returncode != 0:
        return None
    found: dict[str, bytes | None] = {}
    data, position = batch.stdout, 0
    for file in files:
        end = data.index(b"\n", position)
        header = data[position:end].split()
        position = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            found[file] = data[position : position + size]
            position += size + 1
        else:
            found[file] = None
    return found


async def with_digests(spectrum: Spectrum, root: Path, worker: Worker) -> Spectrum:
    """The spectrum with each blamable function's digest now and at git's HEAD (when there is a git work tree).

    Reading and parsing up to MAX_FILES modules is the `worker`'s: the event loop only waits for git."""
    files = list(dict.fromkeys(f.file for f in spectrum.functions if not is_test_code(f.file, spectrum.test_modules)))[
        :MAX_FILES
    ]
    if not files:
        return spectrum
    now, modified = await worker.run(_digests_now, root, files)
    head_sources = await _at_head(root, files)
    head = await worker.run(_digests_at_head, head_sources or {})
    return await worker.run(_with, spectrum, now, modified, head, head_sources is not None, len(files))


def _digests_now(
    root: Path, files: list[str]
) -> tuple[dict[str, tuple[dict[str, str], dict[int, tuple[str, str]]]], dict[str, float]]:
    """Each file's digests as it is now, and when it was last modified."""
    now = {}
    modified: dict[str, float] = {}
    for file in files:
        try:
            path = root / file
            modified[file] = path.stat().st_mtime
            now[file] = _digests(path.read_bytes())
        except OSError:
            now[file] = ({}, {})
    return now, modified


def _digests_at_head(sources: dict[str, bytes | None]) -> dict[str, dict[str, str]]:
    return {file: _digests(source)[0] for file, source in sources.items()}


def _with(
    spectrum: Spectrum,
    now: dict[str, tuple[dict[str, str], dict[int, tuple[str, str]]]],
    modified: dict[str, float],
    head: dict[str, dict[str, str]],
    at_head: bool,
    files: int,
) -> Spectrum:
    functions = []
    for function in spectrum.functions:
        if function.file not in now:
            functions.append(function)
            continue
        by_name, by_line = now[function.file]
        # Before Python 3.11 a code object knows its name, not its qualified name: its line tells.
        name, digest = by_line.get(function.first) or (function.name, by_name.get(function.name))
        update: dict[str, Any] = {"name": name, "digest": digest, "modified": modified.get(function.file)}
        if at_head:
            update.update(at_head=True, head=head[function.file].get(name))
        functions.append(function.model_copy(update=update))
    _log.debug("spectrum_digests", files=files, git=at_head)
    return spectrum.model_copy(update={"functions": tuple(functions)})
