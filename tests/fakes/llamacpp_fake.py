"""A fake llama.cpp ``llama-server`` (``tools/server``): its OpenAI-compatible ``/v1/chat/completions``.

Replays the wire of ``server_task_result_cmpl_final::to_json_oaicompat_chat_stream`` and the
partial results before it (llama.cpp ``tools/server/server-task.cpp``, ``common/chat.cpp``):

- every chunk carries ``system_fingerprint`` (the build, "b6097-9515c613"); the first delta is
  ``{"role": "assistant", "content": null}``; thinking arrives as ``delta.reasoning_content``
  (the default ``--reasoning-format deepseek``);
- a tool call is one message diff: ``{"index", "id", "type": "function", "function": {"name",
  "arguments"}}`` with the id (a random 32-character string) and name only in the first fragment
  of a call, and, as the parser usually sees the call whole, all its arguments in that same
  fragment (``whole_arguments=False``: the first piece with the name, the rest as
  ``{"index", "function": {"arguments"}}``);
- the answer ends with a chunk whose delta is ``{}`` and ``finish_reason`` "tool_calls" or
  "stop"; then, only when the request asked ``stream_options.include_usage``, a chunk with
  ``choices: []`` and ``usage`` (with ``prompt_tokens_details.cached_tokens``); the last chunk
  carries ``timings`` (``cache_n``, ``prompt_n`` evaluated, ``predicted_n`` and speeds) either way.
  ``usage_in_finish_chunk=True`` replays earlier builds (b6097, Aug 2025), which put ``usage``
  and ``timings`` on the finish chunk whatever the request said;
- errors are ``{"error": {"code", "message", "type"}}``: 503 ``unavailable_error`` "Loading
  model" while a model loads, 400 ``exceed_context_size_error`` (with ``n_prompt_tokens`` and
  ``n_ctx``) for a prompt over the slot's context;
- ``GET /v1/models`` lists the loaded file with ``meta.n_ctx_train`` (no ``context_length``).
"""

from __future__ import annotations

import secrets
import string
from typing import Any

from tests.fakes.compat_server import CompatFake
from tests.fakes.script import ScriptedCall, Turn
from tests.fakes.server import split_text

BUILD = "b6097-9515c613"
_ERROR_TYPES = {400: ("invalid_request_error", "Invalid request"), 401: ("authentication_error", "Invalid API Key"),
                404: ("not_found_error", "File Not Found"), 500: ("server_error", "Internal server error"),
                501: ("not_supported_error", "This server does not support this feature"),
                503: ("unavailable_error", "Loading model")}


def _random_id() -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(32))


class FakeLlamaCpp(CompatFake):
    server_label = "llama.cpp server"
    default_model = "qwen2.5-7b-instruct-q4_k_m.gguf"
    n_ctx_train = 32768

    def __init__(self, *, whole_arguments: bool = True, usage_in_finish_chunk: bool = False,
                 cached_tokens: int = 0, **kwargs: Any) -> None:
        super().__init__(reasoning_field="reasoning_content", **kwargs)
        self.whole_arguments = whole_arguments
        self.usage_in_finish_chunk = usage_in_finish_chunk
        self.cached_tokens = cached_tokens

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [{
            "id": self.default_model, "object": "model", "created": 1754500000, "owned_by": "llamacpp",
            "meta": {"vocab_type": 2, "n_vocab": 152064, "n_ctx_train": self.context_window or self.n_ctx_train,
                     "n_embd": 3584, "n_params": 7615616512, "size": 4677120000}}]}

    def error(self, status: int, model: str) -> dict[str, Any]:
        kind, message = _ERROR_TYPES.get(status, ("server_error", "Internal server error"))
        return {"error": {"code": status, "message": message, "type": kind}}

    def too_long_error(self, tokens: int) -> dict[str, Any]:
        return {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                          "type": "exceed_context_size_error", "n_prompt_tokens": tokens,
                          "n_ctx": self.context_window}}

    def envelope(self, ident: str, created: int, model: str) -> dict[str, Any]:
        return {"created": created, "id": ident, "model": model, "system_fingerprint": BUILD,
                "object": "chat.completion.chunk"}

    def mid_stream_error(self, chunk: Any) -> dict[str, Any]:
        return {"error": {"code": 500, "message": "Failed to parse input into chat message", "type": "server_error"}}

    def call_id(self, call: ScriptedCall) -> str:
        return call.id or _random_id()

    def call_fragments(self, index: int, call: ScriptedCall, raw: str, turn: Turn) -> list[dict[str, Any]]:
        pieces = [raw] if self.whole_arguments else split_text(raw, turn.split_arguments) or [""]
        head = {"index": index, "id": self.call_id(call), "type": "function",
                "function": {"name": call.name, "arguments": pieces[0]}}
        return [head, *({"index": index, "function": {"arguments": p}} for p in pieces[1:])]

    def usage(self, turn: Turn, body: dict[str, Any]) -> dict[str, Any]:
        prompt = self.usage_tokens(body, turn.input_tokens)
        return {"completion_tokens": turn.output_tokens, "prompt_tokens": prompt,
                "total_tokens": prompt + turn.output_tokens,
                "prompt_tokens_details": {"cached_tokens": self.cached_tokens}}

    def timings(self, turn: Turn, body: dict[str, Any]) -> dict[str, Any]:
        prompt = self.usage_tokens(body, turn.input_tokens)
        return {"cache_n": self.cached_tokens, "prompt_n": max(0, prompt - self.cached_tokens), "prompt_ms": 203.4,
                "prompt_per_token_ms": 0.19, "prompt_per_second": 5334.9, "predicted_n": turn.output_tokens,
                "predicted_ms": 933.6, "predicted_per_token_ms": 3.78, "predicted_per_second": 264.6}

    def finish(self, chunk: Any, finish_reason: str, turn: Turn, body: dict[str, Any],
               pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
        last = chunk({}, finish_reason)
        chunks = [last]
        if self.usage_in_finish_chunk:
            last["usage"] = self.usage(turn, body)
        elif self.wants_usage(body):
            chunks.append({**self.envelope(last["id"], last["created"], last["model"]), "choices": [],
                           "usage": self.usage(turn, body)})
        chunks[-1]["timings"] = self.timings(turn, body)
        return chunks
