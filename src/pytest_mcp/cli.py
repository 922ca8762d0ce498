"""The `pytest-mcp` command: serve MCP over stdio, or run one tool call in-process."""

from __future__ import annotations

import argparse
import functools
import json
import sys
import typing
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.to_thread
from pydantic import ValidationError
from pydantic.fields import FieldInfo

from pytest_mcp import __version__
from pytest_mcp.domain.errors import ExecutionFailed, InvalidArguments
from pytest_mcp.settings import Settings, SettingsError

if TYPE_CHECKING:
    from pytest_mcp.adapters.frozen_heap import FrozenHeap
    from pytest_mcp.adapters.mcp.tool_server import McpToolServer
    from pytest_mcp.container import Container


def _common_options(*, serving: bool = True) -> argparse.ArgumentParser:
    """A flag for each setting that has one, built from `Settings`: name, type, choices, help, default.

    Without `serving`, the settings of the transports (HTTP, SSE) are left out: `call` and `record`
    serve nothing."""
    common = argparse.ArgumentParser(add_help=False)
    for name, field in Settings.model_fields.items():
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        spec = extra.get("flag", {})
        if spec is None:
            continue
        assert isinstance(spec, dict)
        if spec.get("serving") and not serving:
            continue
        # SUPPRESS keeps unset flags out of the namespace, so the environment and defaults apply.
        options: dict[str, Any] = {"dest": name, "default": argparse.SUPPRESS, "help": _help(field)}
        annotation = field.annotation
        choices = typing.get_args(annotation) if typing.get_origin(annotation) is Literal else ()
        if annotation is bool:
            options |= {"action": "store_const", "const": True}
        elif typing.get_origin(annotation) is tuple:
            options |= {"action": "append", "metavar": spec.get("metavar")}
        elif choices:
            options["choices"] = choices
        else:
            numeric = int in (annotation, *typing.get_args(annotation))
            options |= {"metavar": spec.get("metavar"), **({"type": int} if numeric else {})}
        common.add_argument(str(spec.get("name") or "--" + name.replace("_", "-")), **options)
    return common


def _help(field: FieldInfo) -> str:
    text = (field.description or "").rstrip(".")
    if "default" in text or field.default in (None, False, ()) or field.default_factory is not None:
        return text
    return f"{text} (default: {field.default})"


