"""The composition root: the only place where adapters are chosen and wired."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from dependency_injector import containers, providers
from pydantic import SecretStr

from pytest_mcp import __version__
from pytest_mcp.adapters.concurrency_limit import ConcurrencyLimitedRunner
from pytest_mcp.adapters.mcp_environment_presenter import McpEnvironmentPresenter
from pytest_mcp.adapters.mcp_presenter import McpPresenter
from pytest_mcp.adapters.mcp_server import McpToolServer
from pytest_mcp.adapters.pytest_subprocess.environment import SubprocessEnvironmentProbe
from pytest_mcp.adapters.pytest_subprocess.interpreter import TargetInterpreter
from pytest_mcp.adapters.pytest_subprocess.runner import ResourceLimits, SubprocessPytestRunner
from pytest_mcp.adapters.stdio_transport import StdioTransport
from pytest_mcp.adapters.structlog_logging import configure_logging
from pytest_mcp.domain.check_environment import CheckEnvironment
from pytest_mcp.domain.discover_tests import DiscoverTests
from pytest_mcp.domain.execute_tests import ExecuteTests
from pytest_mcp.domain.requests import RequestPolicy
from pytest_mcp.settings import Settings

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_mcp.adapters.fake_environment import FakeEnvironmentProbe
    from pytest_mcp.adapters.fake_runner import FakeTestRunner
    from pytest_mcp.adapters.http_transport import HttpOptions, HttpTransport
    from pytest_mcp.adapters.recording import DomainResults, Result, RunRecorder


def _revealed(secret: SecretStr | None) -> str | None:
    return secret.get_secret_value() if secret is not None else None


# Start-up speed: the default path (stdio, subprocess runner) is the only one whose adapters are
# imported with this module. Every other adapter is imported by its factory below, when its
# provider is first built, so `pytest-mcp` over stdio never loads the fakes, the recorder or HTTP.


def _fake_runner() -> FakeTestRunner:
    from pytest_mcp.adapters.fake_runner import FakeTestRunner

    return FakeTestRunner()


def _fake_probe(root: Path) -> FakeEnvironmentProbe:
    from pytest_mcp.adapters.fake_environment import FakeEnvironmentProbe

    return FakeEnvironmentProbe(root=root)


def _http_options(**options: Any) -> HttpOptions:
    from pytest_mcp.adapters.http_transport import HttpOptions

    return HttpOptions(**options)


def _http_transport(options: HttpOptions, kind: Literal["http", "sse"]) -> HttpTransport:
    from pytest_mcp.adapters.http_transport import HttpTransport

    return HttpTransport(options=options, kind=kind)


def _domain_results() -> DomainResults:
    from pytest_mcp.adapters.recording import DomainResults

    return DomainResults()


def _recorder(
    execute_tests: ExecuteTests[Result], discover_tests: DiscoverTests[Result], policy: RequestPolicy
) -> RunRecorder:
    from pytest_mcp.adapters.recording import RunRecorder

    return RunRecorder(execute_tests=execute_tests, discover_tests=discover_tests, policy=policy)


class Container(containers.DeclarativeContainer):
    config = providers.Configuration(strict=True)

    logging = providers.Resource(configure_logging, level=config.log_level, fmt=config.log_format)

    policy = providers.Singleton(
        RequestPolicy, root=config.root, default_timeout=config.timeout, max_timeout=config.max_timeout
    )

    # Detected once, in the background from start-up on; the first call waits for it (ADR 0008).
    interpreter = providers.Singleton(TargetInterpreter, root=config.root, explicit=config.python)
    resource_limits = providers.Singleton(
        ResourceLimits, address_space_mb=config.rlimit_as_mb, cpu_seconds=config.rlimit_cpu_seconds
    )
    subprocess_runner = providers.Singleton(
        SubprocessPytestRunner, interpreter=interpreter, root=config.root, resource_limits=resource_limits
    )
    fake_runner = providers.Singleton(_fake_runner)
    runner = providers.Singleton(
        ConcurrencyLimitedRunner,
        inner=providers.Selector(config.runner, subprocess=subprocess_runner, fake=fake_runner),
        limit=config.max_concurrent_runs,
    )

    presenter = providers.Singleton(McpPresenter, max_response_bytes=config.max_response_bytes)
    execute_tests = providers.Factory(ExecuteTests, runner=runner, presenter=presenter, policy=policy)
    discover_tests = providers.Factory(DiscoverTests, runner=runner, presenter=presenter, policy=policy)
    subprocess_probe = providers.Singleton(SubprocessEnvironmentProbe, interpreter=interpreter, root=config.root)
    fake_probe = providers.Singleton(_fake_probe, root=config.root)
    environment_probe = providers.Selector(config.runner, subprocess=subprocess_probe, fake=fake_probe)
    environment_presenter = providers.Singleton(McpEnvironmentPresenter)
    check_environment = providers.Factory(
        CheckEnvironment, probe=environment_probe, presenter=environment_presenter, policy=policy
    )

    tool_server = providers.Singleton(
        McpToolServer,
        execute_tests=execute_tests,
        discover_tests=discover_tests,
        check_environment=check_environment,
        policy=policy,
        version=__version__,
    )
    http_options = providers.Singleton(
        _http_options,
        host=config.host,
        port=config.port,
        path=config.path,
        stateless=config.stateless,
        allowed_hosts=config.allowed_hosts,
        auth_token=providers.Callable(_revealed, config.auth_token),
        version=__version__,
    )
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
        execute_tests=providers.Factory(ExecuteTests, runner=runner, presenter=domain_results, policy=policy),
        discover_tests=providers.Factory(DiscoverTests, runner=runner, presenter=domain_results, policy=policy),
        policy=policy,
    )


def create_container(settings: Settings) -> Container:
    """Build a container from settings. Nothing is constructed until a provider is called."""
    container = Container()
    container.config.from_dict(settings.model_dump())
    return container
