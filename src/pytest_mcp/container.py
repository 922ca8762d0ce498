"""The composition root: the only place where adapters are chosen and wired."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from dependency_injector import containers, providers
from pydantic import SecretStr

from pytest_mcp import __version__
from pytest_mcp.adapters.mcp.detached_runs import DetachedRuns
from pytest_mcp.adapters.mcp.stdio_transport import StdioTransport
from pytest_mcp.adapters.mcp.tool_errors import ErrorResults, JsonRpcErrors
from pytest_mcp.adapters.mcp.tool_server import McpToolServer
from pytest_mcp.adapters.mcp.tools import ToolWiring, wired_tools
from pytest_mcp.adapters.structlog_logging import configure_logging
from pytest_mcp.domain.requests import RequestPolicy
from pytest_mcp.settings import Settings

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pytest_mcp.adapters.concurrency_limit import ConcurrencyLimitedProbe, ConcurrencyLimitedRunner, RunSlots
    from pytest_mcp.adapters.fake.environment import FakeEnvironmentProbe
    from pytest_mcp.adapters.fake.recording import DomainResults, Result, RunRecorder
    from pytest_mcp.adapters.fake.runner import FakeTestRunner
    from pytest_mcp.adapters.frozen_heap import FrozenHeap
    from pytest_mcp.adapters.mcp.environment_presenter import McpEnvironmentPresenter
    from pytest_mcp.adapters.mcp.http_limits import HttpLimits
    from pytest_mcp.adapters.mcp.http_transport import HttpOptions, HttpTransport
    from pytest_mcp.adapters.mcp.presenter import McpPresenter
    from pytest_mcp.adapters.mcp.report_view import ReportView
    from pytest_mcp.adapters.pytest_subprocess.environment import SubprocessEnvironmentProbe
    from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
    from pytest_mcp.adapters.pytest_subprocess.runner import ResourceLimits, SubprocessPytestRunner
    from pytest_mcp.adapters.pytest_subprocess.sandbox import BubblewrapSandbox
    from pytest_mcp.adapters.worker_threads import ThreadWorker
    from pytest_mcp.domain.check_environment import CheckEnvironment
    from pytest_mcp.domain.discover_tests import DiscoverTests
    from pytest_mcp.domain.execute_tests import ExecuteTests
    from pytest_mcp.ports.environment_presenter import EnvironmentPresenter
    from pytest_mcp.ports.environment_probe import EnvironmentProbe
    from pytest_mcp.ports.history import RunHistory
    from pytest_mcp.ports.presenter import ResultPresenter
    from pytest_mcp.ports.run_store import RunStore
    from pytest_mcp.ports.test_runner import TestRunner
    from pytest_mcp.ports.worker import Worker

# Start-up speed: serving over stdio answers `tools/list` with only what this module imports at
# the top (the tool server, the request models, logging and the stdio transport). Each factory
# below imports what it builds when a provider first calls it: the use cases, runners and
# presenters come with the first call that needs them (about 12 ms of every start-up), and the
# default path never loads the fake, the recorder or HTTP at all. Typed functions, not dotted
# strings, so that go-to-definition, mypy and renames reach them.


def _first_call_imports() -> None:
    """What any runner's first call imports: the use cases and presenters."""
    from pytest_mcp.adapters import concurrency_limit  # noqa: F401 - imported for the first call
    from pytest_mcp.adapters.mcp import environment_presenter, presenter  # noqa: F401
    from pytest_mcp.domain import check_environment, discover_tests, execute_tests  # noqa: F401


def _subprocess_first_call_imports() -> None:
    _first_call_imports()
    from pytest_mcp.adapters.pytest_subprocess import environment, runner  # noqa: F401


def _fake_first_call_imports() -> None:
    _first_call_imports()
    from pytest_mcp.adapters.fake import environment, runner  # noqa: F401


def _interpreter(root: Path, explicit: Path | None) -> TargetInterpreter:
    from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter

    return TargetInterpreter(root, explicit)


LOW_RUN_NICE = 10
"""The nice value of a run under `--run-priority low` (ADR 0022): its weight is a tenth of the server's."""


def _resource_limits(
    address_space_mb: int | None, cpu_seconds: int | None, run_priority: str, transport: str
) -> ResourceLimits:
    from pytest_mcp.adapters.pytest_subprocess.runner import ResourceLimits

    # auto: an HTTP server's loop serves every client, so its runs give way; over stdio the one client is
    # the machine's user, whose tests run as fast as a pytest typed by hand.
    low = run_priority == "low" or (run_priority == "auto" and transport != "stdio")
    return ResourceLimits(
        address_space_mb=address_space_mb, cpu_seconds=cpu_seconds, nice=LOW_RUN_NICE if low else None
    )


