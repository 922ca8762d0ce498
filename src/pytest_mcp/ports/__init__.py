"""The interfaces the use cases need from the outside world."""

from pytest_mcp.ports.presenter import ResultPresenter
from pytest_mcp.ports.progress import ProgressSink
from pytest_mcp.ports.test_runner import TestRunner

__all__ = ["ProgressSink", "ResultPresenter", "TestRunner"]
