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
import re
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any

from pydantic import ValidationError

from pytest_mcp.adapters.pytest_subprocess._plugin import _pytest_mcp_protocol as protocol
from pytest_mcp.adapters.pytest_subprocess.untrusted import open_untrusted, read_untrusted
from pytest_mcp.adapters.structlog_logging import routed_logger
from pytest_mcp.domain.localization import (
    MODULE_CODE,
    CodeFunction,
    CodeState,
    Spectrum,
    Trace,
    code_key,
    is_test_code,
)
from pytest_mcp.ports.worker import Worker

_log = routed_logger("pytest_mcp.runner")
MAX_FILES = 1_000
"""Files whose functions get digests, at most: a run's imported project files."""
GIT_SECONDS = 10.0
MAX_SOURCE_BYTES = 16 * 1024 * 1024
"""A source file larger than this is not parsed for digests."""


def read_spectrum(path: Path, max_bytes: int) -> Spectrum:
    """The events of a pass, up to `max_bytes` (a pass stopped mid-line loses that line only).

    Opened as untrusted (the tests can write the pass's private directory): UntrustedFileRefused
    says why it was not read."""
    functions: dict[int, CodeFunction] = {}
    tests: list[Trace] = []
    modules: tuple[str, ...] = ()
    recorder = ""  # from the modules event: a pass killed before its end still says what recorded it
    end: dict[str, Any] = {}
    try:
        events = list(_events(path, max_bytes))
    except FileNotFoundError:
        return Spectrum()
    for event in events:
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


@dataclass(frozen=True)
class RunRecording:
    """What a run recorded of itself: its spectrum (None where the interpreter could not record, before
    Python 3.12), the project files its processes imported, and the tests that passed (`passed_key`s)."""

    spectrum: Spectrum | None
    imported: tuple[str, ...]
    passed: tuple[str, ...] = ()


_PASSED_KEY = re.compile(r"[0-9a-f]{16}")


MAX_LINES = 1_000_000
"""(function, line) pairs read of a run's failing tests, at most: past it the ranking reads functions (ADR 0020).
A mass failure of a large suite, every test running thousands of lines, would otherwise hold millions."""


@dataclass
class _Lines:
    """The lines of a run's processes, read whole or not at all (`whole`)."""

    failing: dict[str, tuple[tuple[int, int], ...]]  # node id -> (merged function, line) pairs
    passing: dict[int, dict[int, int]]  # merged function -> line -> passing tests that ran it
    whole: bool = True
    pairs: int = 0

    def read(self, path: Path, local: dict[int, int], max_bytes: int) -> None:
        """One process's lines file (`protocol.SPECTRUM_LINES_PREFIX`): all of it, ended, within the bounds,
        or `whole` turns false, and no line of the run is used."""
        ended = False
        try:
            for event in _events(path, max_bytes):
                kind = event.get(protocol.EVENT)
                if kind == protocol.SPECTRUM_TEST:
                    pairs = tuple(sorted({(local[int(f)], int(line)) for f, line in event["lines"] if int(f) in local}))
                    self.failing[str(event["node_id"])] = pairs
                    self.pairs += len(pairs)
                elif kind == protocol.SPECTRUM_PASSING:
                    for index, line, count in event["lines"]:
                        if int(index) in local:
                            of = self.passing.setdefault(local[int(index)], {})
                            of[int(line)] = of.get(int(line), 0) + int(count)
                elif kind == protocol.SPECTRUM_END:
                    ended = True
                if self.pairs > MAX_LINES:
                    break
        except FileNotFoundError:
            pass
        except (KeyError, TypeError, ValueError):
            _log.warning("spectrum_lines_unreadable", file=path.name)
            ended = False
        self.whole = self.whole and ended and self.pairs <= MAX_LINES