def build_parser() -> argparse.ArgumentParser:
    common = _common_options()
    in_process = _common_options(serving=False)
    parser = argparse.ArgumentParser(
        prog="pytest-mcp",
        description="Serve a project's pytest suite to AI agents over MCP (stdio by default).",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"pytest-mcp {__version__}")
    parser.add_argument(
        "--print-config",
        action="store_true",
        help="print the effective settings (flags > environment > [tool.pytest-mcp] > defaults) and exit",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    call = commands.add_parser(
        "call",
        parents=[in_process],
        help="run one tool in-process and print its text and structured result",
        description="Run one tool through the full MCP stack in-process, without an MCP client.",
    )
    call.add_argument("tool", help="execute_tests, discover_tests or check_environment")
    call.add_argument("arguments", nargs="?", default="{}", help="the tool's arguments as a JSON object")
    record = commands.add_parser(
        "record",
        parents=[in_process],
        help="run the suite once and save it as a replayable FakeTestRunner script",
        description="Run the project's tests once with the real runner and write every test's outcome and "
        "evidence to a JSON recording that pytest_mcp.testing.FakeTestRunner.from_recording replays.",
    )
    record.add_argument("--out", required=True, metavar="FILE", help="where to write the recording (JSON)")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {name: getattr(args, name) for name in Settings.model_fields if hasattr(args, name)}
    if args.command == "call":
        overrides.setdefault("log_level", "warning")
    return Settings(**overrides)


def main(argv: Sequence[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = _settings(args)
    except ValidationError as exc:
        problems = "\n".join(
            f"  {'.'.join(map(str, error['loc'])) or 'settings'}: {error['msg'].removeprefix('Value error, ')}"
            for error in exc.errors()
        )
        parser.exit(2, f"pytest-mcp: invalid configuration:\n{problems}\n")
    except SettingsError as exc:
        parser.exit(2, f"pytest-mcp: invalid configuration:\n  {exc}\n")
    if getattr(args, "print_config", False):
        print(json.dumps(settings.for_display(), indent=2))
        sys.exit(0)
    _import_structlog_without_rich()
    from pytest_mcp.container import create_container  # after structlog: it imports every adapter

    container = create_container(settings)
    if settings.sandbox and settings.runner == "subprocess":
        from pytest_mcp.adapters.pytest_subprocess.sandbox import SandboxUnavailable

        try:
            container.sandbox()  # --sandbox: refused here, with the reason and the fix, never run without
        except SandboxUnavailable as exc:
            parser.exit(2, f"pytest-mcp: not starting: {exc}\n")
    if args.command == "call":
        try:
            arguments = strict_json(args.arguments)
        except ValueError as exc:
            parser.exit(2, f"pytest-mcp: arguments: {exc}\n")
        if not isinstance(arguments, dict):
            parser.exit(2, "pytest-mcp: arguments: must be a JSON object\n")
        sys.exit(_call(container, args.tool, arguments))
    if args.command == "record":
        sys.exit(_record(container, settings.root, Path(args.out)))
    sys.exit(_serve(container))


def strict_json(text: str) -> Any:
    """`text` parsed as JSON as a client would send it, or ValueError saying why not.

    Python's parser also takes NaN, Infinity and numbers too large for a float (1e400 becomes
    inf); sent on, the client would encode them as null, so `{"timeout": NaN}` would silently
    mean the default timeout. Nesting deeper than Python can parse is refused too.
    """

    def refuse(constant: str) -> float:
        raise ValueError(f"not valid JSON: {constant} is not a JSON number")

    def finite(number: str) -> float:
        value = float(number)
        if value in (float("inf"), float("-inf")):
            raise ValueError(f"not valid JSON here: {number} is too large for a number")
        return value

    try:
        return json.loads(text, parse_constant=refuse, parse_float=finite)
    except RecursionError:
        raise ValueError("not valid JSON here: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc})") from None


def _import_structlog_without_rich() -> None:
    """Import structlog in this process without letting it import rich (about 35 ms of start-up).

    structlog imports rich, when it is installed, for the pretty tracebacks of its console
    renderer. Ours never uses them: `format_exc_info` renders exceptions to plain text before
    the renderer runs, with colours off. Only the `pytest-mcp` process does this; in-process
    users (`pytest_mcp.testing`) import structlog as they always would.
    """
    if "structlog" in sys.modules or "rich" in sys.modules:
        return
    sys.modules["rich"] = None  # type: ignore[assignment]  # `import rich` raises ImportError
    try:
        import structlog  # noqa: F401
    finally:
        del sys.modules["rich"]


def _serve(container: Container) -> int:
    from pytest_mcp.ports.run_store import RunStoreUnavailable

    container.init_resources()
    transport, tool_server, heap = container.transport(), container.tool_server(), container.heap()

    def idle_seconds() -> float:  # no call in flight, and no run either (a detached one holds a slot)
        if not tool_server.called:  # nor can a run have started: the run slots are built by a first call
            return tool_server.idle_seconds()
        return min(tool_server.idle_seconds(), container.run_slots().idle_seconds())

    heap.start()  # after the server is built: its start-up objects are frozen with the imports
    try:
        served: int = anyio.run(
            _serving, transport.serve, tool_server, heap, idle_seconds, container.first_call_imports()
        )
    except (RunStoreUnavailable, BaseExceptionGroup) as exc:  # the store is attached before serving
        unavailable = exc.split(RunStoreUnavailable)[0] if isinstance(exc, BaseExceptionGroup) else exc
        while isinstance(unavailable, BaseExceptionGroup):
            unavailable = unavailable.exceptions[0]
        if unavailable is None:
            raise
        print(f"pytest-mcp: not starting: {unavailable}", file=sys.stderr)
        return 1
    finally:
        heap.stop()
        container.shutdown_resources()
    return served


async def _serving(
    serve: Callable[[McpToolServer], Awaitable[int]],
    tool_server: McpToolServer,
    heap: FrozenHeap,
    idle_seconds: Callable[[], float],
    first_call_imports: Callable[[], None] | None = None,
) -> int:
    """The transport serving, and beside it the heap's keeper: collections walk only what is new, the
    whole heap only when no call or run waits (ADR 0022). Meanwhile a thread imports what the first
    call would otherwise import on the event loop (about 90 ms of CPU there, ADR 0022)."""
    async with anyio.create_task_group() as group:
        group.start_soon(heap.keep, idle_seconds)
        if first_call_imports is not None:
            # Abandoned on shutdown: an import cannot be interrupted, and the process is ending.
            group.start_soon(functools.partial(anyio.to_thread.run_sync, first_call_imports, abandon_on_cancel=True))
        code = await serve(tool_server)
        group.cancel_scope.cancel()
    return code


def _call(container: Container, tool: str, arguments: dict[str, Any]) -> int:
    # Here, not at the top: the SDK's import is most of a start-up (1.6 s of CPU), and a command
    # line or configuration that is refused should be told so at once.
    from mcp import Client, MCPError

    from pytest_mcp.adapters.mcp.tool_errors import ERROR_META_KEY

    container.init_resources()

    async def call() -> int:
        async with Client(container.tool_server().server) as client:
            try:
                result = await client.call_tool(tool, arguments)
            except MCPError as exc:  # a protocol error, or any error with --error-mode jsonrpc
                return _print_error(exc.code, exc.message, exc.error.data)
        if result.is_error:
            error = (result.meta or {}).get(ERROR_META_KEY, {})
            return _print_error(error.get("code"), error.get("message"), error.get("data"))
        for block in result.content:
            print(getattr(block, "text", block))
        print("\n--- structuredContent ---")
        print(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
        return 0

    try:
        return anyio.run(call)
    finally:
        container.shutdown_resources()


def _print_error(code: object, message: object, data: object) -> int:
    print(f"error {code}: {message}", file=sys.stderr)
    if data is not None:
        print(json.dumps(data, indent=2, ensure_ascii=False), file=sys.stderr)
    return 1


def _record(container: Container, root: Path, out: Path) -> int:
    try:
        document = anyio.run(container.recorder().record)
    except ExecutionFailed as exc:
        print(f"pytest-mcp: nothing recorded: {exc.message}", file=sys.stderr)
        return 1
    except InvalidArguments as exc:  # the files that did collect are too many to name in one command
        print(f"pytest-mcp: nothing recorded: {exc}", file=sys.stderr)
        return 1
    out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    errors = len(document["collection_errors"])
    broken = f" and {errors} collection error{'s' if errors != 1 else ''}" if errors else ""
    print(f"recorded {len(document['tests'])} tests{broken} from {root} to {out}")
    return 0
