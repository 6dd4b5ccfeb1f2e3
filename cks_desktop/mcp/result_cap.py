"""A large tool result cut down on the reader's worker thread, before the SDK and the loop see it.

A tool result of 50 MB is capped for the model anyway (``convert.result_to_output`` keeps the
beginning of the text and drops structured content past ``MAX_STRUCTURED``), but pydantic's
parse and the SDK's result checks of the whole value ran on the event loop and held it for
more than a second. A line longer than ``stdio_stream.PARSE_OFF_LOOP_BYTES`` is therefore read on
a worker thread a piece at a time (``json_pieces``: ``json.loads`` would hold the GIL, and so
the loop, for the whole parse); if it is the response to a tool call (a ``result`` with a
``content`` list), its text blocks are cut to ``MAX_TEXT`` characters in all and its structured
content, if over the cap, is replaced by its clipped beginning (of the same shapes, so a tool's
output schema still accepts it) and marked (``TRUNCATED_MARK`` in
the result's ``_meta``), so the converter adds the same note as before. What reaches the SDK is
then small. Nothing else about the message is changed.
"""

from __future__ import annotations

from typing import Any

from cks_desktop.mcp.convert import MAX_STRUCTURED, TRUNCATED_MARK, clip_json, json_size_over

MAX_TEXT = 1_000_000  # characters of a result's text blocks kept (ten times the registry's cap)


def cap_message(message: Any) -> Any:
    """``message`` (a decoded JSON-RPC message) with a tool result's content capped in place."""
    if not isinstance(message, dict):
        return message
    result = message.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        return message
    left = MAX_TEXT
    kept: list[Any] = []
    for block in result["content"]:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            text: str = block["text"]
            if left <= 0:
                continue
            if len(text) > left:
                block = {**block, "text": text[:left] + f"\n[truncated: the text was {len(text):,} characters]"}
            left -= len(text)
        kept.append(block)
    result["content"] = kept
    structured = result.get("structuredContent")
    if structured is not None and json_size_over(structured, MAX_STRUCTURED):
        result["structuredContent"] = clip_json(structured, MAX_STRUCTURED, marks=False)
        meta = result.get("_meta")
        result["_meta"] = {**(meta if isinstance(meta, dict) else {}), TRUNCATED_MARK: True}
    return message
