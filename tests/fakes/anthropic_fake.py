"""A fake Anthropic Messages API that speaks the real SSE stream.

``POST /v1/messages`` answers each request with the next queued ``Turn``:
``event:``/``data:`` pairs (``message_start``, a ``ping``, a text block of
``text_delta``s, ``tool_use`` blocks whose input arrives as ``input_json_delta``
fragments — an empty one first, as the API does, then the JSON split mid-token —
``message_delta`` with the stop reason and usage, ``message_stop``). A request
that forces a tool (``tool_choice: {"type": "tool"}``, how ``respond_json`` asks
Anthropic for JSON) gets the turn's text as that tool's input, which is what the
model does. Statuses come with Anthropic's error bodies (and ``retry-after``);
``error_mid_stream`` sends ``event: error``. ``GET /v1/models`` lists models.
``POST /v1/messages/count_tokens`` answers ``{"input_tokens": N}`` (``FakeServer.counted_tokens``).
The fake accepts any ``Authorization: Bearer`` key (STACK.md R5).

Extended thinking: a request with ``thinking: {"type": "enabled"}`` gets the turn's
``thinking`` as a ``thinking`` block first (``thinking_delta``s, then one ``signature_delta``)
and its ``redacted_thinking`` as a ``redacted_thinking`` block. The fake enforces the API's
rules and answers 400 with its words when a request breaks one: ``budget_tokens`` at least
1024 and below ``max_tokens``; no ``temperature`` other than 1; no forced tool; a thinking
block sent back must carry the signature issued for exactly that text; and, continuing a
tool loop, the last assistant message must start with a thinking block.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from tests.fakes.server import FakeServer, RecordedRequest, Responder, split_text
from tests.fakes.script import Turn

_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "messages: at least one message is required"),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "model: {model}"),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}
_STOP = {"length": "max_tokens", "stop": "end_turn", "tool_calls": "tool_use"}


def error_body(status: int, model: str, error_type: str | None = None) -> dict[str, Any]:
    etype, message = _ERRORS.get(status, ("api_error", "Internal server error"))
    if error_type:
        etype, message = error_type, error_type.replace("_", " ").capitalize()
    return {"type": "error", "error": {"type": etype, "message": message.format(model=model)},
            "request_id": "req_fake" + secrets.token_hex(6)}


def _sse(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


class FakeAnthropic(FakeServer):
    name = "anthropic"
    default_model = "claude-test"

    def is_generation(self, request: RecordedRequest) -> bool:
        return request.method == "POST" and request.path == "/v1/messages"

    def handle(self, request: RecordedRequest, out: Responder) -> None:
        if request.method == "GET" and request.path == "/v1/models":
            data = [{"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
                    for m in (self.default_model, "claude-other")]
            out.json(200, {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]})
            return
        if request.method == "POST" and request.path == "/v1/messages/count_tokens":
            self._count(request.body or {}, out)
            return
        if not self.is_generation(request):
            out.json(404, {"type": "error", "error": {"type": "not_found_error", "message": "Not found"}})
            return
        body = request.body or {}
        model = str(body.get("model", self.default_model))
        too_long = self.over_window(request)
        if too_long is not None:  # what the API answers, without consuming a turn
            out.json(400, {"type": "error", "error": {"type": "invalid_request_error", "message":
                           f"prompt is too long: {too_long} tokens > {self.context_window} maximum"},
                           "request_id": "req_fake"})
            return
        refused = self.thinking_refusal(body)
        if refused is not None:
            out.json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": refused},
                           "request_id": "req_fake"})
            return
        turn = self.next_turn(body)
        if turn is None:
            self.out_of_turns(out)
            return
        if turn.status is not None:
            headers = {"request-id": "req_fake", **turn.error_headers()}
            out.json(turn.status, turn.error_body or error_body(turn.status, model), headers)
            return
        self._stream(turn, body, model, out)

    def _count(self, body: dict[str, Any], out: Responder) -> None:
        """``POST /v1/messages/count_tokens``: ``{"input_tokens": N}`` for the request it is given."""
        if self.count_stall:
            out.stall()
        elif self.count_status is not None:
            out.json(self.count_status, error_body(self.count_status, str(body.get("model", self.default_model))),
                     {"request-id": "req_fake"})
        elif not body.get("messages") or not body.get("model"):
            out.json(400, error_body(400, self.default_model))
        else:
            out.json(200, {"input_tokens": self.counted_tokens(body)})

    @property
    def count_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == "/v1/messages/count_tokens"]

    def __init__(self, *, chunk_delay: float = 0.0) -> None:
        super().__init__(chunk_delay=chunk_delay)
        self.signatures: dict[str, str] = {}  # signature → the thinking text it was issued for

    def thinking_refusal(self, body: dict[str, Any]) -> str | None:
        """The API's 400 message for a request that breaks a thinking rule, else None."""
        for message in body.get("messages") or []:
            for block in message.get("content") or [] if isinstance(message.get("content"), list) else []:
                if block.get("type") == "thinking":
                    if self.signatures.get(block.get("signature", "")) != block.get("thinking"):
                        return "messages: Invalid `signature` in `thinking` block"
                elif block.get("type") == "redacted_thinking" and not block.get("data"):
                    return "messages: `data` is required in a `redacted_thinking` block"
        thinking = body.get("thinking") or {}
        if thinking.get("type") != "enabled":
            return None
        budget = int(thinking.get("budget_tokens") or 0)
        if budget < 1024:
            return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        if int(body.get("max_tokens") or 0) <= budget:
            return "`max_tokens` must be greater than `thinking.budget_tokens`."
        if "temperature" in body and body["temperature"] != 1:
            return "`temperature` may only be set to 1 when thinking is enabled."
        if (body.get("tool_choice") or {}).get("type") in ("tool", "any"):
            return "Thinking may not be enabled when tool_choice forces tool use."
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        content = last.get("content") if isinstance(last.get("content"), list) else []
        if last.get("role") == "user" and any(b.get("type") == "tool_result" for b in content):
            assistant = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
            blocks = assistant.get("content") if assistant else None
            first = blocks[0].get("type") if isinstance(blocks, list) and blocks else None
            if first not in ("thinking", "redacted_thinking"):
                return (f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                        f"but found `{first}`. When `thinking` is enabled, a final `assistant` message must start "
                        "with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).")
        return None

    def _thinking_blocks(self, turn: Turn, body: dict[str, Any], out: Responder) -> int:
        """The turn's thinking blocks when the request enabled thinking; returns the next index."""
        if (body.get("thinking") or {}).get("type") != "enabled":
            return 0
        index = 0
        if turn.thinking:
            text = "".join(turn.thinking)
            signature = turn.thinking_signature or "EqQBCkYIBxgCKkB" + secrets.token_hex(24)
            self.signatures[signature] = text
            out.send(_sse("content_block_start", {"type": "content_block_start", "index": index,
                                                  "content_block": {"type": "thinking", "thinking": "",
                                                                    "signature": ""}}))
            for chunk in turn.thinking:
                out.send(_sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                      "delta": {"type": "thinking_delta", "thinking": chunk}}))
            out.send(_sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                  "delta": {"type": "signature_delta", "signature": signature}}))
            out.send(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        if turn.redacted_thinking:
            out.send(_sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "redacted_thinking", "data": turn.redacted_thinking}}))
            out.send(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        return index

    def _stream(self, turn: Turn, body: dict[str, Any], model: str, out: Responder) -> None:
        out.begin("text/event-stream", {"request-id": "req_fake"})
        out.send(_sse("message_start", {"type": "message_start", "message": {
            "id": "msg_fake" + secrets.token_hex(6), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": self.usage_tokens(body, turn.input_tokens),
                      "output_tokens": 1}}}))
        out.send(_sse("ping", {"type": "ping"}))
        choice = body.get("tool_choice") or {}
        forced = choice.get("name") if choice.get("type") == "tool" else None
        index = self._thinking_blocks(turn, body, out)
        if turn.text and forced is None:
            out.send(_sse("content_block_start", {"type": "content_block_start", "index": index,
                                                  "content_block": {"type": "text", "text": ""}}))
            for chunk in turn.text:
                out.send(_sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                      "delta": {"type": "text_delta", "text": chunk}}))
            if self._interrupt(turn, out):
                return
            out.send(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        elif forced is not None:
            self._tool_block(out, index, "toolu_fake" + secrets.token_hex(6), forced, list(turn.text))
            index += 1
            if self._interrupt(turn, out):
                return
        elif self._interrupt(turn, out):
            return
        for call in turn.tool_calls:
            raw = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments or {})
            call_id = call.id or "toolu_fake" + secrets.token_hex(8)
            if turn.stall_in_arguments:  # the call's row must show while its arguments stream
                self._tool_block(out, index, call_id, call.name, split_text(raw, turn.split_arguments), stop=False)
                out.stall()
                return
            self._tool_block(out, index, call_id, call.name, split_text(raw, turn.split_arguments))
            index += 1
        stop = _STOP.get(turn.finish_reason or "", turn.finish_reason) if turn.finish_reason else (
            "tool_use" if turn.tool_calls or forced else "end_turn")
        out.send(_sse("message_delta", {"type": "message_delta",
                                        "delta": {"stop_reason": stop, "stop_sequence": None},
                                        "usage": {"output_tokens": turn.output_tokens}}))
        out.send(_sse("message_stop", {"type": "message_stop"}))
        out.end()

    def _tool_block(self, out: Responder, index: int, call_id: str, name: str, fragments: list[str],
                    stop: bool = True) -> None:
        out.send(_sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": call_id, "name": name, "input": {}}}))
        for fragment in ["", *fragments]:
            out.send(_sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                  "delta": {"type": "input_json_delta", "partial_json": fragment}}))
        if stop:
            out.send(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))

    def _interrupt(self, turn: Turn, out: Responder) -> bool:
        """Mid-stream error, cut or stall after the text; True when the response is over."""
        if turn.error_mid_stream:
            out.send(_sse("error", {"type": "error", "error": {
                "type": turn.error_mid_stream, "message": turn.error_mid_stream.replace("_", " ").capitalize()}}))
            out.end()
            return True
        if turn.cut_after_text:
            out.cut()
            return True
        if turn.stall_after_text:
            out.stall()
            return True
        return False