def read_run_spectrum(directory: Path, max_bytes: int) -> RunRecording:
    """The spectrum files of a run's processes (one, or one per pytest-xdist worker), merged: functions
    by file, name and first line, the failing tests' sets, the passing tests' counts summed, the
    functions entered before the first test in any of them; and their lines, where every process's
    lines file was read whole (within `max_bytes` of its own and MAX_LINES pairs)."""
    keys: dict[tuple[str, str, int], int] = {}
    merged: list[CodeFunction] = []
    passing: dict[int, int] = {}
    lines = _Lines({}, {})
    lines_budget = max_bytes
    traces: list[Trace] = []
    collected: set[int] = set()
    modules: set[str] = set()
    imported: set[str] = set()
    passed: list[str] = []
    recorder = ""
    passing_total = 0
    budget = max_bytes
    paths = sorted(directory.glob(f"{protocol.SPECTRUM_RUN_PREFIX}*.jsonl")) if directory.is_dir() else []
    for path in paths:
        local: dict[int, int] = {}  # this process's function ids -> merged ones
        for event in _events(path, budget):
            kind = event.pop(protocol.EVENT, None)
            try:
                if kind == protocol.SPECTRUM_FUNCTION:
                    index = int(event.pop("id"))
                    function = CodeFunction.model_validate(event)
                    key = (function.file, function.name, function.first)
                    if key not in keys:
                        keys[key] = len(merged)
                        merged.append(function)
                    local[index] = keys[key]
                elif kind == protocol.SPECTRUM_TEST:
                    trace = Trace.model_validate(event)
                    ids = tuple(sorted({local[f] for f in trace.functions if f in local}))
                    traces.append(trace.model_copy(update={"functions": ids}))
                elif kind == protocol.SPECTRUM_PASSING:
                    passing_total += int(event["total"])
                    for index, count in event["counts"]:
                        if int(index) in local:
                            passing[local[int(index)]] = passing.get(local[int(index)], 0) + int(count)
                elif kind == protocol.SPECTRUM_COLLECTED:
                    collected.update(local[int(f)] for f in event["functions"] if int(f) in local)
                elif kind == protocol.SPECTRUM_MODULES:
                    modules.update(str(module) for module in event["modules"])
                elif kind == protocol.SPECTRUM_IMPORTED:
                    imported.update(str(file) for file in event["files"])
                elif kind == protocol.SPECTRUM_PASSED:  # written by the tests' process: only keys are kept
                    passed += [key for key in event["keys"] if isinstance(key, str) and _PASSED_KEY.fullmatch(key)]
                elif kind == protocol.SPECTRUM_END:
                    recorder = recorder or str(event.get("recorder") or "")
            except (ValidationError, KeyError, TypeError, ValueError):
                _log.warning("spectrum_event_unreadable", kind=str(kind)[:20])
        budget -= path.lstat().st_size
        worker = path.name.removeprefix(protocol.SPECTRUM_RUN_PREFIX)
        lines_path = path.with_name(f"{protocol.SPECTRUM_LINES_PREFIX}{worker}")
        lines.read(lines_path, local, lines_budget)
        lines_budget -= lines_path.lstat().st_size if lines.whole else 0
    if not recorder:
        return RunRecording(None, tuple(sorted(imported)), tuple(passed))
    if not lines.whole:
        _log.info("spectrum_lines_left_out", pairs=lines.pairs)
        lines = _Lines({}, {}, whole=False)
    traces = [
        trace.model_copy(update={"lines": lines.failing[trace.node_id]}) if trace.node_id in lines.failing else trace
        for trace in traces
    ]
    functions = tuple(
        function.model_copy(
            update={"passing": passing[index], "passing_lines": tuple(sorted(lines.passing.get(index, {}).items()))}
        )
        if index in passing
        else function
        for index, function in enumerate(merged)
    )
    spectrum = Spectrum(
        functions=functions,
        tests=tuple(traces),
        passing_total=passing_total,
        collected=tuple(sorted(collected)),
        test_modules=tuple(sorted(modules)),
        recorder=recorder,
        in_run=True,
    )
    return RunRecording(spectrum, tuple(sorted(imported)), tuple(passed))


def _events(path: Path, max_bytes: int) -> Iterator[dict[str, Any]]:
    """A spectrum file's events, up to `max_bytes`; a line that is not a JSON object is skipped."""
    consumed = 0
    if max_bytes <= 0:
        return
    with open_untrusted(path) as handle:  # the tests can write the run's private directory
        while raw := handle.readline(max_bytes - consumed + 1):
            consumed += len(raw)
            if consumed > max_bytes:
                return
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if isinstance(event, dict):
                yield event


