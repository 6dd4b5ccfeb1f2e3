"""A fake LM Studio server (``lms server start``, port 1234): its OpenAI-compatible ``/v1`` endpoints.

Replays what LM Studio's documentation and API changelog say its chat-completions stream does
(lmstudio.ai/docs/app/api/tools, /docs/app/api-changelog), in two generations:

- current (0.3.23 and later): a call's first fragment is ``{"index", "id", "type": "function",
  "function": {"name", "arguments": ""}}`` with a numeric id ("814890118"), then argument pieces
  as they are generated (0.3.17); ``finish_reason`` "tool_calls" (0.3.15); usage only when asked
  with ``stream_options.include_usage`` (0.3.18), as a ``choices: []`` chunk; reasoning in
  ``delta.reasoning`` (gpt-oss, 0.3.23) or ``delta.reasoning_content`` (DeepSeek R1 models with
  "separate reasoning_content" on, 0.3.9): ``reasoning_field``;
- ``legacy=True`` (0.3.14 and earlier): the whole arguments in the first fragment, then a
  fragment with an empty function name (the bug fixed in 0.3.16), ``finish_reason`` "stop" even
  after tool calls, and no usage in the stream whatever the request asks.

Every chunk's ``system_fingerprint`` is the model's name. ``GET /v1/models`` lists ids only
(the context length is in LM Studio's own ``/api/v0/models``, not here). Errors are
``{"error": "<sentence>"}`` with a plain string.
"""

from __future__ import annotations

import secrets
from typing import Any

from tests.fakes.compat_server import CompatFake
from tests.fakes.script import ScriptedCall, Turn
from tests.fakes.server import split_text


class FakeLMStudio(CompatFake):
    server_label = "LM Studio"
    default_model = "qwen2.5-7b-instruct"

    def __init__(self, *, legacy: bool = False, reasoning_field: str = "reasoning", **kwargs: Any) -> None:
        super().__init__(reasoning_field=reasoning_field, **kwargs)
        self.legacy = legacy

    def models(self) -> dict[str, Any]:
        return {"data": [{"id": self.default_model, "object": "model", "owned_by": "organization_owner"},
                         {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model",
                          "owned_by": "organization_owner"}], "object": "list"}

    def error(self, status: int, model: str) -> dict[str, Any]:
        if status == 404:
            return {"error": f"Model '{model}' not found. Please load the model first."}
        return {"error": f"Unexpected endpoint or method. ({status})"}

    def too_long_error(self, tokens: int) -> dict[str, Any]:
        return {"error": f"Trying to keep the first {tokens} tokens when context the overflows. However, the model "
                         f"is loaded with context length of only {self.context_window} tokens, which is not enough. "
                         "Try to load the model with a larger context length, or provide a shorter input"}

    def envelope(self, ident: str, created: int, model: str) -> dict[str, Any]:
        return {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
                "system_fingerprint": model}

    def stream_id(self) -> str:
        return "chatcmpl-" + secrets.token_hex(9)

    def role_delta(self) -> dict[str, Any]:
        return {"role": "assistant"}

    def call_id(self, call: ScriptedCall) -> str:
        return call.id or str(100000000 + secrets.randbelow(900000000))

    def call_fragments(self, index: int, call: ScriptedCall, raw: str, turn: Turn) -> list[dict[str, Any]]:
        if self.legacy:
            return [{"index": index, "id": self.call_id(call), "type": "function",
                     "function": {"name": call.name, "arguments": raw}},
                    {"index": index, "type": "function", "function": {"name": "", "arguments": ""}}]
        head = {"index": index, "id": self.call_id(call), "type": "function",
                "function": {"name": call.name, "arguments": ""}}
        return [head, *({"index": index, "type": "function", "function": {"arguments": piece}}
                        for piece in split_text(raw, turn.split_arguments))]

    def finish_reason_for(self, turn: Turn) -> str:
        if self.legacy and not turn.finish_reason:
            return "stop"
        return super().finish_reason_for(turn)

    def wants_usage(self, body: dict[str, Any]) -> bool:
        return not self.legacy and super().wants_usage(body)

    def mid_stream_error(self, chunk: Any) -> dict[str, Any]:
        return {"error": {"message": "Model unloaded.", "type": "server_error", "code": None}}
