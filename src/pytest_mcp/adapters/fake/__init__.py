"""The test double: scripted tests played back by pytest's rules, with no process (public via pytest_mcp.testing)."""
