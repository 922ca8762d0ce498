"""Adapters: the technology-specific implementations of the ports, and the MCP delivery layer."""
