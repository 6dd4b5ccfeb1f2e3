"""The MCP client: server configs, one connection per server, the manager and the hooks the servers call back.

Our own graph served over MCP is another package, ``cks_desktop.serve``. Import the submodules you
need; this package does not import the SDK eagerly (``import mcp`` costs ~0.7 s), so ``config`` and
``claude_import`` stay cheap.
"""