def _sandbox(
    enabled: bool, network: bool, root: Path, writable: Sequence[Path], passed_env: Sequence[str], tmp_mib: int
) -> BubblewrapSandbox | None:
    """None without --sandbox; else bubblewrap, checked here (SandboxUnavailable: the server must not start)."""
    if not enabled:
        return None
    from pytest_mcp.adapters.pytest_subprocess.sandbox import open_bubblewrap

    return open_bubblewrap(
        network,
        writable=[Path(os.path.abspath(Path(root) / Path(path).expanduser())) for path in writable],
        passed_env=passed_env,
        tmp_mib=tmp_mib,
    )


def _subprocess_runner(
    interpreter: TargetInterpreter,
    root: Path,
    limits: ResourceLimits,
    sandbox: BubblewrapSandbox | None,
    worker: Worker,
    localize: float,
    localize_lines: str,
) -> SubprocessPytestRunner:
    from pytest_mcp.adapters.pytest_subprocess.runner import SubprocessPytestRunner

    # --localize 0: no culprits, so nothing for the run to record of what its tests entered.
    return SubprocessPytestRunner(
        interpreter,
        root=root,
        resource_limits=limits,
        sandbox=sandbox,
        worker=worker,
        record=localize > 0,
        record_lines=localize_lines == "on",
    )


def _worker() -> ThreadWorker:
    from pytest_mcp.adapters.worker_threads import ThreadWorker

    return ThreadWorker()


def _frozen_heap() -> FrozenHeap:
    from pytest_mcp.adapters.frozen_heap import FrozenHeap

    return FrozenHeap()


def _inline_worker() -> Worker:
    from pytest_mcp.ports.worker import Inline

    return Inline()


def _fake_runner() -> FakeTestRunner:
    from pytest_mcp.adapters.fake.runner import FakeTestRunner

    return FakeTestRunner()


def _run_slots(limit: int) -> RunSlots:
    from pytest_mcp.adapters.concurrency_limit import RunSlots

    return RunSlots(limit)


def _limited_runner(inner: TestRunner, slots: RunSlots) -> ConcurrencyLimitedRunner:
    from pytest_mcp.adapters.concurrency_limit import ConcurrencyLimitedRunner

    return ConcurrencyLimitedRunner(inner, slots)


def _subprocess_probe(
    interpreter: TargetInterpreter, root: Path, sandbox: BubblewrapSandbox | None
) -> SubprocessEnvironmentProbe:
    from pytest_mcp.adapters.pytest_subprocess.environment import SubprocessEnvironmentProbe

    return SubprocessEnvironmentProbe(interpreter, root, sandbox)


def _fake_probe(root: Path) -> FakeEnvironmentProbe:
    from pytest_mcp.adapters.fake.environment import FakeEnvironmentProbe

    return FakeEnvironmentProbe(root)


def _limited_probe(inner: EnvironmentProbe, slots: RunSlots) -> ConcurrencyLimitedProbe:
    from pytest_mcp.adapters.concurrency_limit import ConcurrencyLimitedProbe

    return ConcurrencyLimitedProbe(inner, slots)


def _presenter(max_response_bytes: int) -> McpPresenter:
    from pytest_mcp.adapters.mcp.presenter import McpPresenter

    return McpPresenter(max_response_bytes)


def _environment_presenter() -> McpEnvironmentPresenter:
    from pytest_mcp.adapters.mcp.environment_presenter import McpEnvironmentPresenter

    return McpEnvironmentPresenter()


def _execute_tests(
    runner: TestRunner, presenter: ResultPresenter[Any], policy: RequestPolicy, worker: Worker
) -> ExecuteTests[Any]:
    from pytest_mcp.domain.execute_tests import ExecuteTests

    return ExecuteTests(runner, presenter, policy, worker)


def _discover_tests(runner: TestRunner, presenter: ResultPresenter[Any], policy: RequestPolicy) -> DiscoverTests[Any]:
    from pytest_mcp.domain.discover_tests import DiscoverTests

    return DiscoverTests(runner, presenter, policy)


def _check_environment(
    probe: EnvironmentProbe, presenter: EnvironmentPresenter[Any], policy: RequestPolicy
) -> CheckEnvironment[Any]:
    from pytest_mcp.domain.check_environment import CheckEnvironment

    return CheckEnvironment(probe, presenter, policy)


def _store_kind(run_store: str) -> str:
    return "memory" if run_store == "memory" else "redis"


def _memory_run_store() -> RunStore:
    from pytest_mcp.adapters.run_store.memory import InMemoryRunStore

    return InMemoryRunStore()


def _redis_run_store(url: str, prefix: str) -> RunStore:
    from pytest_mcp.adapters.run_store.redis import RedisRunStore

    return RedisRunStore(url, prefix)


