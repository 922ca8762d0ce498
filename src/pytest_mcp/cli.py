"""The `pytest-mcp` command: serve MCP over stdio, or run one tool call in-process."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import anyio
from mcp import Client, MCPError
from pydantic import ValidationError

from pytest_mcp import __version__
from pytest_mcp.container import Container, create_container
from pytest_mcp.settings import Settings

_SETTING_FLAGS = ("root", "python", "timeout", "max_timeout", "log_level", "log_format")


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS keeps unset flags out of the namespace, so the environment and defaults apply.
    add = common.add_argument
    add(
        "--root",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="project root (default: cwd, or PYTEST_MCP_ROOT)",
    )
    add(
        "--python",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="target interpreter (default: ROOT/.venv if present, else this one; or PYTEST_MCP_PYTHON)",
    )
    add(
        "--timeout",
        metavar="SECONDS",
        type=int,
        default=argparse.SUPPRESS,
        help="default per-call timeout (300)",
    )
    add(
        "--max-timeout",
        metavar="SECONDS",
        type=int,
        default=argparse.SUPPRESS,
        help="largest timeout a call may ask for (3600)",
    )
    add("--log-level", choices=("debug", "info", "warning", "error"), default=argparse.SUPPRESS)
    add("--log-format", choices=("console", "json"), default=argparse.SUPPRESS, help="stderr log format")
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _common_options()
    parser = argparse.ArgumentParser(
        prog="pytest-mcp",
        description="Serve a project's pytest suite to AI agents over MCP (stdio by default).",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"pytest-mcp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    call = commands.add_parser(
        "call",
        parents=[common],
        help="run one tool in-process and print its text and structured result",
        description="Run one tool through the full MCP stack in-process, without an MCP client.",
    )
    call.add_argument("tool", help="execute_tests or discover_tests")
    call.add_argument("arguments", nargs="?", default="{}", help="the tool's arguments as a JSON object")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {name: getattr(args, name) for name in _SETTING_FLAGS if hasattr(args, name)}
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
    container = create_container(settings)
    if args.command == "call":
        try:
            arguments = json.loads(args.arguments)
        except json.JSONDecodeError as exc:
            parser.exit(2, f"pytest-mcp: arguments: not valid JSON ({exc})\n")
        if not isinstance(arguments, dict):
            parser.exit(2, "pytest-mcp: arguments: must be a JSON object\n")
        sys.exit(_call(container, args.tool, arguments))
    sys.exit(_serve(container))


def _serve(container: Container) -> int:
    container.init_resources()
    code: int = anyio.run(container.transport().serve, container.tool_server().server)
    container.shutdown_resources()
    return code


def _call(container: Container, tool: str, arguments: dict[str, Any]) -> int:
    container.init_resources()

    async def call() -> int:
        async with Client(container.tool_server().server) as client:
            try:
                result = await client.call_tool(tool, arguments)
            except MCPError as exc:
                print(f"error {exc.code}: {exc.message}", file=sys.stderr)
                if exc.error.data is not None:
                    print(json.dumps(exc.error.data, indent=2, ensure_ascii=False), file=sys.stderr)
                return 1
        for block in result.content:
            print(getattr(block, "text", block))
        print("\n--- structuredContent ---")
        print(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
        return 0

    try:
        return anyio.run(call)
    finally:
        container.shutdown_resources()
