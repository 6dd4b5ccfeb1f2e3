"""Requests other than ``tools/call`` on a live connection, with one sentence for every fault.

``call_tool`` (``connection.py``) turns each failure into an error ``ToolOutput``; the
resource, prompt and completion requests (``resources.py``, ``prompts.py``) go through
``send`` here instead, which raises ``RequestFailed`` carrying the same kind of sentence:
the server is not running, it did not answer in time, it closed the connection (the
connection then winds down and the manager reconnects, as for a tool call), it answered
with a JSON-RPC error, or its answer could not be read. Cancellation propagates.

Any task may send on the connection's client (STACK.md R4): the owner task keeps the
session; these are ordinary requests on it, like a tool call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from mcp import Client, MCPError
from mcp_types import CONNECTION_CLOSED, METHOD_NOT_FOUND, PARSE_ERROR
from pydantic import ValidationError

from cks_desktop.mcp.transport import leaf

if TYPE_CHECKING:
    from cks_desktop.mcp.connection import McpConnection

log = logging.getLogger(__name__)

T = TypeVar("T")


class RequestFailed(Exception):
    """A request to an MCP server did not succeed; ``str()`` is one sentence for the person."""

    def __init__(self, sentence: str, *, code: int | None = None) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.code = code


def not_running(conn: "McpConnection") -> RequestFailed:
    why = f" ({conn.status.value}: {conn.reason})" if conn.reason else f" ({conn.status.value})"
    return RequestFailed(f"The MCP server '{conn.name}' is not running{why}.")


async def send(conn: "McpConnection", what: str, request: Callable[[Client], Awaitable[T]], *,
               timeout: float | None = None) -> T:
    """Run ``request`` on the connection's live client; ``what`` names it in sentences
    ("reading 'file:///a'", "listing its prompts")."""
    client = conn.client
    if client is None or not conn.ready:
        raise not_running(conn)
    limit = conn.config.timeout if timeout is None else timeout
    try:
        async with asyncio.timeout(limit):
            return await request(client)
    except TimeoutError:
        raise RequestFailed(f"MCP server '{conn.name}' did not answer {what} within {limit:g} s.") from None
    except MCPError as exc:
        code = exc.error.code
        if code == CONNECTION_CLOSED:
            if not conn.stopping:
                conn.connection_lost()  # the owner task winds down; the manager reconnects
            raise RequestFailed(f"The connection to MCP server '{conn.name}' ended during {what}.",
                                code=code) from None
        if code == METHOD_NOT_FOUND:
            raise RequestFailed(f"MCP server '{conn.name}' does not support {what}.", code=code) from None
        if code == PARSE_ERROR:
            raise RequestFailed(f"MCP server '{conn.name}' sent an answer to {what} that could not be read: "
                                f"{exc.error.message[:300]}.", code=code) from None
        raise RequestFailed(f"MCP server '{conn.name}' answered {what} with an error: {exc.error.message[:500]} "
                            f"(code {code}).", code=code) from None
    except ValidationError as exc:
        raise RequestFailed(f"MCP server '{conn.name}' sent an answer to {what} that is not valid MCP "
                            f"({exc.error_count()} problems).") from None
    except RequestFailed:
        raise
    except Exception as exc:  # a transport error, a malformed result
        cause = leaf(exc)
        log.debug("MCP request %s on %s failed", what, conn.name, exc_info=cause)
        raise RequestFailed(f"{what[:1].upper()}{what[1:]} on MCP server '{conn.name}' failed: "
                            f"{type(cause).__name__}: {str(cause)[:300]}") from None
