"""MCP: server configs, one connection per server, the manager, and our graph served over MCP.

Import the submodules you need; this package does not import the SDK eagerly
(``import mcp`` costs ~0.7 s), so ``config`` and ``claude_import`` stay cheap.
"""
