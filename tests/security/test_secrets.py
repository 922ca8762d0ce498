"""No answer, error or log line carries a value from the server's environment.

Two secrets are planted in the server's environment: its own bearer token and a stand-in for a
cloud credential. Then every way we know of to make the server read its environment back is
tried, over stdio and over HTTP: response files naming /proc/self/environ (pytest 8.2+ would
print the file's first line in its error), absolute and lexically escaping paths to it, links
in the project that lead to it, expressions, unknown tools, runs that crash or time out,
check_environment, and the HTTP error pages. Each answer and the server's whole log are then
searched for both values.

The project's own code is trusted and runs with the server's environment: a test of the
project that prints os.environ shows the credential, and that case is run too, to show the
search would find a leak. The server's token is the exception: no process the server starts
inherits it.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.client.stdio import stdio_client

from tests.e2e.e2e_support import connect, http_server
from tests.security.trapped_project import build_trapped_project, server_parameters

pytestmark = pytest.mark.anyio

TOKEN = f"srv-token-{uuid.uuid4().hex}{uuid.uuid4().hex}"
CLOUD = f"cloud-secret-{uuid.uuid4().hex}"
ENVIRON = "/proc/self/environ"

READ_BACK: list[tuple[str, str, dict[str, Any]]] = [
    ("response-file", "execute_tests", {"node_ids": [f"@{ENVIRON}"]}),
    ("response-file-parent", "execute_tests", {"node_ids": ["@/proc/1/environ", f"@/proc/{os.getpid()}/environ"]}),
    ("response-file-relative", "execute_tests", {"node_ids": ["@../../../../../../proc/self/environ"]}),
    ("response-file-via-link", "execute_tests", {"node_ids": ["@environ_link"]}),
    ("response-file-discover", "discover_tests", {"path": f"@{ENVIRON}"}),
    ("response-file-in-keywords", "execute_tests", {"keywords": f"@{ENVIRON}"}),
    ("response-file-in-markers", "discover_tests", {"markers": f"@{ENVIRON}"}),
    ("absolute", "execute_tests", {"node_ids": [ENVIRON]}),
    ("dotdot", "execute_tests", {"node_ids": ["../" * 12 + "proc/self/environ"]}),
    ("link-to-environ", "execute_tests", {"node_ids": ["environ_link"]}),
    ("link-to-environ-node", "execute_tests", {"node_ids": ["environ_link::test_x"]}),
    ("link-to-proc", "execute_tests", {"node_ids": ["proc_link/environ"]}),
    ("symlink-then-dotdot", "execute_tests", {"node_ids": ["deep/" + "../" * 12 + "proc/self/environ"]}),
    ("discover-link", "discover_tests", {"path": "proc_link"}),
    ("walk-into-proc", "execute_tests", {"node_ids": ["."]}),
    ("default-walk", "discover_tests", {}),
    ("unknown-tool", "@/proc/self/environ", {}),
    ("unknown-parameter", "execute_tests", {"env": {"X": "${PYTEST_MCP_AUTH_TOKEN}"}, f"@{ENVIRON}": 1}),
    ("environment-check", "check_environment", {}),
    ("crash", "execute_tests", {"node_ids": ["test_crash.py"]}),
    ("timeout", "execute_tests", {"node_ids": ["test_slow.py"], "timeout": 2}),
    ("usage-error", "execute_tests", {"node_ids": ["missing.py"]}),
]


def leaky_project(base: Path) -> Path:
    """The trapped project (with its `deep -> a/b/c`), links to the environment file and to /proc, and
    tests that end badly."""
    trapped = build_trapped_project(base)
    root = trapped.root
    os.symlink(ENVIRON, root / "environ_link")
    os.symlink("/proc/self", root / "proc_link")
    (root / "test_crash.py").write_text("import ctypes\n\ndef test_crash():\n    ctypes.string_at(0)\n")
    (root / "test_slow.py").write_text("import time\n\ndef test_slow():\n    time.sleep(30)\n")
    (root / "test_prints_env.py").write_text(
        "import os\n\ndef test_prints_env():\n"
        "    print(os.environ.get('CLOUD_SECRET_FOR_TEST'), os.environ.get('PYTEST_MCP_AUTH_TOKEN'))\n"
        "    assert False\n"
    )
    return root


def answer_text(outcome: Any) -> str:
    if isinstance(outcome, MCPError):
        return outcome.message + json.dumps(outcome.error.data)
    text: str = outcome.model_dump_json(by_alias=True)  # content, structuredContent and _meta
    return text


async def read_back(client: Client, cases: list[tuple[str, str, dict[str, Any]]]) -> dict[str, str]:
    answers = {}
    for name, tool, arguments in cases:
        try:
            outcome: Any = await client.call_tool(tool, arguments)
        except MCPError as error:
            outcome = error
        answers[name] = answer_text(outcome)
    return answers


def project_prints_env() -> list[tuple[str, str, dict[str, Any]]]:
    return [("project-prints-env", "execute_tests", {"node_ids": ["test_prints_env.py"]})]


def assert_no_secret(answers: dict[str, str], log: str) -> None:
    assert set(answers) == {name for name, _, _ in READ_BACK} | {"project-prints-env"}
    for name, text in answers.items():
        assert TOKEN not in text, f"{name} leaked the server's token"
        if name != "project-prints-env":
            assert CLOUD not in text, f"{name} leaked a value of the server's environment"
    # The project's own test prints its environment: the search finds what is there to find.
    assert CLOUD in answers["project-prints-env"]
    assert TOKEN not in log
    assert CLOUD not in log


async def test_nothing_reads_the_servers_environment_back_over_stdio(tmp_path: Path, bare_python: Path) -> None:
    # The server's --python is this wrapper, exec'ing a venv of pytest alone: over stdio, with this
    # suite's variables, the dev venv would load its plugins at each of the seven starts of pytest.
    root = leaky_project(tmp_path)
    parameters = server_parameters(
        build_trapped_project(tmp_path / "unused", bare_python), env={"CLOUD_SECRET_FOR_TEST": CLOUD}
    )
    parameters.env = {**(parameters.env or {}), "PYTEST_MCP_AUTH_TOKEN": TOKEN}
    parameters.args[parameters.args.index("--root") + 1] = str(root)
    log_path = tmp_path / "server.log"

    with log_path.open("w") as errlog:
        async with Client(stdio_client(parameters, errlog=errlog), mode="legacy") as client:  # type: ignore[arg-type]
            answers = await read_back(client, READ_BACK + project_prints_env())

    assert_no_secret(answers, log_path.read_text())


async def test_nothing_reads_the_servers_environment_back_over_http(tmp_path: Path) -> None:
    root = leaky_project(tmp_path)
    env = {"PYTEST_MCP_AUTH_TOKEN": TOKEN, "CLOUD_SECRET_FOR_TEST": CLOUD}
    with http_server(root, tmp_path, "--transport", "http", "--max-timeout", "60", env=env) as server:
        async with connect(server, "legacy", token=TOKEN) as client:
            answers = await read_back(client, READ_BACK + project_prints_env())
        pages = [
            server.request("POST", "/mcp", {"Authorization": f"Bearer {TOKEN}x"}, {"jsonrpc": "2.0"}),
            server.request("POST", "/mcp", {"Authorization": "Basic " + TOKEN}, {}),
            server.request("GET", "/healthz"),
            server.request("GET", "/nowhere", {"Authorization": f"Bearer {TOKEN}"}),
            server.request("DELETE", "/mcp", {"Authorization": f"Bearer {TOKEN}"}),
        ]
        bodies = "".join(page.read().decode() + json.dumps(page.getheaders()) for page in pages)
        log = server.stderr.read_text()

    assert TOKEN not in bodies
    assert CLOUD not in bodies
    assert_no_secret(answers, log)


OWN_SETTINGS_TEST = """
import os


