"""What our side of a transport checks in a server's messages before the SDK reads them.

The SDK's client is strict in ways that let one bad message hang or break a whole
connection, and its classes are not ours to patch. So the read stream handed to
``mcp.Client`` passes through a ``WireGuard`` (``transport.py`` wraps it), which:

- reports every stdout line that is not JSON-RPC (``on_garbage``), so the connection
  can fail a start-up fast and quote the first bad line instead of waiting out its
  timeout (``connection.py``);
- turns a *response* the SDK cannot read — nested deeper than its parser's limit
  (about 200 levels), or of the wrong shape — into a JSON-RPC error for the same
  request id. The SDK drops such a line, so the call would otherwise wait for its
  whole timeout; now it fails at once with a sentence;
- takes the tools the SDK would refuse out of a ``tools/list`` answer (an input
  schema whose type is not ``object``, a malformed entry), keeping the rest: the SDK
  validates the listing as a whole, so one such tool failed the entire connection.
  The left-out tools and the reasons are kept in ``skipped`` for the server's status.

The outgoing side is watched only to know which request ids are ``tools/list``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types import methods as _methods
from mcp_types import PARSE_ERROR
from pydantic import ValidationError

from cks_desktop.mcp.convert import SkippedTool

log = logging.getLogger(__name__)

FALLBACK_VERSION = "2025-11-25"  # what the SDK validates against before a version is negotiated


def _refused_input(exc: BaseException) -> Any:
    """What a pydantic validation error says it was given (the refused line or its parse), else None.

    The SDK hands us the error object; its ``errors()`` may itself fail on odd input, and then
    there is simply nothing to quote."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return None
    try:
        return errors()[0].get("input")
    except Exception:  # noqa: BLE001 - any failure here only means "no input to show"
        return None


def line_of(exc: BaseException) -> str:
    """The offending stdout text a parse error carries (pydantic keeps it), else the error."""
    value = _refused_input(exc)
    if isinstance(value, str):
        return value
    if value is not None:
        try:
            return json.dumps(value, ensure_ascii=False, default=str)[:1000]
        except (RecursionError, ValueError):
            pass
    return str(exc)


def _top_level(text: str) -> dict[str, Any] | None:
    """The top-level members of a JSON object, with nested values replaced by null.

    Reads a line of any depth without recursion (the line the SDK refused may be
    nested far deeper than any parser allows), so the request id can be found.
    """
    out: list[str] = []
    depth = 0
    in_string = escape = False
    for ch in text:
        if in_string:
            if depth <= 1:
                out.append(ch)
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
            if depth <= 1:
                out.append(ch)
        elif ch in "{[":
            depth += 1
            if depth == 1:
                out.append(ch)
            elif depth == 2:
                out.append("null")
        elif ch in "}]":
            if depth == 1:
                out.append(ch)
            depth -= 1
        elif depth <= 1:
            out.append(ch)
    try:
        value = json.loads("".join(out))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _response_id(exc: BaseException) -> Any:
    """The request id if the refused line is a response (has an id and a result or error), else None."""
    value = _refused_input(exc)
    top = _top_level(value) if isinstance(value, str) else value
    if not isinstance(top, dict) or "method" in top or not ("result" in top or "error" in top):
        return None
    msg_id = top.get("id")
    if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
        return None
    return msg_id


def _why_unreadable(exc: BaseException) -> str:
    text = str(exc)
    if "recursion limit" in text:
        return "the server's answer is nested too deeply to be read (more than about 200 levels)"
    problem = ""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            for err in errors():
                loc = err.get("loc") or ()
                if loc and loc[0] in ("JSONRPCResponse", "JSONRPCError"):
                    where = ".".join(str(p) for p in loc[1:]) or "the message"
                    problem = f" ({where}: {err.get('msg')})"
                    break
        except Exception:
            pass
    return f"the server's answer is not a valid JSON-RPC response{problem}"


def _tool_problem(tool: Any, envelope: dict[str, Any], version: str) -> str | None:
    """Why the SDK would refuse this one tool of a listing, or None."""
    if not isinstance(tool, dict):
        return "the server's entry for it is not an object"
    schema = tool.get("inputSchema")
    if isinstance(schema, dict) and schema.get("type", "object") != "object":
        return f"its input schema describes {schema.get('type')!r}, not an object of arguments"
    try:
        try:
            _methods.validate_server_result("tools/list", version, {**envelope, "tools": [tool]})
        except (KeyError, ValueError) as exc:
            if isinstance(exc, ValidationError):
                raise
        types.Tool.model_validate(tool, by_name=False)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(p) for p in err.get("loc") or ()]
        if len(loc) >= 2 and loc[0] == "tools":
            loc = loc[2:]
        where = ".".join(loc) or "the entry"
        return f"the server's description of it is invalid ({where}: {err.get('msg')})"
    except RecursionError:
        return "the server's description of it is nested too deeply"
    return None


class WireGuard:
    """Inspects one connection's traffic; see the module docstring."""

    def __init__(self, *, on_garbage: Callable[[str], None] | None = None,
                 version: Callable[[], str | None] | None = None) -> None:
        self.on_garbage = on_garbage
        self._version = version or (lambda: None)
        self.valid_messages = 0
        self.skipped: list[SkippedTool] = []  # tools taken out of listings since the last ``take_skipped``
        self._list_ids: set[str] = set()

    def take_skipped(self) -> list[SkippedTool]:
        out, self.skipped = self.skipped, []
        return out

    # -- outgoing ---------------------------------------------------------------
    def outbound(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCRequest) and message.method == "tools/list":
            self._list_ids.add(str(message.id))

    # -- incoming ---------------------------------------------------------------
    def inbound(self, item: Any) -> Any:
        """The item to hand to the SDK in place of ``item``."""
        if isinstance(item, Exception):
            msg_id = _response_id(item)
            if msg_id is not None:
                why = _why_unreadable(item)
                log.debug("unreadable response to request %r: %s", msg_id, item)
                self._list_ids.discard(str(msg_id))
                return SessionMessage(types.JSONRPCError(
                    jsonrpc="2.0", id=msg_id, error=types.ErrorData(code=PARSE_ERROR, message=why)))
            if self.on_garbage is not None:
                self.on_garbage(line_of(item))
            return item
        self.valid_messages += 1
        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCResponse) and str(message.id) in self._list_ids:
            self._list_ids.discard(str(message.id))
            self._filter_listing(message)
        elif isinstance(message, types.JSONRPCError):
            self._list_ids.discard(str(message.id))
        return item

    def _filter_listing(self, message: types.JSONRPCResponse) -> None:
        result = message.result
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list):
            return
        version = self._version() or FALLBACK_VERSION
        try:
            _methods.validate_server_result("tools/list", version, result)
            types.ListToolsResult.model_validate(result, by_name=False)
            return  # the usual case: nothing to take out
        except (KeyError, ValueError, RecursionError):
            pass
        envelope = {k: v for k, v in result.items() if k != "tools"}
        kept: list[Any] = []
        for tool in tools:
            problem = _tool_problem(tool, envelope, version)
            if problem is None:
                kept.append(tool)
            else:
                name = tool.get("name") if isinstance(tool, dict) else None
                self.skipped.append(SkippedTool(str(name)[:200] if name is not None else "(unnamed)", problem))
        if len(kept) < len(tools):
            message.result = {**result, "tools": kept}