def _detached_runs(ttl: float, max_concurrent_runs: int, stateless: bool, store: RunStore) -> DetachedRuns:
    return DetachedRuns(ttl=ttl, max_kept=max_concurrent_runs * 4, stateless=stateless, store=store)


def _histories(store: RunStore, root: Path) -> Callable[[str], RunHistory]:
    """Each owner's history of this project, in the run store (ADR 0020)."""
    from pytest_mcp.adapters.mcp.history import StoredHistory

    return lambda owner: StoredHistory(store, owner, root)


def _report_view() -> ReportView:
    from pytest_mcp.adapters.mcp.report_view import ReportView

    return ReportView()


def _revealed(secret: SecretStr | None) -> str | None:
    return secret.get_secret_value() if secret is not None else None


def _http_limits(
    request_timeout: float,
    max_connections: int,
    max_sessions: int,
    session_idle_timeout: float,
    max_sessions_per_client: int | None,
) -> HttpLimits:
    from pytest_mcp.adapters.mcp.http_limits import HttpLimits

    return HttpLimits(
        request_timeout=request_timeout,
        max_connections=max_connections,
        max_sessions=max_sessions,
        session_idle_timeout=session_idle_timeout,
        max_sessions_per_client=max_sessions_per_client,
    )


def _http_options(
    host: str,
    port: int,
    port_file: Path | None,
    path: str | None,
    stateless: bool,
    allowed_hosts: tuple[str, ...],
    auth_token: str | None,
    limits: HttpLimits,
) -> HttpOptions:
    from pytest_mcp.adapters.mcp.http_transport import HttpOptions

    return HttpOptions(
        host=host,
        port=port,
        port_file=port_file,
        path=path,
        stateless=stateless,
        allowed_hosts=tuple(allowed_hosts),
        auth_token=auth_token,
        version=__version__,
        limits=limits,
    )


def _http_transport(options: HttpOptions, kind: Literal["http", "sse"]) -> HttpTransport:
    from pytest_mcp.adapters.mcp.http_transport import HttpTransport

    return HttpTransport(options, kind)


def _domain_results() -> DomainResults:
    from pytest_mcp.adapters.fake.recording import DomainResults

    return DomainResults()


def _recorder(
    execute_tests: ExecuteTests[Result], discover_tests: DiscoverTests[Result], policy: RequestPolicy
) -> RunRecorder:
    from pytest_mcp.adapters.fake.recording import RunRecorder

    return RunRecorder(execute_tests, discover_tests, policy)