def test_prints_what_it_inherited_of_the_servers_settings():
    inherited = sorted(f"{k}={v}" for k, v in os.environ.items() if k.upper().startswith("PYTEST_MCP_"))
    print("inherited:", inherited)
    assert inherited == []
"""


async def test_no_process_the_server_starts_inherits_its_settings_nor_the_run_stores_password(tmp_path: Path) -> None:
    """Runs, discoveries and probes all start through `--python`: a wrapper records what each inherited."""
    from tests.e2e.e2e_support import start_server, text_of, write_project
    from tests.e2e.multi_instance import RedisServer

    password = f"redis-pw-{uuid.uuid4().hex}"
    redis = RedisServer(tmp_path / "redis", password)
    redis.start()
    starts = tmp_path / "starts.log"
    wrapper = tmp_path / "python"
    wrapper.write_text(
        "#!/bin/sh\n"
        f"{{ echo start; env | grep -i '^pytest_mcp_' || true; }} >> '{starts}'\n"
        f'exec "{sys.executable}" "$@"\n'
    )
    wrapper.chmod(0o755)
    root = write_project(tmp_path / "proj", {"test_settings.py": OWN_SETTINGS_TEST})
    settings = {
        "PYTEST_MCP_RUN_STORE": redis.url,  # a password the tests could print into an answer
        "PYTEST_MCP_AUTH_TOKEN": TOKEN,
        "PYTEST_MCP_RUN_STORE_PREFIX": "secrets-test:",
        "PYTEST_MCP_SOME_FUTURE_SETTING": "not ours to pass on",
        "pytest_mcp_log_level": "info",  # settings are read in any case, so they are dropped in any case
    }
    try:
        server = start_server(root, tmp_path, "--python", str(wrapper), env=settings)
        async with server.client() as client:
            texts = [
                text_of(await client.call_tool("check_environment", {})),
                text_of(await client.call_tool("discover_tests", {})),
            ]
            run = await client.call_tool("execute_tests", {"detail": "all"})
            texts.append(text_of(run))
    finally:
        redis.stop()

    assert run.structured_content["summary"]["passed"] == 1, texts[-1]  # type: ignore[index]
    recorded = starts.read_text()
    assert recorded.count("start") >= 3, recorded  # a probe, a collection and a run at least
    assert recorded.replace("start", "").strip() == "", recorded
    for text in [*texts, server.stderr()]:
        assert password not in text
        assert TOKEN not in text
