"""pytest-mcp: run a project's pytest suite for AI agents over MCP, with exact, structured results."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pytest-mcp")
except PackageNotFoundError:  # pragma: no cover - only when running from an uninstalled tree
    __version__ = "0.0.0"

__all__ = ["__version__"]
