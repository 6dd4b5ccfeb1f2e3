"""Our graph as an MCP server (``mcp serve`` and the window's "Share with other apps").

``server.py`` builds the server on the tool registry; the other modules are its pieces (scopes,
resources, prompts, live subscriptions, HTTP, tokens, the shared-sessions choice). Nothing here
imports the MCP client (``cks_desktop.mcp``). Import the submodules you need; the package does not
import the SDK eagerly.
"""
