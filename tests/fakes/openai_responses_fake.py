"""A fake OpenAI Responses API (``POST /v1/responses``) that speaks its real SSE stream.

Every event is ``event: <type>`` + ``data: {"type": <type>, "sequence_number": n, ...}`` (the
API reference's "Streaming events"; no ``[DONE]`` line at the end): ``response.created``,
``response.in_progress``; per output item ``response.output_item.added`` … ``.done``; a
reasoning item (``rs_…``) streams its summary as ``response.reasoning_summary_part.added``,
``response.reasoning_summary_text.delta``/``.done``, ``response.reasoning_summary_part.done``
(only when the request asked for a summary) and, when the request has ``include:
["reasoning.encrypted_content"]``, ends with ``encrypted_content``; a message item (``msg_…``)
streams ``response.content_part.added``, ``response.output_text.delta``/``.done``; a
function call item (``fc_…`` with its ``call_id``) streams ``response.function_call_arguments
.delta``/``.done``; the turn ends with ``response.completed`` (usage with
``input_tokens_details.cached_tokens`` and ``output_tokens_details.reasoning_tokens``),
``response.incomplete`` (``finish_reason="length"``) or ``response.failed``
(``error_mid_stream``). HTTP errors carry OpenAI's ``{"error": {...}}`` bodies and
``retry-after``; a prompt over ``context_window`` gets the API's ``context_length_exceeded``.

The API's rules for input items, each answered with the API's 400 words (``refusal``):
a function call sent with an item id this fake issued after reasoning needs that reasoning
item earlier in the same assistant run; a reasoning item must be followed by an item it
produced; with ``store: false`` a reasoning item needs the exact ``encrypted_content`` issued
("not found" otherwise); a ``function_call_output`` needs its ``function_call`` in the input;
a model in ``models_without_reasoning`` refuses ``reasoning.effort`` (gpt-4.1's 400).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from tests.fakes.openai_fake import answered_with_status
from tests.fakes.script import Turn
from tests.fakes.server import FakeServer, RecordedRequest, Responder, split_text

ENCRYPTED_PREFIX = "gAAAAAB"  # what OpenAI's encrypted reasoning looks like (Fernet tokens)


def _invalid(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": "input", "code": None}}


class FakeOpenAIResponses(FakeServer):
    name = "openai"  # the OpenAI provider, with its setting ``api = "responses"``
    default_model = "gpt-test-reasoning"

    def __init__(self, *, chunk_delay: float = 0.0, cached_tokens: int = 0,
                 models_without_reasoning: frozenset[str] = frozenset({"gpt-4.1-mini"}),
                 summary_parts: bool = False, call_item_done: bool = True) -> None:
        super().__init__(chunk_delay=chunk_delay)
        self.cached_tokens = cached_tokens
        self.summary_parts = summary_parts  # each thinking chunk its own summary part (as o-series do)
        self.call_item_done = call_item_done  # False: no output_item.done for calls (a sloppy server)
        self.models_without_reasoning = models_without_reasoning  # answer 400 to ``reasoning``
        self.issued_reasoning: dict[str, str] = {}  # rs id → encrypted_content issued
        self.reasoning_of_call: dict[str, str] = {}  # fc id → rs id of the turn that made it
        self.refusals: list[str] = []  # every 400 the rules produced (a test can read why)

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def is_generation(self, request: RecordedRequest) -> bool:
        return request.method == "POST" and request.path == "/v1/responses"

    def prompt_tokens(self, body: Any) -> int:
        body = body if isinstance(body, dict) else {}
        text = json.dumps([body.get(k) for k in ("input", "instructions", "tools")], ensure_ascii=False)
        return int(len(text) / self.chars_per_token)

    # -- the API's input rules ----------------------------------------------------------
    def refusal(self, body: dict[str, Any]) -> str | None:
        items = body.get("input")
        if isinstance(items, str) or items is None:
            return None
        store = body.get("store", True)
        seen_reasoning: set[str] = set()
        calls = {i.get("call_id") for i in items if isinstance(i, dict) and i.get("type") == "function_call"}
        for number, item in enumerate(items):
            kind = item.get("type") or ("message" if "role" in item else "")
            if kind == "reasoning":
                rid = str(item.get("id") or "")
                if rid not in self.issued_reasoning:
                    return f"Item with id '{rid}' not found."
                if store is False and item.get("encrypted_content") != self.issued_reasoning[rid]:
                    return (f"Item with id '{rid}' not found. Items are not persisted when `store` is set to false. "
                            "Try again with `store` set to true, or remove this item from your input.")
                following = items[number + 1] if number + 1 < len(items) else {}
                produced = following.get("type") == "function_call" and \
                    self.reasoning_of_call.get(str(following.get("id") or "")) == rid
                if not produced and following.get("role") != "assistant":
                    return f"Item '{rid}' of type 'reasoning' was provided without its required following item."
                seen_reasoning.add(rid)
            elif kind == "function_call":
                fid = str(item.get("id") or "")
                needed = self.reasoning_of_call.get(fid)
                if needed and needed not in seen_reasoning:
                    return (f"Item '{fid}' of type 'function_call' was provided without its required "
                            f"'reasoning' item: '{needed}'.")
            elif kind == "function_call_output" and item.get("call_id") not in calls:
                return f"No tool call found for function call output with call_id {item.get('call_id')}."
            elif kind == "message" and item.get("role") == "user":
                seen_reasoning.clear()
        return None

    # -- requests ----------------------------------------------------------------------
    def handle(self, request: RecordedRequest, out: Responder) -> None:
        if request.method == "GET" and request.path == "/v1/models":
            out.json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 1700000000, "owned_by": "fake"}
                for m in (self.default_model, "gpt-other")]})
            return
        if not self.is_generation(request):
            out.json(404, {"error": {"message": "Unknown request URL", "type": "invalid_request_error",
                                     "param": None, "code": "unknown_url"}})
            return
        body = request.body or {}
        model = str(body.get("model", self.default_model))
        if self.over_window(request) is not None:
            out.json(400, {"error": {"message": "Your input exceeds the context window of this model. Please adjust "
                                     "your input and try again.", "type": "invalid_request_error",
                                     "param": "input", "code": "context_length_exceeded"}})
            return
        if model in self.models_without_reasoning and (body.get("reasoning") or {}).get("effort"):
            out.json(400, {"error": {"message": "Unsupported parameter: 'reasoning.effort' is not supported with "
                                     "this model.", "type": "invalid_request_error", "param": "reasoning.effort",
                                     "code": "unsupported_parameter"}})
            return
        refused = self.refusal(body)
        if refused is not None:
            self.refusals.append(refused)
            out.json(400, _invalid(refused))
            return
        turn = self.next_turn(body)
        if turn is None:
            self.out_of_turns(out)
            return
        if answered_with_status(out, turn, model):
            return
        _Stream(self, turn, body, model, out).play()


class _Stream:
    """One streamed response: numbers the events and builds the response object as it goes."""

    def __init__(self, fake: FakeOpenAIResponses, turn: Turn, body: dict[str, Any], model: str,
                 out: Responder) -> None:
        self.fake, self.turn, self.body, self.out = fake, turn, body, out
        self.sequence = 0
        self.output: list[dict[str, Any]] = []
        self.response: dict[str, Any] = {
            "id": "resp_" + secrets.token_hex(12), "object": "response", "created_at": int(time.time()),
            "status": "in_progress", "model": model, "output": self.output, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": body.get("tools") or [], "store": body.get("store", True),
            "reasoning": body.get("reasoning") or {"effort": None, "summary": None}, "usage": None,
            "error": None, "incomplete_details": None, "instructions": body.get("instructions")}

    def send(self, kind: str, **data: Any) -> None:
        payload = {"type": kind, "sequence_number": self.sequence, **data}
        self.sequence += 1
        self.out.send(f"event: {kind}\ndata: {json.dumps(payload)}\n\n")

    def play(self) -> None:
        turn, body = self.turn, self.body
        self.out.begin("text/event-stream; charset=utf-8", {"x-request-id": "req_fake"})
        self.send("response.created", response=self.response)
        self.send("response.in_progress", response=self.response)
        reasoning_id = self.reasoning() if turn.thinking else None
        self.message()
        if turn.error_mid_stream:
            message = ("The server is overloaded; please try again later." if "overload" in turn.error_mid_stream
                       else "The server had an error while processing your request. Sorry about that!")
            self.response.update(status="failed", error={"code": "server_error", "message": message})
            self.send("response.failed", response=self.response)
            self.out.end()
            return
        if turn.cut_after_text:
            self.out.cut()
            return
        if turn.stall_after_text:
            self.out.stall()
            return
        for call in turn.tool_calls:
            self.function_call(call.name, call.raw_arguments if call.raw_arguments is not None
                               else json.dumps(call.arguments or {}), call.id, reasoning_id)
        usage = {"input_tokens": self.fake.usage_tokens(body, turn.input_tokens),
                 "input_tokens_details": {"cached_tokens": self.fake.cached_tokens},
                 "output_tokens": turn.output_tokens,
                 "output_tokens_details": {"reasoning_tokens": turn.reasoning_tokens},
                 "total_tokens": turn.input_tokens + turn.output_tokens}
        self.response["usage"] = usage
        if turn.finish_reason == "length":
            self.response.update(status="incomplete", incomplete_details={"reason": "max_output_tokens"})
            self.send("response.incomplete", response=self.response)
        else:
            self.response["status"] = "completed"
            self.send("response.completed", response=self.response)
        self.out.end()

    def reasoning(self) -> str:
        rid = "rs_" + secrets.token_hex(16)
        index = len(self.output)
        item: dict[str, Any] = {"id": rid, "type": "reasoning", "summary": []}
        self.send("response.output_item.added", output_index=index, item=item)
        if (self.body.get("reasoning") or {}).get("summary"):
            parts = [[p] for p in self.turn.thinking] if self.fake.summary_parts else [self.turn.thinking]
            for number, pieces in enumerate(parts):
                text = "".join(pieces)
                self.send("response.reasoning_summary_part.added", item_id=rid, output_index=index,
                          summary_index=number, part={"type": "summary_text", "text": ""})
                for piece in pieces:
                    self.send("response.reasoning_summary_text.delta", item_id=rid, output_index=index,
                              summary_index=number, delta=piece, obfuscation="x")
                self.send("response.reasoning_summary_text.done", item_id=rid, output_index=index,
                          summary_index=number, text=text)
                self.send("response.reasoning_summary_part.done", item_id=rid, output_index=index,
                          summary_index=number, part={"type": "summary_text", "text": text})
            item = {**item, "summary": [{"type": "summary_text", "text": "".join(p)} for p in parts]}
        encrypted = ENCRYPTED_PREFIX + secrets.token_urlsafe(24)
        self.fake.issued_reasoning[rid] = encrypted
        if "reasoning.encrypted_content" in (self.body.get("include") or []):
            item = {**item, "encrypted_content": encrypted}
        self.output.append(item)
        self.send("response.output_item.done", output_index=index, item=item)
        return rid

    def message(self) -> None:
        if not self.turn.text:
            return
        mid, index, text = "msg_" + secrets.token_hex(16), len(self.output), "".join(self.turn.text)
        item: dict[str, Any] = {"id": mid, "type": "message", "status": "in_progress", "role": "assistant",
                                "content": []}
        self.send("response.output_item.added", output_index=index, item=item)
        empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        self.send("response.content_part.added", item_id=mid, output_index=index, content_index=0, part=empty)
        for piece in self.turn.text:
            self.send("response.output_text.delta", item_id=mid, output_index=index, content_index=0, delta=piece,
                      logprobs=[], obfuscation="x")
        if self.turn.error_mid_stream or self.turn.cut_after_text or self.turn.stall_after_text:
            return
        self.send("response.output_text.done", item_id=mid, output_index=index, content_index=0, text=text,
                  logprobs=[])
        full = {**empty, "text": text}
        self.send("response.content_part.done", item_id=mid, output_index=index, content_index=0, part=full)
        item = {**item, "status": "completed", "content": [full]}
        self.output.append(item)
        self.send("response.output_item.done", output_index=index, item=item)

    def function_call(self, name: str, raw: str, call_id: str | None, reasoning_id: str | None) -> None:
        fid, index = "fc_" + secrets.token_hex(16), len(self.output)
        item: dict[str, Any] = {"id": fid, "type": "function_call", "status": "in_progress", "arguments": "",
                                "call_id": call_id or "call_" + secrets.token_hex(12), "name": name}
        if reasoning_id is not None:
            self.fake.reasoning_of_call[fid] = reasoning_id
        self.send("response.output_item.added", output_index=index, item=item)
        for piece in split_text(raw, self.turn.split_arguments):
            self.send("response.function_call_arguments.delta", item_id=fid, output_index=index, delta=piece,
                      obfuscation="x")
        self.send("response.function_call_arguments.done", item_id=fid, output_index=index, arguments=raw,
                  name=name)
        item = {**item, "status": "completed", "arguments": raw}
        self.output.append(item)
        if self.fake.call_item_done:
            self.send("response.output_item.done", output_index=index, item=item)
