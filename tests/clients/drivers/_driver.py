"""What the Python drivers share: the command line, the two scenarios and the JSON they print.

    DRIVER TARGET SCENARIO PLAN

TARGET is a JSON object: {"transport": "stdio", "command": [...], "env": {...}} or
{"transport": "http" | "sse", "url": "..."}. PLAN is a JSON file with the calls' arguments (a file,
so that nothing of it, such as the sleeping test's marker, shows in the driver's own argv). Each
driver runs under its own client's interpreter (.clients/*/bin/python) and imports nothing from
pytest-mcp; every call is an execute_tests call.

SCENARIO `calls`: PLAN maps a name to arguments. The driver lists the tools, makes each call with a
progress callback (or what the framework has for one) and prints one JSON object,
{"tools": [...], "calls": {name: OUTCOME}}, where OUTCOME is
    {"text": the string the framework hands to the model, "is_error": ..., "summary": ...,
     "progress": [[progress, total], ...], "raised": "ExceptionType: message" or null}.

SCENARIO `cancel`: PLAN is {"run": ..., "after": ...}. The driver starts the `run` call and prints
{"event": "calling"}; on the line "cancel" from stdin it cancels the call the way its client does
and prints {"event": "cancelled", "finished": OUTCOME if the call completed anyway, else null};
on the line "after" it makes the `after` call and prints {"event": "after", **OUTCOME}. The
session stays open in between, so what stops pytest is the cancellation, not a disconnect; except
where a client stops a call only by leaving the call's own session (py_mcp.py on 1.x, and
langchain_graph.py, whose tools open a session per call), and the `after` call uses another.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

Outcome = dict[str, Any]


class Session(Protocol):
    async def tool_names(self) -> list[str]: ...

    async def call(self, arguments: dict[str, Any]) -> Outcome: ...


Connect = Callable[[dict[str, Any]], AbstractAsyncContextManager[Session]]


def outcome(
    text: str | None,
    *,
    is_error: bool | None = None,
    summary: dict[str, Any] | None = None,
    progress: list[tuple[float, float | None]] | None = None,
    raised: BaseException | None = None,
) -> Outcome:
    return {
        "text": text,
        "is_error": is_error,
        "summary": summary,
        "progress": [list(p) for p in progress or []],
        "raised": described(raised) if raised is not None else None,
    }


def described(error: BaseException) -> str:
    """`Type: message`; for an exception group, followed by its leaves', so that a failure says what raised."""
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, BaseExceptionGroup):
        text += "".join(f" [{described(leaf)}]" for leaf in error.exceptions)
    return text


def texts(content: Any) -> str:
    """The text of MCP (or framework) content blocks, joined by newlines."""
    parts = []
    for block in content or []:
        text = block.get("text") if isinstance(block, dict) else getattr(block, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts)


def emit(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def expect(command: str) -> None:
    line = (await asyncio.to_thread(sys.stdin.readline)).strip()
    if line != command:
        raise SystemExit(f"expected {command!r} on stdin, got {line!r}")


async def calls(connect: Connect, target: dict[str, Any], plan: dict[str, Any]) -> None:
    async with connect(target) as session:
        tools = await session.tool_names()
        results = {name: await session.call(arguments) for name, arguments in plan.items()}
    emit({"tools": tools, "calls": results})


async def cancel(connect: Connect, target: dict[str, Any], plan: dict[str, Any], *, own_session: bool) -> None:
    """Cancel the asyncio task making the call (Task.cancel(), as asyncio programs and these frameworks do);
    with `own_session`, that task also owns the session the call runs in."""
    async with connect(target) as session:

        async def run() -> Outcome:
            if not own_session:
                return await session.call(plan["run"])
            async with connect(target) as its_own:
                return await its_own.call(plan["run"])

        task = asyncio.create_task(run())
        emit({"event": "calling"})
        await expect("cancel")
        task.cancel()
        finished = None
        with contextlib.suppress(asyncio.CancelledError):
            finished = await task
        emit({"event": "cancelled", "finished": finished})
        await expect("after")
        emit({"event": "after", **await session.call(plan["after"])})


def main(connect: Connect, *, cancel_leaves_session: bool = False) -> None:
    target, scenario = json.loads(sys.argv[1]), sys.argv[2]
    with open(sys.argv[3], encoding="utf-8") as file:
        plan = json.load(file)
    if scenario == "calls":
        asyncio.run(calls(connect, target, plan))
    else:
        asyncio.run(cancel(connect, target, plan, own_session=cancel_leaves_session))
