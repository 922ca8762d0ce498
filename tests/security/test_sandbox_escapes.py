"""Issue 42's attacks on --sandbox, each a hostile test file run by the real runner in a real sandbox.

Issue 37's sandbox held against most of what a test tried; these got out, or ran code later outside
it: a venv's `pyvenv.cfg` or `.pth` file, written by one run, choosing what the next run mounts (all
of $HOME, a directory under /tmp) or breaking every later run; the run's private directory's files
replaced by a FIFO or a link; `.git` hooks and config and the project's venv written, to run at the
user's next `git commit` or shell; the server's credentials in the tests' environment; /tmp filled
on the host's disk. Each test below failed on 316114f (the report names how) and passes now.
"""

from __future__ import annotations

import os
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from pytest_mcp.adapters.pytest_subprocess.environment import SubprocessEnvironmentProbe
from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.runner import SubprocessPytestRunner
from pytest_mcp.adapters.pytest_subprocess.sandbox import BubblewrapSandbox, open_bubblewrap
from pytest_mcp.domain.runs import RunReport, RunSpec
from tests.e2e.e2e_support import connect, http_server, text_of, write_project
from tests.integration.support import run
from tests.linked_venvs import PYTEST_AND_ITS_DEPENDENCIES, link_packages

pytestmark = pytest.mark.anyio

SPEC = RunSpec(timeout=60.0, include_passed=True)
SECRET = f"secret-{uuid.uuid4().hex}"
VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def bwrap() -> str:
    return open_bubblewrap(False).bwrap


