"""McpEnvironmentPresenter: check_environment's result as an MCP tool result (structured content plus text)."""

from __future__ import annotations

from pathlib import Path

from mcp_types import CallToolResult, TextContent

from pytest_mcp.domain.environment import EnvironmentResult
from pytest_mcp.domain.text import printable
from pytest_mcp.ports.environment_presenter import EnvironmentPresenter


def _relative(path: str, rootdir: str | None) -> str:
    if rootdir is None:
        return path
    try:
        return str(Path(path).relative_to(rootdir))
    except ValueError:
        return path


def render_environment(result: EnvironmentResult) -> str:
    """A compact reading for a model: ready or not, each problem, then what pytest sees."""
    python = result.python
    if result.pytest is not None:
        versions = f"pytest {result.pytest.version} on {python.implementation} {python.version}"
    else:
        versions = f"no pytest; {python.implementation} {python.version}"
    lines = [f"{'ready' if result.ready else 'NOT READY'}: {versions}"]
    lines += [f"PROBLEM {problem}" for problem in result.problems]
    choice = result.interpreter
    lines.append(f"interpreter: {choice.path} (rule {choice.rule}: {choice.reason})")
    lines.append(f"environment: {python.prefix}")
    if result.rootdir is not None:
        where = f"rootdir: {result.rootdir}"
        if result.configfile is not None:
            where += f", configfile: {_relative(result.configfile, result.rootdir)}"
        if result.testpaths:
            where += f", testpaths: {', '.join(result.testpaths)}"
        lines.append(where)
    if result.plugins:
        listed = ", ".join(
            f"{plugin.name} {plugin.version}" + (" (not loaded)" if plugin.loaded is False else "")
            for plugin in result.plugins
        )
        lines.append(f"plugins: {listed}")
    if result.process_containment == "subreaper":
        lines.append("processes: every process a run starts is stopped at its end (child subreaper)")
    else:
        lines.append(
            "processes: a run's process group is stopped at its end; a process a test starts in a "
            "session of its own can outlive it (no child subreaper here)"
        )
    if result.localization == "off":
        lines.append("culprits: off (--localize 0): a failing run names no likely faulty function")
    else:
        lines.append(
            f"culprits: after a failing run, a second pass records the functions each test runs with "
            f"{result.localization}"
        )
    if result.sandbox is not None:
        lines.append(f"sandbox: {result.sandbox}")
        if result.sandbox_withheld:
            names = ", ".join(result.sandbox_withheld)
            lines.append(f"sandbox: withheld from the tests: {names} (--sandbox-env NAME passes one on)")
    else:
        lines.append("sandbox: none; tests run with the server's rights (--sandbox contains them)")
    if not result.plugin_autoload:
        lines.append("plugin autoloading is off (PYTEST_DISABLE_PLUGIN_AUTOLOAD)")
    return printable("\n".join(lines))  # the project's configuration and plugins are quoted here


class McpEnvironmentPresenter(EnvironmentPresenter[CallToolResult]):
    """Structured content carries every field; the text block is a reading aid, not a copy."""

    def present_environment(self, result: EnvironmentResult) -> CallToolResult:
        return CallToolResult(
            content=[TextContent(type="text", text=render_environment(result))],
            structured_content=result.model_dump(mode="json"),
        )