@dataclass(frozen=True)
class _Defined:
    """A function as a module's syntax tree has it."""

    name: str  # qualified, as Python gives it (`Outer.<locals>.inner`)
    ordinal: int  # the how-many-th definition of that name in the file
    first: int  # its first line: its first decorator's, as its code object's
    digest: str
    trivial: bool
    cached: bool = False  # behind a caching decorator: a call the cache answers does not enter it

    @property
    def key(self) -> tuple[str, int]:
        return self.name, self.ordinal


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


def _trivial(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """An accessor: a body (its docstring aside) that only returns a name or an attribute, or passes. A
    function that returns a constant decides a value, and may be wrong: it is no accessor."""
    body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
    if len(body) != 1:
        return False
    statement = body[0]
    if isinstance(statement, ast.Pass):
        return True
    return isinstance(statement, ast.Return) and (
        statement.value is None or isinstance(statement.value, (ast.Name, ast.Attribute))
    )


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _defined(source: str | bytes | None) -> tuple[_Defined, ...]:
    """A module's functions, in order; none when it does not parse. Two definitions of one name (a
    property's getter and setter, a def in both branches of an `if`) are told apart by their order."""
    if source is None:
        return ()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    seen: dict[str, int] = {}
    found = []
    for name, node in _qualified(tree):
        seen[name] = seen.get(name, 0) + 1
        first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
        found.append(_Defined(name, seen[name], first, _digest(node), _trivial(node), _cached(node)))
    found.append(_Defined(MODULE_CODE, 1, 0, _module_digest(tree), trivial=False))
    return tuple(found)


def _cached(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a decorator caches it (`lru_cache`, `cache`, `cached_property`, cachetools' `cached`, a
    `memoize`): a test the cache answers ran it, unrecorded."""
    for decorator in node.decorator_list:
        called = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = called.attr if isinstance(called, ast.Attribute) else called.id if isinstance(called, ast.Name) else ""
        if "cache" in name.lower() or "memo" in name.lower():
            return True
    return False


def _module_digest(tree: ast.Module) -> str:
    """A digest of what a module runs outside its functions' bodies: its constants, tables, class
    attributes, decorators and defaults, which every test that uses them runs without entering a
    function. The tree's function bodies are emptied: it is read for nothing else afterwards."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = []
    return _digest(tree)


_CACHED_FILES = 4_096


class ProjectCode:
    """The project's files read for their functions' digests, each parsed again only when its size,
    modification time or inode changed: a run of an unchanged project parses nothing."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._parsed: dict[str, tuple[tuple[int, int, int], tuple[_Defined, ...]]] = {}

    def functions(self, file: str) -> tuple[_Defined, ...]:
        """A project file's functions; none for a path outside the root. The names come from a file the
        tests can write (the run's imported list): `../` or a link out of the project is never read."""
        path = self._root / file
        try:
            if not path.resolve().is_relative_to(self._root.resolve()):
                return ()
            stat = path.stat()
            if not S_ISREG(stat.st_mode) or stat.st_size > MAX_SOURCE_BYTES:
                return ()
            stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
            cached = self._parsed.get(file)
            if cached is not None and cached[0] == stamp:
                return cached[1]
            # A project file, which a test may have made a FIFO: its link (a source kept elsewhere) is followed.
            defined = _defined(read_untrusted(path.resolve(), MAX_SOURCE_BYTES))
        except OSError:
            return ()
        if len(self._parsed) >= _CACHED_FILES:
            self._parsed.pop(next(iter(self._parsed)))
        self._parsed[file] = (stamp, defined)
        return defined

    def state(self, files: Sequence[str]) -> CodeState:
        """The digests of every function of these files, as they are now: the project's code first, then
        its test code (what tells a suspect flaky test: nothing it runs changed, its own code included)."""
        files = sorted(files, key=lambda file: is_test_code(file, ()))[:MAX_FILES]
        defined = [(file, function) for file in files for function in self.functions(file)]
        digests = {code_key(file, function.name, function.ordinal): function.digest for file, function in defined}
        cached = tuple(code_key(file, function.name, function.ordinal) for file, function in defined if function.cached)
        return CodeState(digests=digests, files=tuple(files), cached=cached)


def _at_head(root: Path, files: list[str]) -> dict[str, bytes | None] | None:
    """Each file as git's HEAD has it (None: not in HEAD); None when the root is not in a git work tree,
    or when HEAD holds none of the files: git knows nothing of this code (a project in a directory
    the enclosing repository ignores, a repository with nothing of it committed), and nothing is
    compared with it, rather than every function read as changed since HEAD.

    Blocking: called in a thread (`with_digests`), so that starting git never holds the event loop
    (a process start waits for the child to exec, a stall of its own on a loaded machine; issue 46)."""
    try:
        prefix = subprocess.run(  # git from PATH, as the user's own git would be found
            ["git", "rev-parse", "--show-prefix"],  # noqa: S607
            cwd=root,
            check=False,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_SECONDS,
        )
        if prefix.returncode != 0:
            return None
        base = prefix.stdout.decode().strip()
        request = "".join(f"HEAD:{base}{file}\n" for file in files).encode()
        batch = subprocess.run(
            ["git", "cat-file", "--batch"],  # noqa: S607
            cwd=root,
            input=request,
            check=False,
            capture_output=True,
            timeout=GIT_SECONDS,
        )
    except (OSError, subprocess.TimeoutExpired):
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
    return found if any(source is not None for source in found.values()) else None


async def with_digests(
    spectrum: Spectrum,
    code: ProjectCode,
    root: Path,
    worker: Worker,
    *,
    head: bool = True,
    processes: Worker | None = None,
) -> Spectrum:
    """The spectrum with each function's digest now and, for a blamable one with `head`, at git's HEAD (when
    there is a git work tree), which definition of its name it is, and whether it is an accessor. Test
    code is digested too: a failing test none of whose functions changed is suspect flaky.

    Reading and parsing the modules is the `worker`'s; starting git and waiting for it, the
    `processes`' (the runner's process threads; the `worker` without them): the event loop only awaits."""
    ordered = sorted(
        dict.fromkeys(f.file for f in spectrum.functions), key=lambda file: is_test_code(file, spectrum.test_modules)
    )
    files = ordered[:MAX_FILES]
    if not files:
        return spectrum
    now = await worker.run(_functions_of, code, files)
    blamable = [file for file in files if not is_test_code(file, spectrum.test_modules)]
    head_sources = await (processes or worker).run(_at_head, root, blamable) if head and blamable else None
    at_head = await worker.run(_digests_at_head, head_sources or {})
    return await worker.run(_named, spectrum, now, at_head if head_sources is not None else None)


def _functions_of(code: ProjectCode, files: list[str]) -> dict[str, tuple[_Defined, ...]]:
    return {file: code.functions(file) for file in files}


def _digests_at_head(sources: dict[str, bytes | None]) -> dict[str, dict[tuple[str, int], str]]:
    return {file: {d.key: d.digest for d in _defined(source)} for file, source in sources.items()}


def _named(
    spectrum: Spectrum,
    now: dict[str, tuple[_Defined, ...]],
    at_head: dict[str, dict[tuple[str, int], str]] | None,
) -> Spectrum:
    functions = []
    for function in spectrum.functions:
        if function.file not in now:
            functions.append(function)
            continue
        # Before Python 3.11 a code object knows its name, not its qualified name: its line tells.
        found = next((d for d in now[function.file] if d.first == function.first), None)
        if found is None:
            found = next((d for d in now[function.file] if d.name == function.name), None)
        if found is None:
            functions.append(function)
            continue
        update: dict[str, Any] = {
            "name": found.name,
            "ordinal": found.ordinal,
            "digest": found.digest,
            "trivial": found.trivial,
        }
        if at_head is not None and function.file in at_head:
            update.update(at_head=True, head=at_head[function.file].get(found.key))
        functions.append(function.model_copy(update=update))
    _log.debug("spectrum_digests", files=len(now), git=at_head is not None)
    return spectrum.model_copy(update={"functions": tuple(functions)})
