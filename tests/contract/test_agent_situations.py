"""An agent's situations through the fake and through real pytest (issue 43): the same answers, the same decisions.

Each situation runs against real pytest (the subprocess runner) on a project written from
`situations.Shop`, and against the fake scripted from the same description. The contract compares
what an agent reads: the groups (ids, counts, culprits, labels), the culprits with their `changed`,
the localization, `changed_untested` and the pages of a cause's members. And `policy`, an agent's
fix-it rules (open the culprit, ignore preexisting failures, re-run flaky ones once, poll detached
runs, page big causes), must decide the same on both answers. The real side runs this interpreter:
a second pass before Python 3.12, the run's own recording from 3.12; the fake scripts the same one.
"""

from __future__ import annotations

import importlib.util
import platform
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from pytest_mcp.testing import FakeTestRunner, connect
from tests.contract.conftest import plain_pytest_environment
from tests.contract.situations import FLAKY, GROSS, MANY, NET, Shop
from tests.linked_venvs import PYTEST_AND_ITS_DEPENDENCIES, SITE_PACKAGES

pytestmark = pytest.mark.anyio


def _example_policy() -> Any:
    """The README's worked example, examples/agent_loop/agent_policy.py: the policy held to both sides."""
    path = Path(__file__).resolve().parents[2] / "examples" / "agent_loop" / "agent_policy.py"
    spec = importlib.util.spec_from_file_location("agent_policy_example", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


policy = _example_policy().next_steps
"""An agent's fix-it rules: open the culprit, ignore preexisting failures, re-run flaky ones once, poll
detached runs, page big causes."""


def seen(answer: dict[str, Any]) -> dict[str, Any]:
    """What the contract compares of an answer."""
    return {
        "exit_code": answer.get("exit_code"),
        "summary": {key: value for key, value in answer["summary"].items() if key != "duration"},
        "groups": [
            {
                "id": group["id"],
                "count": group["count"],
                "members": group.get("members", []),
                "symptoms": group.get("symptoms", []),
                "culprit": group.get("culprit"),
                "since": group.get("since"),
            }
            for group in answer.get("groups", [])
        ],
        "culprits": answer.get("culprits", []),
        "localization": {
            key: value for key, value in (answer.get("localization") or {}).items() if key not in ("seconds",)
        },
        "changed_untested": answer.get("changed_untested", []),
    }


class Side:
    """The situation's project behind one server, with the agent's two moves: call a tool, edit the code."""

    def __init__(self, name: str, shop: Shop, client: Client, root: Path, runner: FakeTestRunner | None) -> None:
        self.name, self.shop, self.client, self.root, self.runner = name, shop, client, root, runner
        self.wrong = set(shop.wrong)

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        result = await self.client.call_tool(tool, arguments or {})
        assert not result.is_error, f"{self.name}: {result.content}"
        assert result.structured_content is not None
        return result.structured_content

    def edit(self, *wrong: str) -> None:
        """An edit that makes these functions wrong."""
        self.wrong |= set(wrong)
        if self.runner is None:
            self.shop.edit_real(self.root, self.wrong)
        else:
            self.shop.script(self.runner, self.wrong).change(*wrong)


@pytest.fixture(scope="session", params=["this-python", pytest.param("python-3.12", marks=pytest.mark.slow)])
def python(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The target interpreter and its version: this one, and one that records in the run (3.12 and later).

    The 3.12 one links our pytest (pure Python) into a venv of pyenv's 3.12: offline, in a second."""
    if request.param == "this-python":
        return Path(sys.executable), platform.python_version()
    if sys.version_info >= (3, 12):
        pytest.skip("this interpreter records in the run already")
    found = sorted(Path.home().glob(".pyenv/versions/3.12*/bin/python"))
    if not found:
        pytest.skip("no Python 3.12 under pyenv")
    home = tmp_path_factory.mktemp("py312") / "venv"
    subprocess.run([str(found[0]), "-m", "venv", "--without-pip", str(home)], check=True, timeout=60)
    site = next((home / "lib").glob("python3.*/site-packages"))
    for name in PYTEST_AND_ITS_DEPENDENCIES:
        for package in (SITE_PACKAGES / name, *SITE_PACKAGES.glob(f"{name}-*.dist-info")):
            if package.exists():
                (site / package.name).symlink_to(package)
    version = subprocess.run(
        [str(home / "bin" / "python"), "-c", "import platform; print(platform.python_version())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return home / "bin" / "python", version.stdout.strip()


@asynccontextmanager
async def opened(
    name: str, shop: Shop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, python: tuple[Path, str]
) -> AsyncIterator[Side]:
    root = shop.write(tmp_path / "shop")
    runner = None
    if name == "fake":
        # The fake records as the target interpreter would: in the run from 3.12, by a second pass before.
        runner = FakeTestRunner(root=root).script_environment(python_version=python[1])
        shop.script(runner, shop.wrong)
    else:
        plain_pytest_environment(monkeypatch)
        monkeypatch.setenv("PYTEST_MCP_LOCALIZE", "10")  # a busy machine must not cut a second pass short
    async with connect(runner, root=root, python=python[0]) as client:
        yield Side(name, shop, client, root, runner)


async def a_wrong_value_shared_by_three_files(side: Side) -> list[dict[str, Any]]:
    side.edit(GROSS)  # since git's HEAD, before the session's first run
    return [await side.call("execute_tests")]


async def a_preexisting_failure(side: Side) -> list[dict[str, Any]]:
    return [await side.call("execute_tests"), await side.call("execute_tests")]


async def an_edit_after_a_clean_run(side: Side) -> list[dict[str, Any]]:
    clean = await side.call("execute_tests")
    side.edit(GROSS)
    return [clean, await side.call("execute_tests")]


async def a_flip_on_rerun(side: Side) -> list[dict[str, Any]]:
    first = await side.call("execute_tests")
    reruns = [node_id for step, node_id in policy(first) if step == "rerun"] or [FLAKY]
    return [first, await side.call("execute_tests", {"node_ids": reruns})]


async def a_400_member_cause(side: Side) -> list[dict[str, Any]]:
    side.edit(GROSS)
    answer = await side.call("execute_tests")
    answers = [answer]
    for step, group in policy(answer):
        if step == "page":
            offset: int | None = 0
            while offset is not None:
                page = await side.call("get_test_run", {"run_id": answer["run_id"], "group": group, "offset": offset})
                answers.append({"members": page["members"], "page": page["page"]})
                offset = page["page"]["next_offset"]
    return answers


SITUATIONS: dict[str, tuple[Shop, Callable[[Side], Awaitable[list[dict[str, Any]]]]]] = {
    "three-files": (Shop(), a_wrong_value_shared_by_three_files),
    "preexisting": (Shop(wrong={NET}), a_preexisting_failure),
    "edit-after-clean-run": (Shop(), an_edit_after_a_clean_run),
    "flip-on-rerun": (Shop(flaky=True), a_flip_on_rerun),
    "400-members": (Shop(many=True), a_400_member_cause),
}


async def play(
    name: str, situation: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, python: tuple[Path, str]
) -> list[dict[str, Any]]:
    shop, steps = SITUATIONS[situation]
    fresh = Shop(set(shop.wrong), shop.flaky, shop.many)
    async with opened(name, fresh, tmp_path / name, monkeypatch, python) as side:
        return await steps(side)


def compared(answer: dict[str, Any]) -> dict[str, Any]:
    return answer if "members" in answer else seen(answer)


@pytest.mark.parametrize("situation", list(SITUATIONS))
async def test_the_fake_answers_an_agents_situation_as_real_pytest_does_and_the_policy_decides_the_same(
    situation: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, python: tuple[Path, str], anyio_backend: str
) -> None:
    real = await play("subprocess", situation, tmp_path, monkeypatch, python)
    fake = await play("fake", situation, tmp_path, monkeypatch, python)

    assert [compared(answer) for answer in fake] == [compared(answer) for answer in real]
    assert [policy(answer) for answer in fake] == [policy(answer) for answer in real]


async def test_what_each_situation_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, python: tuple[Path, str], anyio_backend: str
) -> None:
    """The fake's answers, read as the situations mean them (the contract test holds the real side to them)."""
    [three] = await play("fake", "three-files", tmp_path / "1", monkeypatch, python)
    [cause] = three["groups"]
    assert (cause["count"], cause["culprit"]["function"], cause["culprit"]["changed"]) == (6, "gross_price", True)
    assert policy(three) == [("open", GROSS)]

    _, again = await play("fake", "preexisting", tmp_path / "2", monkeypatch, python)
    assert again["culprits"][0].get("preexisting") is True
    assert policy(again) == [("ignore", again["groups"][0]["id"])]

    _, edited = await play("fake", "edit-after-clean-run", tmp_path / "3", monkeypatch, python)
    assert [(c["function"], c["changed"], c["changed_since"]) for c in edited["culprits"]] == [
        ("gross_price", True, "run")
    ]
    assert len(edited["groups"]) == 1

    first, rerun = await play("fake", "flip-on-rerun", tmp_path / "4", monkeypatch, python)
    assert first["summary"]["failed"] == 1
    assert rerun["exit_code"] == 0

    big, *pages = await play("fake", "400-members", tmp_path / "5", monkeypatch, python)
    assert big["groups"][0]["count"] == MANY + 6
    assert sum(len(page["members"]) for page in pages) == MANY + 6
    assert len(pages) > 1
