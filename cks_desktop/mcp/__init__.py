"""MCP server configs, one connection per server, the manager, and our own MCP server."""
