"""The real runner under --sandbox (issue 37): what a run, a discovery and a probe still do inside it,
and how it ends when pytest crashes, leaves processes behind, or cannot be started in it.

The target is json_report_python (a venv of links, tests/integration/conftest.py), not the dev venv,
whose plugins' entry points every start of pytest there imports, in the sandbox as outside it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from pytest_mcp.adapters.pytest_subprocess.environment import SubprocessEnvironmentProbe
from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.runner import SubprocessPytestRunner
from pytest_mcp.adapters.pytest_subprocess.sandbox import BubblewrapSandbox, open_bubblewrap
from pytest_mcp.domain.runs import CollectSpec, RunSpec
from tests.integration.support import collect, project, run

pytestmark = pytest.mark.anyio

SPEC = RunSpec(timeout=60.0)


@pytest.fixture(scope="module")
def sandbox() -> BubblewrapSandbox:
    return open_bubblewrap(False)


def runner_in(root: Path, python: Path, sandbox: BubblewrapSandbox) -> SubprocessPytestRunner:
    return SubprocessPytestRunner(TargetInterpreter.given(python), root=root, sandbox=sandbox)


def write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    for name, text in files.items():
        (root / name).write_text(text)
    return root


async def test_a_run_passes_in_the_sandbox_with_its_own_loopback_server_and_temporary_files(
    tmp_path: Path, json_report_python: Path, sandbox: BubblewrapSandbox
) -> None:
    root = write(
        tmp_path / "project",
        {
            "test_inside.py": (
                "import os, socket, subprocess, sys, tempfile\n\n"
                "def test_local_server(tmp_path):\n"
                "    server = socket.create_server(('127.0.0.1', 0))\n"
                "    client = socket.create_connection(server.getsockname())\n"
                "    peer, _ = server.accept()\n"
                "    client.sendall(b'ok')\n"
                "    assert peer.recv(2) == b'ok'\n"
                "    (tmp_path / 'kept').write_text('x')\n"
                "    assert str(tmp_path).startswith(tempfile.gettempdir())\n\n"
                "def test_writes_the_project(tmp_path):\n"
                "    with open('written-by-a-test', 'w') as out:\n"
                "        out.write('ok')\n\n"
                "def test_pid_namespace():\n"
                "    assert os.getppid() < 10 and os.getpid() < 20\n"
                "    assert len([p for p in os.listdir('/proc') if p.isdigit()]) < 20\n\n"
                "def test_home_is_empty_but_for_the_interpreter():\n"
                "    home = os.path.expanduser('~')\n"
                "    assert not os.path.exists(os.path.join(home, '.bash_history'))\n"
                "    assert subprocess.run([sys.executable, '-c', 'import pytest']).returncode == 0\n"
            ),
        },
    )

    report = await run(runner_in(root, json_report_python, sandbox), SPEC)

    assert report.termination.kind == "exited", report.stderr
    assert report.summary is not None
    assert report.summary.passed == 4, report.stdout
    assert (root / "written-by-a-test").read_text() == "ok"
    assert report.command[0] == "bwrap"
    assert "loopback only" in report.command[1]
    assert report.command[3:6] == (str(json_report_python), "-m", "pytest")


async def test_a_crash_in_the_sandbox_is_still_the_signal_that_killed_pytest(
    json_report_python: Path, sandbox: BubblewrapSandbox
) -> None:
    report = await run(runner_in(project("crash"), json_report_python, sandbox), SPEC)

    assert report.termination.kind == "signalled", (report.termination, report.stderr)
    assert report.termination.signal == "SIGSEGV"


async def test_processes_that_left_the_session_are_stopped_and_named_in_the_sandbox(
    tmp_path: Path, json_report_python: Path, sandbox: BubblewrapSandbox
) -> None:
    root = write(
        tmp_path / "project",
        {
            "test_escape.py": (
                "import os, time\n\n"
                "def test_escapes():\n"
                "    if os.fork() == 0:\n"
                "        os.setsid()\n"
                "        if os.fork() == 0:\n"
                "            os.execvp('sleep', ['sleep', '3141'])\n"
                "        os._exit(0)\n"
                "    time.sleep(0.2)\n"
            )
        },
    )

    report = await run(runner_in(root, json_report_python, sandbox), SPEC)

    assert report.summary is not None
    assert report.summary.passed == 1
    assert report.stopped_processes == ("sleep 3141",)
    assert not [pid for pid in os.listdir("/proc") if pid.isdigit() and _cmdline(pid) == b"sleep\x003141\x00"]


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


async def test_discovery_and_the_probe_run_in_the_sandbox_too(
    tmp_path: Path, json_report_python: Path, sandbox: BubblewrapSandbox
) -> None:
    root = write(tmp_path / "project", {"test_a.py": "def test_one():\n    pass\n\ndef test_two():\n    pass\n"})
    collected = await collect(runner_in(root, json_report_python, sandbox), CollectSpec(timeout=60.0))
    probed = await SubprocessEnvironmentProbe(TargetInterpreter.given(json_report_python), root, sandbox).probe(60.0)

    assert [test.node_id for test in collected.tests] == ["test_a.py::test_one", "test_a.py::test_two"]
    assert collected.command[0] == "bwrap"
    assert probed.facts is not None, probed.stderr
    assert probed.sandbox == sandbox.description
    assert probed.command[0] == "bwrap"


async def test_a_virtualenv_under_the_home_imports_its_packages_but_not_what_a_pth_file_hides(
    tmp_path: Path, main_python: Path
) -> None:
    home = tmp_path / "home"
    env = home / ".virtualenvs" / "project"
    (env / "bin").mkdir(parents=True)
    base = Path(os.path.realpath(sys.executable))
    os.symlink(base, env / "bin" / "python")
    (env / "pyvenv.cfg").write_text(f"home = {base.parent}\ninclude-system-site-packages = false\n")
    site = env / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    site.mkdir(parents=True)
    # pytest comes from this suite's own environment, through a .pth file, as an editable install's path
    # would. A .pth line adds no mount (issue 42: anything that writes site-packages writes them), so a
    # directory it names under the home stays hidden.
    (home / "shared").mkdir()
    (home / "shared" / "marker_module.py").write_text("VALUE = 42\n")
    suite_site = next(p for p in map(Path, sys.path) if p.name == "site-packages" and (p / "pytest").is_dir())
    (site / "paths.pth").write_text(f"{suite_site}\n{home / 'shared'}\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("secret")
    root = write(
        tmp_path / "project",
        {
            "test_env.py": (
                "import importlib.util, os, sys\n\n"
                "def test_interpreter_is_the_virtualenv():\n"
                f"    assert sys.prefix == {str(env)!r}\n"
                "    assert importlib.util.find_spec('marker_module') is None\n"
                "    assert not os.path.exists(os.path.expanduser('~/.ssh/id_rsa'))\n"
            )
        },
    )
    sandbox = BubblewrapSandbox(bwrap=open_bubblewrap(False).bwrap, home=home)

    report = await run(runner_in(root, env / "bin" / "python", sandbox), SPEC)

    assert report.summary is not None, report.stderr
    assert report.summary.passed == 1, report.stdout


async def test_an_interpreter_the_sandbox_cannot_reach_is_pytest_unavailable_with_bwraps_reason(
    tmp_path: Path, main_python: Path
) -> None:
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    os.symlink(os.path.realpath(sys.executable), home / "bin" / "python")  # HOME/bin: the home itself is its env
    root = write(tmp_path / "project", {"test_a.py": "def test_one():\n    pass\n"})
    sandbox = BubblewrapSandbox(bwrap=open_bubblewrap(False).bwrap, home=home)

    report = await run(runner_in(root, home / "bin" / "python", sandbox), SPEC)

    assert report.termination.kind == "pytest_unavailable"
    assert report.termination.detail is not None
    assert "the sandbox could not start it: bwrap: execvp" in report.termination.detail


_SEEN = (
    "import json, os, sys\n\n"
    "def test_writes_what_the_interpreter_sees():\n"
    "    seen = {\n"
    "        'flags': repr(sys.flags),\n"
    "        # The run's private directory (the last entry) is a new one for each run.\n"
    "        'path': [p for p in sys.path if 'pytest-mcp-' not in os.path.basename(p)],\n"
    "        'executable': sys.executable, 'prefix': sys.prefix, 'base_prefix': sys.base_prefix,\n"
    "        'pycache_prefix': sys.pycache_prefix, 'dont_write_bytecode': sys.dont_write_bytecode,\n"
    "        'python_variables': {k: v for k, v in os.environ.items() if k.startswith('PYTHON')},\n"
    "        'cwd': os.getcwd(),\n"
    "    }\n"
    "    with open('seen.json', 'w') as out:\n"
    "        json.dump(seen, out, sort_keys=True)\n"
)


async def test_a_sandboxed_run_sees_the_interpreter_as_an_unsandboxed_run_does(
    tmp_path: Path, json_report_python: Path, sandbox: BubblewrapSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whatever makes Python or pytest do more work (bytecode written or not, a cache prefix, the hash
    # seed, another sys.path) must be the same inside: issue 42's speed goal was checked against this
    # (bench/results/sandbox.md). PYTHON_KEYRING_BACKEND holds KEY and still passes: PYTHON* always does.
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    root = write(tmp_path / "project", {"test_seen.py": _SEEN})
    seen = {}
    for name, box in (("outside", None), ("inside", sandbox)):
        report = await run(
            SubprocessPytestRunner(TargetInterpreter.given(json_report_python), root=root, sandbox=box), SPEC
        )
        assert report.summary is not None, report.stderr
        assert report.summary.passed == 1, (report.stdout, report.stderr)
        seen[name] = json.loads((root / "seen.json").read_text())

    assert seen["inside"] == seen["outside"]
    assert seen["inside"]["python_variables"]["PYTHON_KEYRING_BACKEND"] == "keyring.backends.null.Keyring"
    assert "hash_randomization=0" in seen["inside"]["flags"]
