"""openai-agents: an Agent with the server in mcp_servers, run by Runner.run with a scripted model.

    .clients/openai-agents-0.24.0/bin/python openai_agents.py TARGET SCENARIO PLAN    (see _driver.py)

No LLM: the scripted model asks for one execute_tests call, then records the function_call_output
the runner hands it on the next turn. That output is the string the framework hands to the model.
The tools are those the runner offers the model. isError and the summary are read with the
server's custom_data_extractor, the SDK's way for a program (not the model) to read a result.

Progress: agents.mcp has no progress API (no "progress" anywhere in agents/mcp/ in 0.24.0). The
nearest honest thing uses two public MCPServer parameters: tool_meta_resolver puts a progressToken
in the call's _meta, and message_handler receives the server's notifications/progress.

Cancelling is cancelling the task running Runner.run.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from _driver import Outcome, main, outcome
from agents import Agent, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.mcp import MCPServerSse, MCPServerStdio, MCPServerStreamableHttp
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

# agents' default is 5 s, after which a call fails; a run may take longer than that.
SESSION_TIMEOUT = 120.0


class ScriptedModel(Model):
    """Turn 1: call execute_tests with the given arguments (if any); turn 2: record the tool output."""

    def __init__(self, arguments: dict[str, Any] | None) -> None:
        self.arguments = arguments
        self.offered: list[str] = []
        self.outputs: list[Any] = []

    async def get_response(
        self, system_instructions: Any, input: Any, model_settings: Any, tools: Any, *a: Any, **kw: Any
    ) -> ModelResponse:
        self.offered = [tool.name for tool in tools]
        self.outputs = [
            item["output"] for item in input if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]
        if self.arguments is None or self.outputs:
            done = ResponseOutputText(type="output_text", text="done", annotations=[])
            message = ResponseOutputMessage(
                id="m1", type="message", role="assistant", status="completed", content=[done]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)
        call = ResponseFunctionToolCall(
            type="function_call", id="f1", call_id="c1", name="execute_tests", arguments=json.dumps(self.arguments)
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *a: Any, **kw: Any) -> Any:
        raise NotImplementedError


def model_text(output: Any) -> str:
    """A function_call_output's output: a string, or input_text items."""
    if isinstance(output, str):
        return output
    return "\n".join(item["text"] for item in output if item.get("type") == "input_text")


class Progress:
    """Gives each call its progressToken (tool_meta_resolver) and files notifications by token (message_handler)."""

    def __init__(self) -> None:
        self.token = ""
        self.seen: dict[str, list[tuple[float, float | None]]] = defaultdict(list)

    def next_call(self) -> list[tuple[float, float | None]]:
        self.token = f"agents-{uuid.uuid4().hex}"
        return self.seen[self.token]

    def meta(self, context: Any) -> dict[str, Any]:
        return {"progressToken": self.token}

    async def on_message(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/progress":
            self.seen[message.params.progress_token].append((message.params.progress, message.params.total))


class Session:
    def __init__(self, server: Any, progress: Progress) -> None:
        self.server = server
        self.progress = progress

    async def run(self, arguments: dict[str, Any] | None) -> tuple[ScriptedModel, Any]:
        model = ScriptedModel(arguments)
        result = await Runner.run(Agent(name="tester", model=model, mcp_servers=[self.server]), "run the tests")
        return model, result

    async def tool_names(self) -> list[str]:
        model, _ = await self.run(None)
        return model.offered

    async def call(self, arguments: dict[str, Any]) -> Outcome:
        progress = self.progress.next_call()
        try:
            model, result = await self.run(arguments)
        except Exception as error:
            return outcome(None, progress=progress, raised=error)
        (output,) = model.outputs
        extracted = [item.custom_data for item in result.new_items if type(item).__name__ == "ToolCallOutputItem"]
        data = (extracted[0] if extracted else None) or {}  # none when the call was a JSON-RPC error
        is_error, summary = data.get("is_error"), data.get("summary")
        return outcome(model_text(output), is_error=is_error, summary=summary, progress=progress)


def extract(context: Any) -> dict[str, Any]:
    """custom_data_extractor: what a program (not the model) can read of the result."""
    return {"is_error": context.is_error, "summary": (context.structured_content or {}).get("summary")}


@asynccontextmanager
async def connect(target: dict[str, Any]) -> AsyncIterator[Session]:
    progress = Progress()
    common: dict[str, Any] = {
        "client_session_timeout_seconds": SESSION_TIMEOUT,
        "tool_meta_resolver": progress.meta,
        "message_handler": progress.on_message,
        "custom_data_extractor": extract,
    }
    if target["transport"] == "stdio":
        command, *args = target["command"]
        server: Any = MCPServerStdio(params={"command": command, "args": args, "env": target["env"]}, **common)
    elif target["transport"] == "sse":
        server = MCPServerSse(params={"url": target["url"], "sse_read_timeout": SESSION_TIMEOUT}, **common)
    else:
        server = MCPServerStreamableHttp(params={"url": target["url"], "sse_read_timeout": SESSION_TIMEOUT}, **common)
    async with server:
        yield Session(server, progress)


if __name__ == "__main__":
    set_tracing_disabled(True)  # nothing is sent anywhere
    main(connect)