class Container(containers.DeclarativeContainer):
    config = providers.Configuration(strict=True)

    logging = providers.Resource(configure_logging, level=config.log_level, fmt=config.log_format)

    policy = providers.Singleton(
        RequestPolicy,
        root=config.root,
        default_timeout=config.timeout,
        max_timeout=config.max_timeout,
        detach_after=config.detach_after,
        localize=config.localize,
        localize_max_seconds=config.localize_max_seconds,
    )

    # Detected once, by the first call that needs it, inside that call's run slot (ADR 0008).
    interpreter = providers.Singleton(_interpreter, root=config.root, explicit=config.python)
    resource_limits = providers.Singleton(
        _resource_limits,
        address_space_mb=config.rlimit_as_mb,
        cpu_seconds=config.rlimit_cpu_seconds,
        run_priority=config.run_priority,
        transport=config.transport,
    )
    # Checked once, before serving (cli.py): where it cannot be had, the server refuses to start (ADR 0021).
    sandbox = providers.Singleton(
        _sandbox,
        enabled=config.sandbox,
        network=config.sandbox_network,
        root=config.root,
        writable=config.sandbox_writable,
        passed_env=config.sandbox_env,
        tmp_mib=config.sandbox_tmp_size,
    )
    # The threads that run calls' CPU and file work off the event loop, shared by every call (issue 46).
    worker = providers.Singleton(_worker)
    # The fake's reports are scripted and small: its calls stay on the loop, so that an agent's tests
    # see a call answered in as few turns of the loop as the script takes, never a thread's delay.
    call_worker = providers.Selector(config.runner, subprocess=worker, fake=providers.Singleton(_inline_worker))
    subprocess_runner = providers.Singleton(
        _subprocess_runner,
        interpreter=interpreter,
        root=config.root,
        limits=resource_limits,
        sandbox=sandbox,
        worker=worker,
        localize=config.localize,
        localize_lines=config.localize_lines,
    )
    fake_runner = providers.Singleton(_fake_runner)
    # Every process a call starts (runs, collections, environment probes) takes one of these.
    run_slots = providers.Singleton(_run_slots, limit=config.max_concurrent_runs)
    runner = providers.Singleton(
        _limited_runner,
        inner=providers.Selector(config.runner, subprocess=subprocess_runner, fake=fake_runner),
        slots=run_slots,
    )

    presenter = providers.Singleton(_presenter, max_response_bytes=config.max_response_bytes)
    execute_tests = providers.Singleton(
        _execute_tests, runner=runner, presenter=presenter, policy=policy, worker=call_worker
    )
    discover_tests = providers.Singleton(_discover_tests, runner=runner, presenter=presenter, policy=policy)
    subprocess_probe = providers.Singleton(
        _subprocess_probe, interpreter=interpreter, root=config.root, sandbox=sandbox
    )
    fake_probe = providers.Singleton(_fake_probe, root=config.root)
    environment_probe = providers.Singleton(
        _limited_probe,
        inner=providers.Selector(config.runner, subprocess=subprocess_probe, fake=fake_probe),
        slots=run_slots,
    )
    environment_presenter = providers.Singleton(_environment_presenter)
    check_environment = providers.Singleton(
        _check_environment, probe=environment_probe, presenter=environment_presenter, policy=policy
    )

    # Each tool's handler gets its use case's provider, and builds the use case when a call first needs it.
    tool_errors = providers.Selector(
        config.error_mode, result=providers.Singleton(ErrorResults), jsonrpc=providers.Singleton(JsonRpcErrors)
    )
    # Where runs are found (ADR 0016): this instance's memory, or Redis shared by every instance.
    run_store = providers.Selector(
        providers.Callable(_store_kind, config.run_store),
        memory=providers.Singleton(_memory_run_store),
        redis=providers.Singleton(_redis_run_store, url=config.run_store, prefix=config.run_store_prefix),
    )
    detached_runs = providers.Singleton(
        _detached_runs,
        ttl=config.run_ttl,
        max_concurrent_runs=config.max_concurrent_runs,
        stateless=config.stateless,
        store=run_store,
    )
    histories = providers.Callable(_histories, store=run_store, root=config.root)
    # Every tool of TOOLS, each taking what it needs from one wiring: no tool is listed here (issue 43).
    tool_wiring = providers.Singleton(
        ToolWiring,
        execute_tests=execute_tests.provider,
        discover_tests=discover_tests.provider,
        check_environment=check_environment.provider,
        histories=histories,
        runs=detached_runs,
        policy=policy,
        worker=call_worker,
    )
    tools = providers.Singleton(wired_tools, wiring=tool_wiring)
    report_view = providers.Singleton(_report_view)
    tool_server = providers.Singleton(
        McpToolServer,
        tools=tools,
        policy=policy,
        errors=tool_errors,
        runs=detached_runs,
        version=__version__,
        view=report_view,
    )
    http_limits = providers.Singleton(
        _http_limits,
        request_timeout=config.http_request_timeout,
        max_connections=config.max_connections,
        max_sessions=config.max_sessions,
        session_idle_timeout=config.session_idle_timeout,
        max_sessions_per_client=config.max_sessions_per_client,
    )
    http_options = providers.Singleton(
        _http_options,
        host=config.host,
        port=config.port,
        port_file=config.port_file,
        path=config.path,
        stateless=config.stateless,
        allowed_hosts=config.allowed_hosts,
        auth_token=providers.Callable(_revealed, config.auth_token),
        limits=http_limits,
    )
    # What the first call would import on the event loop, for the chosen runner: the server imports
    # it in a thread once it serves (ADR 0022), so that start-up stays lean and no call waits on it.
    first_call_imports = providers.Selector(
        config.runner,
        subprocess=providers.Object(_subprocess_first_call_imports),
        fake=providers.Object(_fake_first_call_imports),
    )
    # The serving process's collection policy (ADR 0022): full collections walk only what is new.
    # Only `_serve` starts it; an in-process user's heap is theirs.
    heap = providers.Singleton(_frozen_heap)
    transport = providers.Selector(
        config.transport,
        stdio=providers.Factory(StdioTransport),
        http=providers.Factory(_http_transport, options=http_options, kind="http"),
        sse=providers.Factory(_http_transport, options=http_options, kind="sse"),
    )

    # `pytest-mcp record`: the same runner and use cases, presenting domain results in-process.
    domain_results = providers.Singleton(_domain_results)
    recorder = providers.Factory(
        _recorder,
        execute_tests=providers.Factory(
            _execute_tests, runner=runner, presenter=domain_results, policy=policy, worker=call_worker
        ),
        discover_tests=providers.Factory(_discover_tests, runner=runner, presenter=domain_results, policy=policy),
        policy=policy,
    )


def create_container(settings: Settings) -> Container:
    """Build a container from settings. Nothing is constructed until a provider is called."""
    container = Container()
    container.config.from_dict(settings.model_dump())
    return container
