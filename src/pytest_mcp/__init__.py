"""pytest-mcp: run a project's pytest suite for AI agents over MCP, with exact, structured results."""

# The one version source: setuptools reads it for the distribution's metadata (pyproject.toml,
# `dynamic`), and `--version`, MCP's serverInfo and /healthz import it. A literal, so it is the
# same in an editable install, a wheel and an uninstalled tree (ADR 0013).
__version__ = "0.5.0"

__all__ = ["__version__"]
