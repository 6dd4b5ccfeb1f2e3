"""A hostile MCP server speaking raw JSON-RPC over stdio (no SDK), for what the SDK won't send.

The official SDK server refuses to list a tool whose input schema is not an object,
and its serializer may choke on a result nested hundreds deep, so this one writes the
lines itself. Tools:
  echo        {"text"}: the text back
  stringly    input schema of type "string" (not an object): must be left out, not break the list
  novel       a description of RAW_DESCRIPTION_MB megabytes (default 5)
  deep        a result whose structuredContent is nested RAW_DEPTH levels (default 250)
  bigstruct   {"mb"}: structuredContent of that many megabytes of text (and no text content)
  drip        sends a progress notification every 50 ms and never answers
At start, by environment:
  RAW_GARBAGE_ONLY=1   print non-JSON lines to stdout and never answer (not an MCP server)
  RAW_GARBAGE_FLOOD=1  print non-JSON lines to stdout without end, never answer
  RAW_OMIT=a,b         leave these tools out of the list
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

_out = threading.Lock()
_cancelled: set[Any] = set()


def send(message: dict[str, Any]) -> None:
    data = (json.dumps(message) + "\n").encode()
    with _out:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def reply(msg_id: Any, result: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def tools() -> list[dict[str, Any]]:
    mb = float(os.environ.get("RAW_DESCRIPTION_MB", "5"))
    omit = set(os.environ.get("RAW_OMIT", "").split(","))
    obj = {"type": "object", "properties": {}}
    return [tool for tool in [
        {"name": "echo", "description": "Echo.", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
        {"name": "stringly", "description": "Its schema is a string.", "inputSchema": {"type": "string"}},
        {"name": "novel", "description": "long " * int(mb * 200_000), "inputSchema": obj},
        {"name": "deep", "description": "A deeply nested result.", "inputSchema": obj},
        {"name": "bigstruct", "description": "Big structured content.",
         "inputSchema": {"type": "object", "properties": {"mb": {"type": "number"}}}},
        {"name": "drip", "description": "Progress forever.", "inputSchema": obj},
    ] if tool["name"] not in omit]


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"a": value}
    return value


def drip(msg_id: Any, token: Any) -> None:
    i = 0
    while msg_id not in _cancelled:
        i += 1
        if token is not None:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": i}})
        time.sleep(0.05)


def call(msg_id: Any, params: dict[str, Any]) -> None:
    name, args = params.get("name"), params.get("arguments") or {}
    if name == "echo":
        reply(msg_id, text(str(args.get("text", ""))))
    elif name == "deep":
        reply(msg_id, {"content": [{"type": "text", "text": "deep"}],
                       "structuredContent": nested(int(os.environ.get("RAW_DEPTH", "250")))})
    elif name == "bigstruct":
        size = int(float(args.get("mb", 5)) * 1_000_000)
        reply(msg_id, {"content": [], "structuredContent": {"blob": "s" * size}})
    elif name == "drip":
        token = (params.get("_meta") or {}).get("progressToken")
        threading.Thread(target=drip, args=(msg_id, token), daemon=True).start()
    else:
        reply(msg_id, {**text(f"Unknown tool: {name}"), "isError": True})


def handle(msg: dict[str, Any]) -> None:
    method, msg_id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if method == "notifications/cancelled":
        _cancelled.add(params.get("requestId"))
        return
    if msg_id is None:
        return  # another notification
    if method == "initialize":
        reply(msg_id, {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                       "capabilities": {"tools": {}}, "serverInfo": {"name": "raw", "version": "1.0"}})
    elif method == "tools/list":
        reply(msg_id, {"tools": tools()})
    elif method == "tools/call":
        call(msg_id, params)
    elif method == "ping":
        reply(msg_id, {})
    else:
        send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


def main() -> None:
    if os.environ.get("RAW_GARBAGE_ONLY"):
        print("Usage: raw-tool [--port N]  (this program is not an MCP server)", flush=True)
        print("hint: run it with --stdio", flush=True)
        while sys.stdin.buffer.readline():
            pass
        return
    if os.environ.get("RAW_GARBAGE_FLOOD"):
        i = 0
        while True:
            i += 1
            print(f"tick {i}: still not JSON", flush=True)
            time.sleep(0.001)
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict):
            handle(msg)


if __name__ == "__main__":
    main()
