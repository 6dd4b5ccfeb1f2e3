"""A fake OpenRouter (``https://openrouter.ai/api/v1``): an OpenAI-style gateway in front of many vendors.

Replays what OpenRouter documents for its chat-completions stream (openrouter.ai/docs:
api-reference/streaming, use-cases/usage-accounting, reasoning-tokens, errors):

- SSE comment lines ``: OPENROUTER PROCESSING`` keep the connection open before the first chunk
  (and while an upstream is slow): a client must skip them;
- chunks carry ``provider`` and, with ``finish_reason``, ``native_finish_reason`` (the upstream's
  own word, "tool_use" / "end_turn");
- reasoning as ``delta.reasoning`` plus ``delta.reasoning_details`` (``reasoning.text`` items);
- usage is always sent (``stream_options`` and ``usage: {include: true}`` are deprecated and
  change nothing), in the last chunk, whose ``choices`` still hold one empty delta; it has
  ``cost`` (credits = USD), ``is_byok``, ``prompt_tokens_details.cached_tokens`` and
  ``cache_write_tokens``, ``completion_tokens_details.reasoning_tokens``;
- an error after the stream began is a chunk with a top-level ``error`` and ``finish_reason``
  "error"; HTTP errors are ``{"error": {"code", "message", "metadata"}}``;
- ``GET /api/v1/models`` gives ``context_length``, ``pricing`` (USD per token, as strings) and
  ``top_provider``.

``tool_index`` replays what the upstreams behind such gateways do to ``tool_calls[].index``
(the same happens with other OpenAI-style proxies): "present" (OpenAI's rule), "omit" (no
``index`` at all: Gemini's OpenAI-compatible endpoint and proxies in front of it; "omit-named":
and the name repeated on every piece), "reuse" (every
call of a turn labelled ``index: 0``: Ollama's ``/v1`` upstream) or "shifted" (continuation pieces
under an index that never started a call, without id or name: seen from Nebius and Cerebras).
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from tests.fakes.compat_server import CompatFake
from tests.fakes.script import ScriptedCall, Turn
from tests.fakes.server import split_text

PRICE_IN, PRICE_OUT = 3e-6, 15e-6  # USD per token, as the model list says


class FakeOpenRouter(CompatFake):
    server_label = "OpenRouter"
    api_prefix = "/api/v1"
    default_model = "anthropic/claude-sonnet-4.5"
    context_length = 1_000_000

    def __init__(self, *, tool_index: str = "present", upstream: str = "Anthropic", cached_tokens: int = 0,
                 cache_write_tokens: int = 0, **kwargs: Any) -> None:
        super().__init__(reasoning_field="reasoning", **kwargs)
        self.tool_index = tool_index
        self.upstream = upstream
        self.cached_tokens = cached_tokens
        self.cache_write_tokens = cache_write_tokens

    def models(self) -> dict[str, Any]:
        return {"data": [{
            "id": self.default_model, "canonical_slug": self.default_model + "-20250929",
            "name": "Anthropic: Claude Sonnet 4.5", "created": 1759161676,
            "context_length": self.context_window or self.context_length,
            "architecture": {"modality": "text+image->text", "input_modalities": ["text", "image", "file"],
                             "output_modalities": ["text"], "tokenizer": "Claude", "instruct_type": None},
            "pricing": {"prompt": f"{PRICE_IN:.7f}", "completion": f"{PRICE_OUT:.6f}",
                        "input_cache_read": "0.0000003", "input_cache_write": "0.00000375"},
            "top_provider": {"context_length": self.context_window or self.context_length,
                             "max_completion_tokens": 64000, "is_moderated": True},
            "supported_parameters": ["include_reasoning", "max_tokens", "reasoning", "stop", "temperature",
                                     "tool_choice", "tools", "top_p"]}]}

    def error(self, status: int, model: str) -> dict[str, Any]:
        messages = {401: "No auth credentials found", 402: "Insufficient credits. Add more using "
                    "https://openrouter.ai/settings/credits", 429: "Rate limit exceeded: free-models-per-min.",
                    502: f"{self.upstream} returned an error", 503: "No available model provider that meets "
                    "your routing requirements"}
        return {"error": {"code": status, "message": messages.get(status, f"HTTP {status}"),
                          "metadata": {"provider_name": self.upstream}}}

    def too_long_error(self, tokens: int) -> dict[str, Any]:
        return {"error": {"code": 400, "message": f"This endpoint's maximum context length is {self.context_window} "
                          f"tokens. However, you requested about {tokens} tokens. Please reduce the length of "
                          "either one, or use the \"middle-out\" transform to compress your prompt automatically.",
                          "metadata": {"provider_name": None}}}

    def comment(self) -> str | None:
        return "OPENROUTER PROCESSING"

    def stream_id(self) -> str:
        return f"gen-{int(time.time())}-{secrets.token_urlsafe(15)}"

    def envelope(self, ident: str, created: int, model: str) -> dict[str, Any]:
        return {"id": ident, "provider": self.upstream, "model": model, "object": "chat.completion.chunk",
                "created": created}

    def role_delta(self) -> dict[str, Any]:
        return {"role": "assistant", "content": ""}

    def reasoning_delta(self, piece: str) -> dict[str, Any]:
        return {"role": "assistant", "content": "", "reasoning": piece,
                "reasoning_details": [{"type": "reasoning.text", "text": piece, "format": "anthropic-claude-v1",
                                       "index": 0}]}

    def call_id(self, call: ScriptedCall) -> str:
        return call.id or "toolu_vrtx_" + secrets.token_hex(12)

    def call_fragments(self, index: int, call: ScriptedCall, raw: str, turn: Turn) -> list[dict[str, Any]]:
        head: dict[str, Any] = {"index": index, "id": self.call_id(call), "type": "function",
                                "function": {"name": call.name, "arguments": ""}}
        tail: list[dict[str, Any]] = [{"index": index, "type": "function", "function": {"arguments": piece}}
                                      for piece in split_text(raw, turn.split_arguments)]
        if self.tool_index in ("omit", "omit-named"):
            for fragment in (head, *tail):
                fragment.pop("index")
                if self.tool_index == "omit-named":  # the name repeated on every piece, no id
                    fragment["function"]["name"] = call.name
        elif self.tool_index == "reuse":
            for fragment in (head, *tail):
                fragment["index"] = 0
        elif self.tool_index == "shifted":
            for fragment in tail:
                fragment["index"] = index + 1
                fragment.pop("type")
        return [head, *tail]

    def usage(self, turn: Turn, body: dict[str, Any]) -> dict[str, Any]:
        prompt = self.usage_tokens(body, turn.input_tokens)
        cost = prompt * PRICE_IN + turn.output_tokens * PRICE_OUT
        return {"prompt_tokens": prompt, "completion_tokens": turn.output_tokens,
                "total_tokens": prompt + turn.output_tokens, "cost": round(cost, 9), "is_byok": False,
                "prompt_tokens_details": {"cached_tokens": self.cached_tokens,
                                          "cache_write_tokens": self.cache_write_tokens, "audio_tokens": 0},
                "cost_details": {"upstream_inference_cost": None,
                                 "upstream_inference_prompt_cost": round(prompt * PRICE_IN, 9),
                                 "upstream_inference_completions_cost": round(turn.output_tokens * PRICE_OUT, 9)},
                "completion_tokens_details": {"reasoning_tokens": turn.reasoning_tokens, "image_tokens": 0}}

    def finish(self, chunk: Any, finish_reason: str, turn: Turn, body: dict[str, Any],
               pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
        last = chunk({"role": "assistant", "content": ""}, finish_reason)
        last["choices"][0]["native_finish_reason"] = "tool_use" if finish_reason == "tool_calls" else "end_turn"
        final = chunk({"role": "assistant", "content": ""})
        final["choices"][0]["native_finish_reason"] = None
        final["usage"] = self.usage(turn, body)  # always: include_usage no longer changes anything
        return [last, final]

    def mid_stream_error(self, chunk: Any) -> dict[str, Any]:
        data = chunk({"content": ""}, "error")
        data["error"] = {"code": "server_error", "message": "Provider disconnected unexpectedly"}
        return data
