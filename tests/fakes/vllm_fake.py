"""A fake vLLM OpenAI-compatible server (``vllm serve --enable-auto-tool-choice --tool-call-parser …``).

Replays ``vllm/entrypoints/openai/serving_chat.py``'s ``chat_completion_stream_generator`` and
its tool parsers (``DeltaToolCall`` / ``DeltaFunctionCall`` dumped with ``exclude_none``):

- the first delta is ``{"role": "assistant", "content": ""}``;
- a call starts with ``{"index", "id": "chatcmpl-tool-<hex>", "type": "function",
  "function": {"name"}}``, with no ``arguments`` key at all, then ``{"index", "function":
  {"arguments"}}`` pieces; the parser's last piece (what it held back until the end) arrives in
  the same chunk as ``finish_reason`` "tool_calls", which also carries ``"stop_reason": null``;
- usage only when ``stream_options.include_usage`` asks (``choices: []``, with
  ``prompt_tokens_details`` null); with ``continuous_usage_stats`` the finish chunk carries it
  too;
- reasoning as ``delta.reasoning`` (current) or ``delta.reasoning_content`` (before 0.10):
  ``reasoning_field``;
- errors in the flat ``ErrorResponse`` shape ``{"object": "error", "message", "type":
  "BadRequestError", "param", "code"}`` (``flat_errors=False``: the newer ``{"error": {...}}``);
  a prompt over ``--max-model-len`` says "This model's maximum context length is N tokens";
- ``GET /v1/models`` reports ``max_model_len``;
- ``refuses_stream_options=True``: vLLM before 0.5, whose request model forbids the field (400).
"""

from __future__ import annotations

import secrets
from typing import Any

from tests.fakes.compat_server import CompatFake
from tests.fakes.script import ScriptedCall, Turn
from tests.fakes.server import RecordedRequest, Responder, split_text

_TYPES = {400: "BadRequestError", 401: "Unauthorized", 404: "NotFoundError", 500: "InternalServerError",
          503: "ServiceUnavailableError"}


class FakeVLLM(CompatFake):
    server_label = "vLLM"
    default_model = "Qwen/Qwen2.5-7B-Instruct"
    max_model_len = 32768

    def __init__(self, *, reasoning_field: str = "reasoning", flat_errors: bool = True,
                 refuses_stream_options: bool = False, **kwargs: Any) -> None:
        super().__init__(reasoning_field=reasoning_field, **kwargs)
        self.flat_errors = flat_errors
        self.refuses_stream_options = refuses_stream_options

    def handle(self, request: RecordedRequest, out: Responder) -> None:
        body = request.body if isinstance(request.body, dict) else {}
        if self.refuses_stream_options and self.is_generation(request) and "stream_options" in body:
            # vLLM before 0.5: its pydantic request model forbids unknown fields (no turn consumed)
            out.json(400, self._error(400, "[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options'), "
                                           "'msg': 'Extra inputs are not permitted', 'input': {'include_usage': True}}]"))
            return
        super().handle(request, out)

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [{
            "id": self.default_model, "object": "model", "created": 1754500000, "owned_by": "vllm",
            "root": self.default_model, "parent": None, "max_model_len": self.context_window or self.max_model_len,
            "permission": [{"id": "modelperm-" + secrets.token_hex(16), "object": "model_permission",
                            "created": 1754500000, "allow_create_engine": False, "allow_sampling": True,
                            "allow_logprobs": True, "allow_search_indices": False, "allow_view": True,
                            "allow_fine_tuning": False, "organization": "*", "group": None, "is_blocking": False}]}]}

    def _error(self, status: int, message: str) -> dict[str, Any]:
        body = {"object": "error", "message": message, "type": _TYPES.get(status, "InternalServerError"),
                "param": None, "code": status}
        return body if self.flat_errors else {"error": {k: v for k, v in body.items() if k != "object"}}

    def error(self, status: int, model: str) -> dict[str, Any]:
        messages = {404: f"The model `{model}` does not exist.", 503: "The server is overloaded."}
        return self._error(status, messages.get(status, f"HTTP {status}"))

    def too_long_error(self, tokens: int) -> dict[str, Any]:
        return self._error(400, f"This model's maximum context length is {self.context_window} tokens. However, you "
                                f"requested {tokens} tokens in the messages, Please reduce the length of the messages.")

    def role_delta(self) -> dict[str, Any]:
        return {"role": "assistant", "content": ""}

    def stream_id(self) -> str:
        return "chatcmpl-" + secrets.token_hex(16)

    def call_id(self, call: ScriptedCall) -> str:
        return call.id or "chatcmpl-tool-" + secrets.token_hex(16)

    def call_fragments(self, index: int, call: ScriptedCall, raw: str, turn: Turn) -> list[dict[str, Any]]:
        head = {"index": index, "id": self.call_id(call), "type": "function", "function": {"name": call.name}}
        return [head, *({"index": index, "function": {"arguments": piece}}
                        for piece in split_text(raw, turn.split_arguments))]

    def held_back(self, fragments: list[dict[str, Any]]) -> int:
        return 1 if fragments and "arguments" in fragments[-1].get("function", {}) else 0

    def usage(self, turn: Turn, body: dict[str, Any]) -> dict[str, Any]:
        prompt = self.usage_tokens(body, turn.input_tokens)
        return {"prompt_tokens": prompt, "total_tokens": prompt + turn.output_tokens,
                "completion_tokens": turn.output_tokens, "prompt_tokens_details": None}

    def finish(self, chunk: Any, finish_reason: str, turn: Turn, body: dict[str, Any],
               pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
        last = chunk({"tool_calls": pending} if pending else {}, finish_reason)
        last["choices"][0]["stop_reason"] = None
        chunks = [last]
        options = body.get("stream_options") or {}
        if options.get("include_usage"):
            chunks.append({**self.envelope(last["id"], last["created"], last["model"]), "choices": [],
                           "usage": self.usage(turn, body)})
        if options.get("continuous_usage_stats"):
            for data in chunks[:-1]:
                data["usage"] = self.usage(turn, body)
        return chunks
