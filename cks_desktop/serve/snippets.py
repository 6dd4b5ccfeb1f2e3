"""Configuration snippets a person pastes into an MCP host, for stdio and for the URL.

Claude Desktop (``claude_desktop_config.json``) and Cursor (``~/.cursor/mcp.json``) use the
``mcpServers`` shape; VS Code (``.vscode/mcp.json`` or the user ``mcp.json``) uses
``servers`` with a ``type``. The URL forms carry the bearer token in an ``Authorization``
header (Claude Desktop reaches URLs through ``npx mcp-remote``, which passes ``--header``;
tests/mcp/test_serve_mcp_remote.py runs npm's mcp-remote with exactly that line).
"""

from __future__ import annotations

from typing import Any

from cks_desktop import APP_ID

HOSTS = ("claude_desktop", "vscode", "cursor")
AUTH_ENV = "CKS_DESKTOP_AUTH"  # the mcp-remote line's header value (Bearer TOKEN)


def stdio_snippet(host: str, command: list[str], name: str = APP_ID) -> dict[str, Any]:
    entry = {"command": command[0], "args": command[1:]}
    if host == "vscode":
        return {"servers": {name: {"type": "stdio", **entry}}}
    return {"mcpServers": {name: entry}}


def url_snippet(host: str, url: str, token: str | None, name: str = APP_ID) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if host == "vscode":
        return {"servers": {name: {"type": "http", "url": url, **({"headers": headers} if headers else {})}}}
    if host == "cursor":
        return {"mcpServers": {name: {"url": url, **({"headers": headers} if headers else {})}}}
    # The token goes through an environment variable mcp-remote expands in its --header argument (its own
    # documented form): Claude Desktop and Cursor on Windows split an argument at its spaces.
    args = ["-y", "mcp-remote", url] + (["--header", f"Authorization:${{{AUTH_ENV}}}"] if token else [])
    env = {"env": {AUTH_ENV: f"Bearer {token}"}} if token else {}
    return {"mcpServers": {name: {"command": "npx", "args": args, **env}}}


def all_snippets(command: list[str], url: str | None, token: str | None) -> dict[str, dict[str, Any]]:
    """``{host: {"stdio": …, "url": … or None}}`` for every host in ``HOSTS``."""
    return {h: {"stdio": stdio_snippet(h, command), "url": url_snippet(h, url, token) if url else None}
            for h in HOSTS}