def home_with_a_key(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    return home


def project_with_a_venv(root: Path) -> Path:
    """A project whose `.venv` (made by hand, as `python -m venv` would lay it out) runs the suite's pytest."""
    venv = root / ".venv"
    (venv / "bin").mkdir(parents=True)
    base = Path(os.path.realpath(sys.executable))
    os.symlink(base, venv / "bin" / "python")
    (venv / "pyvenv.cfg").write_text(f"home = {base.parent}\ninclude-system-site-packages = false\n")
    site = venv / "lib" / VERSION / "site-packages"
    site.mkdir(parents=True)
    # pytest and what it imports, linked from ours: not a .pth line naming our whole site-packages,
    # whose hypothesis, anyio, trio and xdist entry points every run's pytest would load.
    link_packages(site, PYTEST_AND_ITS_DEPENDENCIES)
    (venv / "bin" / "activate").write_text("# activate\n")
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n\tbare = false\n")
    return venv / "bin" / "python"


def sandbox_in(bwrap: str, home: Path, **options: object) -> BubblewrapSandbox:
    """The sandbox as a server with these `--sandbox-*` options would have it (the defaults left out)."""
    return BubblewrapSandbox(bwrap=bwrap, home=home, **{name: value for name, value in options.items() if value})  # type: ignore[arg-type]


def runner(root: Path, python: Path, sandbox: BubblewrapSandbox) -> SubprocessPytestRunner:
    return SubprocessPytestRunner(TargetInterpreter.given(python), root=root, sandbox=sandbox)


def write_test(root: Path, source: str) -> None:
    for old in root.glob("test_*.py"):
        old.unlink()
    (root / f"test_{uuid.uuid4().hex[:8]}.py").write_text(source)


def outcomes(report: RunReport) -> list[str]:
    return [test.outcome for test in report.tests]


def everything_said(report: RunReport) -> str:
    return report.model_dump_json()


APPEND_TO_PYVENV_CFG = """
import os, sys

def test_plants_a_second_home():
    with open(os.path.join(sys.prefix, "pyvenv.cfg"), "a") as config:
        config.write({line!r})
"""

READ_THE_KEY = """
def test_reads_the_key():
    print("stolen:", open({key!r}).read())
"""


@pytest.mark.parametrize("venv_writable", [False, True], ids=["venv-read-only", "venv-writable"])
async def test_a_second_home_in_pyvenv_cfg_never_mounts_the_home(
    tmp_path: Path, bwrap: str, venv_writable: bool
) -> None:
    """Python reads only the first `home =`; `$HOME/.ssh/../x` once mounted all of $HOME on the next run."""
    home = home_with_a_key(tmp_path)
    root = tmp_path / "project"
    python = project_with_a_venv(root)
    sandbox = sandbox_in(bwrap, home, writable=(root / ".venv",) if venv_writable else ())
    line = f"home = {home}/.ssh/../x\n"

    write_test(root, APPEND_TO_PYVENV_CFG.format(line=line))
    planted = await run(runner(root, python, sandbox), SPEC)
    write_test(root, READ_THE_KEY.format(key=str(home / ".ssh" / "id_rsa")))
    second = await run(runner(root, python, sandbox), SPEC)

    assert outcomes(planted) == ["passed" if venv_writable else "failed"], planted.stderr
    assert (line in (root / ".venv" / "pyvenv.cfg").read_text()) is venv_writable
    assert outcomes(second) == ["failed"], second.stderr
    assert SECRET not in everything_said(second)


PTH_LINE = """
import os, sys

def test_plants_a_pth_line():
    site = [p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)][0]
    with open(os.path.join(site, "zz_planted.pth"), "w") as pth:
        pth.write({line!r})
"""


@pytest.mark.parametrize("venv_writable", [False, True], ids=["venv-read-only", "venv-writable"])
async def test_a_pth_line_never_mounts_a_directory_the_sandbox_hides(
    tmp_path: Path, bwrap: str, venv_writable: bool
) -> None:
    """A directory under the host's /tmp (where a host unix socket was reachable) named by a planted `.pth`."""
    home = home_with_a_key(tmp_path)
    hidden = tmp_path / "host-tmp-dir"  # under the host's /tmp: the sandbox's /tmp is its own
    hidden.mkdir()
    (hidden / "secret").write_text(SECRET)
    root = tmp_path / "project"
    python = project_with_a_venv(root)
    sandbox = sandbox_in(bwrap, home, writable=(root / ".venv",) if venv_writable else ())

    write_test(root, PTH_LINE.format(line=f"{hidden}\n"))
    planted = await run(runner(root, python, sandbox), SPEC)
    write_test(root, READ_THE_KEY.format(key=str(hidden / "secret")))
    second = await run(runner(root, python, sandbox), SPEC)

    assert outcomes(planted) == ["passed" if venv_writable else "failed"], planted.stderr
    assert outcomes(second) == ["failed"], second.stderr
    assert SECRET not in everything_said(second)


async def test_a_home_that_does_not_exist_breaks_neither_later_runs_nor_check_environment(
    tmp_path: Path, bwrap: str
) -> None:
    """It once made bwrap fail ('Can't find source path') on every later run, a lasting denial of service."""
    home = home_with_a_key(tmp_path)
    root = tmp_path / "project"
    python = project_with_a_venv(root)
    # Written as a planting run would (the venv is read-only now, but a venv the user made writable is not).
    sandbox = sandbox_in(bwrap, home, writable=(root / ".venv",))
    write_test(root, APPEND_TO_PYVENV_CFG.format(line=f"home = {home}/missing-{uuid.uuid4().hex}/bin\n"))
    await run(runner(root, python, sandbox), SPEC)
    with (root / ".venv" / "pyvenv.cfg").open("a") as config:  # as the first line, too: a fresh server reads it
        config.write(f"home = {home}/missing-too/bin\n")
    fresh = sandbox_in(bwrap, home)

    write_test(root, "def test_still_runs():\n    pass\n")
    later = await run(runner(root, python, sandbox), SPEC)
    restarted = await run(runner(root, python, fresh), SPEC)
    probed = await SubprocessEnvironmentProbe(TargetInterpreter.given(python), root, fresh).probe(60.0)

    assert outcomes(later) == ["passed"], later.stderr
    assert outcomes(restarted) == ["passed"], restarted.stderr
    assert probed.facts is not None, probed.stderr


REPLACE_THE_REPORT = """
import os

def test_replaces_the_report(request):
    path = request.config.getoption("--pytest-mcp-report")
    os.unlink(path)
    {make}
"""


@pytest.fixture
def unblocker(tmp_path: Path) -> Iterator[dict[str, bool]]:
    """Opens a FIFO the server blocked on, if it did (the old code), so that the test fails instead of hanging."""
    state = {"done": False, "unblocked": False}
    stop = threading.Event()

    def watch() -> None:
        if stop.wait(45):
            return
        for fifo in Path("/tmp").glob("pytest-mcp-*/report.jsonl"):
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                state["unblocked"] = True
            except OSError:
                pass

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    yield state
    stop.set()
    watcher.join(5)


@pytest.mark.parametrize(
    ("make", "said"),
    [
        ("os.mkfifo(path)", "report.jsonl is not a regular file"),
        ("os.symlink('/dev/zero', path)", "report.jsonl is a symbolic link"),
    ],
    ids=["fifo", "dev-zero-link"],
)
@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
async def test_a_report_replaced_by_a_fifo_or_a_link_is_that_runs_error_and_the_loop_keeps_turning(
    tmp_path: Path, bwrap: str, make: str, said: str, sandboxed: bool, unblocker: dict[str, bool]
) -> None:
    root = tmp_path / "project"
    python = project_with_a_venv(root)
    sandbox = sandbox_in(bwrap, home_with_a_key(tmp_path)) if sandboxed else None
    write_test(root, REPLACE_THE_REPORT.format(make=make))
    ticks = []

    async def ticking() -> None:  # another client's call, on the same event loop
        while True:
            ticks.append(anyio.current_time())
            await anyio.sleep(0.05)

    async with anyio.create_task_group() as group:
        group.start_soon(ticking)
        report = await run(SubprocessPytestRunner(TargetInterpreter.given(python), root=root, sandbox=sandbox), SPEC)
        group.cancel_scope.cancel()

    assert not unblocker["unblocked"], "the runner blocked on the FIFO until the test opened it"
    assert report.termination.kind == "report_unreadable", report.termination
    assert report.termination.detail is not None
    assert said in report.termination.detail
    assert len(ticks) > 1


WRITES_LATER_CODE = """
import os, sys

def test_git_hook():
    with open(".git/hooks/pre-commit", "w") as hook:
        hook.write("#!/bin/sh\\ntouch /tmp/pwned\\n")

def test_git_config():
    with open(".git/config", "a") as config:
        config.write("[core]\\n\\tfsmonitor = touch /tmp/pwned\\n")

def test_venv_activate():
    with open(os.path.join(sys.prefix, "bin", "activate"), "a") as activate:
        activate.write("touch /tmp/pwned\\n")

def test_venv_pth():
    site = [p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)][0]
    with open(os.path.join(site, "zz_planted.pth"), "w") as pth:
        pth.write("import os; os.system('touch /tmp/pwned')\\n")

def test_project_still_writable():
    with open("written-by-a-test", "w") as out:
        out.write("ok")
"""


async def test_git_and_the_projects_venv_are_read_only_and_the_rest_of_the_root_is_not(
    tmp_path: Path, bwrap: str
) -> None:
    root = tmp_path / "project"
    python = project_with_a_venv(root)
    config_before = (root / ".git" / "config").read_text()
    write_test(root, WRITES_LATER_CODE)

    report = await run(runner(root, python, sandbox_in(bwrap, home_with_a_key(tmp_path))), SPEC)

    by_name = {test.node_id.split("::")[1]: test.outcome for test in report.tests}
    assert by_name == {
        "test_git_hook": "failed",
        "test_git_config": "failed",
        "test_venv_activate": "failed",
        "test_venv_pth": "failed",
        "test_project_still_writable": "passed",
    }, report.stdout
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    assert (root / ".git" / "config").read_text() == config_before
    assert (root / ".venv" / "bin" / "activate").read_text() == "# activate\n"
    assert not (root / ".venv" / "lib" / VERSION / "site-packages" / "zz_planted.pth").exists()
    blocked = [test.blocked for test in report.tests if test.outcome == "failed"]
    assert all(reason is not None and "read-only" in reason for reason in blocked), blocked


async def test_a_path_named_writable_is_writable(tmp_path: Path, bwrap: str) -> None:
    root = tmp_path / "project"
    python = project_with_a_venv(root)
    write_test(root, WRITES_LATER_CODE)
    sandbox = sandbox_in(bwrap, home_with_a_key(tmp_path), writable=(root / ".git",))

    report = await run(runner(root, python, sandbox), SPEC)

    by_name = {test.node_id.split("::")[1]: test.outcome for test in report.tests}
    assert by_name["test_git_hook"] == by_name["test_git_config"] == "passed"
    assert by_name["test_venv_activate"] == "failed"


PRINTS_THE_ENVIRONMENT = """
import os

def test_environment():
    print(sorted(os.environ.items()))
    assert "AWS_SECRET_ACCESS_KEY" not in os.environ
"""


async def test_credentials_in_the_servers_environment_do_not_reach_the_tests(
    tmp_path: Path, bwrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    withheld = ["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "OPENAI_API_KEY", "db_password", "GCP_CREDENTIALS"]
    for name in withheld:
        monkeypatch.setenv(name, f"{SECRET}-{name}")
    monkeypatch.setenv("PROJECT_API_KEY", "passed-on-purpose")
    monkeypatch.setenv("PYTHONKEYRING_BACKEND", "passed-as-PYTHON")
    root = tmp_path / "project"
    python = project_with_a_venv(root)
    write_test(root, PRINTS_THE_ENVIRONMENT)
    sandbox = sandbox_in(bwrap, home_with_a_key(tmp_path), passed_env=("PROJECT_API_KEY",))

    report = await run(runner(root, python, sandbox), SPEC.model_copy(update={"verbosity": 1}))
    probed = await SubprocessEnvironmentProbe(TargetInterpreter.given(python), root, sandbox).probe(60.0)

    assert outcomes(report) == ["passed"], report.stdout
    assert SECRET not in everything_said(report)
    assert set(withheld) <= set(probed.sandbox_withheld)
    assert {"PROJECT_API_KEY", "PYTHONKEYRING_BACKEND", "PATH"}.isdisjoint(probed.sandbox_withheld)
    assert SECRET not in probed.model_dump_json()


FILLS_TMP = """
import os

def test_fills_tmp():
    with open("/tmp/filler", "wb") as filler:
        for _ in range(64):
            filler.write(b"x" * 1024 * 1024)
"""


async def test_a_test_that_fills_the_sandboxs_tmp_is_told_so(tmp_path: Path, bwrap: str) -> None:
    root = tmp_path / "project"
    python = project_with_a_venv(root)
    write_test(root, FILLS_TMP)
    sandbox = sandbox_in(bwrap, home_with_a_key(tmp_path), tmp_mib=16)

    report = await run(runner(root, python, sandbox), SPEC)

    assert outcomes(report) == ["failed"], report.stdout
    (failure,) = report.tests
    assert failure.blocked == "write /tmp; the sandbox's /tmp is full (16 MiB, --sandbox-tmp-size)"


async def test_over_http_a_fifo_report_is_that_calls_error_and_the_server_keeps_answering(
    tmp_path: Path, unblocker: dict[str, bool]
) -> None:
    """The FIFO once blocked the server's event loop in `open`: that call, every later one, /healthz and SIGTERM."""
    root = write_project(tmp_path / "project", {"test_fifo.py": REPLACE_THE_REPORT.format(make="os.mkfifo(path)")})
    env = {"HOME": str(home_with_a_key(tmp_path))}
    with http_server(root, tmp_path, "--transport", "http", "--sandbox", env=env) as server:
        async with connect(server, "legacy") as client:
            result = await client.call_tool("execute_tests", {})
            (root / "test_fifo.py").write_text("def test_fine():\n    pass\n")
            after = await client.call_tool("execute_tests", {})
        health = server.request("GET", "/healthz").status

    assert not unblocker["unblocked"], "the server blocked on the FIFO until the test opened it"
    assert result.is_error
    assert "the run's results cannot be read: report.jsonl is not a regular file (a FIFO)" in text_of(result)
    assert not after.is_error, text_of(after)
    assert health == 200
