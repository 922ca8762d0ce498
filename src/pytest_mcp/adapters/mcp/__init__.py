"""The MCP side: the tool server, its presenters, and the stdio and HTTP transports that carry it."""
