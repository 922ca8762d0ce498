"""A fix-it policy for an agent that drives pytest-mcp, and the loop that follows it.

The rules, read from execute_tests' structured answer:
- **open the culprit**: the likely faulty function the answer names, unless its failures were all
  already failing (`preexisting`): the agent's own regression first;
- **ignore preexisting failures**: a group whose tests all failed the same way before;
- **re-run flaky ones once**: a group labelled flaky, and a failure no culprit explains, is run
  again by node id, once;
- **poll detached runs**: a `"running"` answer is followed with get_test_run until it ends;
- **page big causes**: a cause with more members than the answer lists is paged with get_test_run.

`next_steps` is pure: it reads an answer and returns the steps. pytest-mcp's contract suite holds
it to the real server (tests/contract/test_agent_situations.py): on the fake's answer and on real
pytest's, for the same situation, it decides the same. `follow` is the loop an agent would run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp import Client

Step = tuple[str, str]
"""(what, on what): ("open", "shop/price.py::gross_price"), ("ignore", group id), ("rerun", node id),
("page", group id), ("poll", run id)."""


def next_steps(answer: dict[str, Any]) -> list[Step]:
    """What to do next on an execute_tests (or get_test_run) answer."""
    if answer.get("status") == "running":
        return [("poll", answer["run_id"])]
    steps: list[Step] = []
    for culprit in answer.get("culprits", []):
        if not culprit.get("preexisting"):
            steps.append(("open", f"{culprit['file']}::{culprit['function']}"))
    for group in answer.get("groups", []):
        since = group.get("since") or {}
        if since.get("preexisting") and not (since.get("new") or since.get("unknown") or since.get("flaky")):
            steps.append(("ignore", group["id"]))
            continue
        if since.get("flaky") or group.get("culprit") is None:
            steps.append(("rerun", group["representative"]["node_id"]))
        if group["count"] > max(len(group.get("members", [])), 1):
            steps.append(("page", group["id"]))
    return steps


@dataclass
class Transcript:
    """What the agent did: the files it opened, the tests it ran again, the members it paged, its polls."""

    opened: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    rerun: list[str] = field(default_factory=list)
    paged: dict[str, list[str]] = field(default_factory=dict)
    polls: int = 0
    answers: list[dict[str, Any]] = field(default_factory=list)


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    if result.is_error or result.structured_content is None:
        raise RuntimeError(f"{tool} failed: {result.content}")
    return result.structured_content


async def follow(client: Client, arguments: dict[str, Any] | None = None, *, max_polls: int = 20) -> Transcript:
    """Run the tests and follow the policy: poll until the run ends, open culprits, re-run flaky failures
    once, page big causes. Bounded: at most `max_polls` polls, and one re-run."""
    transcript = Transcript()
    answer = await call(client, "execute_tests", arguments or {})
    rerun_done = False
    while True:
        transcript.answers.append(answer)
        steps = next_steps(answer)
        if steps and steps[0][0] == "poll":
            if transcript.polls == max_polls:
                raise RuntimeError(f"the run was still going after {max_polls} polls")
            transcript.polls += 1
            answer = await call(client, "get_test_run", {"run_id": steps[0][1], "wait": 5})
            continue
        rerun = []
        for what, target in steps:
            if what == "open":
                transcript.opened.append(target)
            elif what == "ignore":
                transcript.ignored.append(target)
            elif what == "rerun" and not rerun_done:
                rerun.append(target)
            elif what == "page":
                transcript.paged[target] = await _members(client, answer["run_id"], target)
        if not rerun:
            return transcript
        rerun_done = True
        transcript.rerun += rerun
        answer = await call(client, "execute_tests", {"node_ids": rerun})


async def _members(client: Client, run_id: str, group: str) -> list[str]:
    """Every member of a cause, page by page."""
    members: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = await call(client, "get_test_run", {"run_id": run_id, "group": group, "offset": offset})
        members += page["members"]
        offset = page["page"]["next_offset"]
    return members
