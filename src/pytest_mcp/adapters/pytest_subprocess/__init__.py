"""The real runner: pytest in a subprocess of the target interpreter, in its own process group."""

from pytest_mcp.adapters.pytest_subprocess.runner import SubprocessPytestRunner

__all__ = ["SubprocessPytestRunner"]
