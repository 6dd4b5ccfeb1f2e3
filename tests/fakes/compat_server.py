"""What the OpenAI-compatible local servers and gateways share, and the hooks where they differ.

``CompatFake`` plays a ``Turn`` as one server's ``/chat/completions`` SSE stream. The frame is
OpenAI's (``data: <chunk>`` lines, ``data: [DONE]``), and each server fake (llama.cpp,
LM Studio, vLLM, OpenRouter) overrides the hooks where its real wire differs:

- ``role_delta``: the first chunk's delta;
- ``call_fragments``: how one tool call's ``tool_calls[]`` fragments look (whole arguments in
  one delta or pieces, ``index`` present or not, ``id``/``type``/``name`` repeated or not);
- ``finish``: the chunk(s) that end the answer (``finish_reason``, where usage and timings go);
- ``models``: the ``/models`` listing; ``error``: the body of an HTTP error;
- ``comment``: an SSE comment line sent before the first chunk (OpenRouter's keep-alive).

A fake is driven by the same ``Turn`` scripts as every other fake (``tests/fakes/script.py``),
so a scenario runs unchanged against OpenAI and each of these. ``cached_tokens`` on the fake:
prompt tokens the server says it served from its cache (llama.cpp's ``cache_n``).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from tests.fakes.openai_fake import FakeOpenAI
from tests.fakes.server import RecordedRequest, Responder, split_text
from tests.fakes.script import ScriptedCall, Turn


class CompatFake(FakeOpenAI):
    """An OpenAI-compatible server; subclasses replay one real server's differences."""

    name = "openai"  # the provider that talks to it: the OpenAI-compatible adapter
    api_prefix = "/v1"
    server_label = "compatible server"
    cached_tokens = 0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cached_tokens = type(self).cached_tokens

    # -- paths --------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return self.origin + self.api_prefix

    def is_generation(self, request: RecordedRequest) -> bool:
        return request.method == "POST" and request.path == self.api_prefix + "/chat/completions"

    def handle(self, request: RecordedRequest, out: Responder) -> None:
        if request.method == "GET" and request.path == self.api_prefix + "/models":
            out.json(200, self.models())
            return
        if not self.is_generation(request):
            out.json(404, self.error(404, "Not found"))
            return
        body = request.body or {}
        model = str(body.get("model", self.default_model))
        too_long = self.over_window(request)
        if too_long is not None:
            out.json(400, self.too_long_error(too_long))
            return
        turn = self.next_turn(body)
        if turn is None:
            self.out_of_turns(out)
            return
        if turn.status is not None:
            headers = turn.error_headers()
            out.json(turn.status, turn.error_body or self.error(turn.status, model), headers)
            return
        self.play(turn, body, model, out)

    # -- hooks --------------------------------------------------------------------------
    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": self.default_model, "object": "model", "owned_by": "fake"}]}

    def error(self, status: int, model: str) -> dict[str, Any]:
        return {"error": {"code": status, "message": f"HTTP {status}", "type": "server_error"}}

    def too_long_error(self, tokens: int) -> dict[str, Any]:
        return {"error": {"code": 400, "type": "invalid_request_error",
                          "message": f"This model's maximum context length is {self.context_window} tokens. "
                                     f"However, you requested {tokens} tokens."}}

    def comment(self) -> str | None:
        return None

    def envelope(self, ident: str, created: int, model: str) -> dict[str, Any]:
        """The fields every chunk carries besides ``choices``."""
        return {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model}

    def role_delta(self) -> dict[str, Any]:
        return {"role": "assistant", "content": None}

    def reasoning_delta(self, piece: str) -> dict[str, Any]:
        return {self.reasoning_field: piece}

    def call_id(self, call: ScriptedCall) -> str:
        return call.id or "call_" + secrets.token_hex(8)

    def call_fragments(self, index: int, call: ScriptedCall, raw: str, turn: Turn) -> list[dict[str, Any]]:
        """OpenAI's own shape: id, type and name with empty arguments, then argument pieces."""
        head = {"index": index, "id": self.call_id(call), "type": "function",
                "function": {"name": call.name, "arguments": ""}}
        return [head, *({"index": index, "function": {"arguments": piece}}
                        for piece in split_text(raw, turn.split_arguments))]

    def usage(self, turn: Turn, body: dict[str, Any]) -> dict[str, Any]:
        prompt = self.usage_tokens(body, turn.input_tokens)
        data: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": turn.output_tokens,
                                "total_tokens": prompt + turn.output_tokens}
        if self.cached_tokens:
            data["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        if turn.reasoning_tokens:
            data["completion_tokens_details"] = {"reasoning_tokens": turn.reasoning_tokens}
        return data

    def wants_usage(self, body: dict[str, Any]) -> bool:
        return bool((body.get("stream_options") or {}).get("include_usage"))

    def finish(self, chunk: Any, finish_reason: str, turn: Turn, body: dict[str, Any],
               pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The chunks that end the answer; ``pending``: tool-call fragments not sent yet (a server
        that sends the last one with the finish reason takes them here)."""
        chunks = [chunk({"tool_calls": [f]}) for f in pending]
        chunks.append(chunk({}, finish_reason))
        if self.wants_usage(body):
            chunks.append({**chunk({}), "choices": [], "usage": self.usage(turn, body)})
        return chunks

    def finish_reason_for(self, turn: Turn) -> str:
        return turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")

    def held_back(self, fragments: list[dict[str, Any]]) -> int:
        """How many of the last fragments go with the finish chunk (0: all before it)."""
        return 0

    def mid_stream_error(self, chunk: Any) -> dict[str, Any]:
        return {"error": {"message": "The server is overloaded; please try again later.", "type": "server_error",
                          "code": None}}

    # -- the stream ---------------------------------------------------------------------
    def play(self, turn: Turn, body: dict[str, Any], model: str, out: Responder) -> None:
        ident, created = self.stream_id(), int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**self.envelope(ident, created, model),
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        def send(data: dict[str, Any]) -> None:
            out.send(f"data: {json.dumps(data)}\n\n")

        out.begin("text/event-stream")
        note = self.comment()
        if note is not None:
            out.send(f": {note}\n\n")
        send(chunk(self.role_delta()))
        for piece in turn.thinking:
            send(chunk(self.reasoning_delta(piece)))
        for piece in turn.text:
            send(chunk({"content": piece}))
        if turn.error_mid_stream:
            send(self.mid_stream_error(chunk))
            out.end()
            return
        if turn.cut_after_text:
            out.cut()
            return
        if turn.stall_after_text:
            out.stall()
            return
        fragments: list[dict[str, Any]] = []
        for index, call in enumerate(turn.tool_calls):
            raw = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments or {})
            fragments += self.call_fragments(index, call, raw, turn)
        keep = self.held_back(fragments)
        sent, pending = (fragments[:-keep], fragments[-keep:]) if keep else (fragments, [])
        for fragment in sent:
            send(chunk({"tool_calls": [fragment]}))
        for data in self.finish(chunk, self.finish_reason_for(turn), turn, body, pending):
            send(data)
        out.send("data: [DONE]\n\n")
        out.end()

    def stream_id(self) -> str:
        return "chatcmpl-" + secrets.token_hex(12)
