"""The composition root: the only place where adapters are chosen and wired."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

from dependency_injector import containers, providers
from pydantic import SecretStr

from pytest_mcp import __version__
from pytest_mcp.adapters.mcp.stdio_transport import StdioTransport
from pytest_mcp.adapters.mcp.tool_server import McpToolServer
from pytest_mcp.adapters.structlog_logging import configure_logging
from pytest_mcp.domain.requests import RequestPolicy
from pytest_mcp.settings import Settings


def _revealed(secret: SecretStr | None) -> str | None:
    return secret.get_secret_value() if secret is not None else None


def _deferred(path: str) -> Callable[..., Any]:
    """A factory for `pytest_mcp.<path>` (module, then class) that imports the module when a
    provider first builds it.

    Start-up speed: serving over stdio answers `tools/list` with only what this module imports
    (the tool server, the request models, logging and the stdio transport). The use cases,
    runners and presenters are imported by the first call that needs them (about 12 ms of every
    start-up), and the default path never loads the fakes, the recorder or HTTP at all.
    """
    module, _, name = f"{__package__}.{path}".rpartition(".")

    def build(*args: Any, **kwargs: Any) -> Any:
        return getattr(import_module(module), name)(*args, **kwargs)

    build.__qualname__ = build.__name__ = name
    return build


_ExecuteTests = _deferred("domain.execute_tests.ExecuteTests")
_DiscoverTests = _deferred("domain.discover_tests.DiscoverTests")


class Container(containers.DeclarativeContainer):
    config = providers.Configuration(strict=True)

    logging = providers.Resource(configure_logging, level=config.log_level, fmt=config.log_format)

    policy = providers.Singleton(
        RequestPolicy, root=config.root, default_timeout=config.timeout, max_timeout=config.max_timeout
    )

    # Detected once, in the background, starting with the first call that needs it (ADR 0008).
    interpreter = providers.Singleton(
        _deferred("adapters.pytest_subprocess.interpreter.TargetInterpreter"), root=config.root, explicit=config.python
    )
    resource_limits = providers.Singleton(
        _deferred("adapters.pytest_subprocess.runner.ResourceLimits"),
        address_space_mb=config.rlimit_as_mb,
        cpu_seconds=config.rlimit_cpu_seconds,
    )
    subprocess_runner = providers.Singleton(
        _deferred("adapters.pytest_subprocess.runner.SubprocessPytestRunner"),
        interpreter=interpreter,
        root=config.root,
        resource_limits=resource_limits,
    )
    fake_runner = providers.Singleton(_deferred("adapters.fake.runner.FakeTestRunner"))
    # Every process a call starts (runs, collections, environment probes) takes one of these.
    run_slots = providers.Singleton(_deferred("adapters.concurrency_limit.RunSlots"), limit=config.max_concurrent_runs)
    runner = providers.Singleton(
        _deferred("adapters.concurrency_limit.ConcurrencyLimitedRunner"),
        inner=providers.Selector(config.runner, subprocess=subprocess_runner, fake=fake_runner),
        slots=run_slots,
    )

    presenter = providers.Singleton(
        _deferred("adapters.mcp.presenter.McpPresenter"), max_response_bytes=config.max_response_bytes
    )
    execute_tests = providers.Singleton(_ExecuteTests, runner=runner, presenter=presenter, policy=policy)
    discover_tests = providers.Singleton(_DiscoverTests, runner=runner, presenter=presenter, policy=policy)
    subprocess_probe = providers.Singleton(
        _deferred("adapters.pytest_subprocess.environment.SubprocessEnvironmentProbe"),
        interpreter=interpreter,
        root=config.root,
    )
    fake_probe = providers.Singleton(_deferred("adapters.fake.environment.FakeEnvironmentProbe"), root=config.root)
    environment_probe = providers.Singleton(
        _deferred("adapters.concurrency_limit.ConcurrencyLimitedProbe"),
        inner=providers.Selector(config.runner, subprocess=subprocess_probe, fake=fake_probe),
        slots=run_slots,
    )
    environment_presenter = providers.Singleton(_deferred("adapters.mcp.environment_presenter.McpEnvironmentPresenter"))
    check_environment = providers.Singleton(
        _deferred("domain.check_environment.CheckEnvironment"),
        probe=environment_probe,
        presenter=environment_presenter,
        policy=policy,
    )

    # The tool server gets the use cases' providers, and builds each one when a call first needs it.
    tool_server = providers.Singleton(
        McpToolServer,
        execute_tests=execute_tests.provider,
        discover_tests=discover_tests.provider,
        check_environment=check_environment.provider,
        policy=policy,
        version=__version__,
    )
    http_options = providers.Singleton(
        _deferred("adapters.mcp.http_transport.HttpOptions"),
        host=config.host,
        port=config.port,
        path=config.path,
        stateless=config.stateless,
        allowed_hosts=config.allowed_hosts,
        auth_token=providers.Callable(_revealed, config.auth_token),
        version=__version__,
        limits=providers.Singleton(
            _deferred("adapters.mcp.http_limits.HttpLimits"),
            request_timeout=config.http_request_timeout,
            max_connections=config.max_connections,
            max_sessions=config.max_sessions,
            session_idle_timeout=config.session_idle_timeout,
        ),
    )
    transport = providers.Selector(
        config.transport,
        stdio=providers.Factory(StdioTransport),
        http=providers.Factory(
            _deferred("adapters.mcp.http_transport.HttpTransport"), options=http_options, kind="http"
        ),
        sse=providers.Factory(_deferred("adapters.mcp.http_transport.HttpTransport"), options=http_options, kind="sse"),
    )

    # `pytest-mcp record`: the same runner and use cases, presenting domain results in-process.
    domain_results = providers.Singleton(_deferred("adapters.fake.recording.DomainResults"))
    recorder = providers.Factory(
        _deferred("adapters.fake.recording.RunRecorder"),
        execute_tests=providers.Factory(_ExecuteTests, runner=runner, presenter=domain_results, policy=policy),
        discover_tests=providers.Factory(_DiscoverTests, runner=runner, presenter=domain_results, policy=policy),
        policy=policy,
    )


def create_container(settings: Settings) -> Container:
    """Build a container from settings. Nothing is constructed until a provider is called."""
    container = Container()
    container.config.from_dict(settings.model_dump())
    return container
