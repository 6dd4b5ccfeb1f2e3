"""A fake OpenAI Chat Completions API (``/v1``) that speaks the real SSE stream.

``POST /v1/chat/completions`` answers with ``data: <chunk>`` lines and a final
``data: [DONE]``: a role chunk, one chunk per text piece, tool calls as
fragments keyed by ``index`` (the first carries ``id``, ``type`` and the name
with empty arguments, the rest carry argument pieces split mid-token), a chunk
with ``finish_reason``, and — when the request asked for
``stream_options.include_usage`` — a usage chunk with no choices.
``interleave_calls=True`` streams the fragments of several calls interleaved,
as parallel calls may arrive. Errors carry OpenAI's ``{"error": {...}}`` bodies
and ``retry-after``; ``error_mid_stream`` sends an ``{"error": ...}`` data line.
``GET /v1/models`` lists models. ``base_url`` includes ``/v1``, as the SDK expects.

Reasoning: a turn's ``thinking`` streams as ``delta.<reasoning_field>`` pieces
before the text (``reasoning_content``: DeepSeek, vLLM, llama.cpp; ``reasoning``: OpenRouter
and newer vLLM), and ``reasoning_tokens`` in ``completion_tokens_details``. ``reasoning_rule``
plays a server's documented rule for reasoning sent back: ``"deepseek"`` (DeepSeek's thinking
mode: the ``reasoning_content`` of a turn with tool calls must come back in every later
request, else 400) or ``"refuse"`` (deepseek-reasoner: any ``reasoning_content`` in the input
is a 400).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from tests.fakes.server import FakeServer, RecordedRequest, Responder, split_text
from tests.fakes.script import Turn

_ERRORS: dict[int, tuple[str, str, str | None]] = {
    400: ("invalid_request_error", "Invalid request.", None),
    401: ("invalid_request_error", "Incorrect API key provided: test. You can find your API key at "
          "https://platform.openai.com/account/api-keys.", "invalid_api_key"),
    403: ("invalid_request_error", "You are not allowed to sample from this model.", None),
    404: ("invalid_request_error", "The model `{model}` does not exist or you do not have access to it.",
          "model_not_found"),
    429: ("requests", "Rate limit reached for requests. Please try again in 20ms.", "rate_limit_exceeded"),
    500: ("server_error", "The server had an error while processing your request. Sorry about that!", None),
    503: ("server_error", "The engine is currently overloaded, please try again later.", None),
}


def error_body(status: int, model: str) -> dict[str, Any]:
    etype, message, code = _ERRORS.get(status, ("server_error", "Internal error.", None))
    return {"error": {"message": message.format(model=model), "type": etype, "param": None, "code": code}}


def answered_with_status(out: Responder, turn: Turn, model: str) -> bool:
    """A scripted error turn (429 with retry-after, 500, …) answered as OpenAI does; False otherwise."""
    if turn.status is None:
        return False
    headers = {"x-request-id": "req_fake", **turn.error_headers()}
    out.json(turn.status, turn.error_body or error_body(turn.status, model), headers)
    return True


class FakeOpenAI(FakeServer):
    name = "openai"
    default_model = "gpt-test"

    def __init__(self, *, chunk_delay: float = 0.0, interleave_calls: bool = False,
                 reasoning_field: str = "reasoning_content", reasoning_rule: str | None = None) -> None:
        super().__init__(chunk_delay=chunk_delay)
        self.interleave_calls = interleave_calls
        self.reasoning_field = reasoning_field
        self.reasoning_rule = reasoning_rule
        self.reasoned_calls: dict[str, str] = {}  # tool call id → the reasoning of the turn that made it

    def reasoning_refusal(self, body: dict[str, Any]) -> str | None:
        """The server's 400 message for reasoning sent back against its rule, else None."""
        for number, message in enumerate(body.get("messages") or []):
            if message.get("role") != "assistant":
                continue
            sent = message.get("reasoning_content")
            if self.reasoning_rule == "refuse" and sent is not None:
                return ("The reasoning_content is an intermediate result for display purposes only and will not be "
                        "included in the context for inference. Please remove the reasoning_content from your "
                        "message to reduce network traffic.")
            if self.reasoning_rule == "deepseek":
                issued = {self.reasoned_calls.get(c.get("id", "")) for c in message.get("tool_calls") or []} - {None}
                if issued and sent not in issued:
                    return (f"Missing `reasoning_content` in the assistant message at index {number}: in thinking "
                            "mode the reasoning_content of a turn with tool calls must be passed back.")
        return None

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def is_generation(self, request: RecordedRequest) -> bool:
        return request.method == "POST" and request.path == "/v1/chat/completions"

    def handle(self, request: RecordedRequest, out: Responder) -> None:
        if request.method == "GET" and request.path == "/v1/models":
            out.json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 1700000000, "owned_by": "fake",
                 # what vLLM/OpenRouter-style servers add: only when the fake has a window
                 **({"context_length": self.context_window} if self.context_window else {})}
                for m in (self.default_model, "gpt-other")]})
            return
        if not self.is_generation(request):
            out.json(404, {"error": {"message": "Unknown request URL", "type": "invalid_request_error",
                                     "param": None, "code": "unknown_url"}})
            return
        body = request.body or {}
        model = str(body.get("model", self.default_model))
        too_long = self.over_window(request)
        if too_long is not None:  # what the API answers, without consuming a turn
            out.json(400, {"error": {"message": f"This model's maximum context length is {self.context_window} "
                                     f"tokens. However, your messages resulted in {too_long} tokens. Please "
                                     "reduce the length of the messages.", "type": "invalid_request_error",
                                     "param": "messages", "code": "context_length_exceeded"}})
            return
        refused = self.reasoning_refusal(body)
        if refused is not None:
            out.json(400, {"error": {"message": refused, "type": "invalid_request_error", "param": None,
                                     "code": "invalid_request_error"}})
            return
        turn = self.next_turn(body)
        if turn is None:
            self.out_of_turns(out)
            return
        if answered_with_status(out, turn, model):
            return
        self._stream(turn, body, model, out)

    def _stream(self, turn: Turn, body: dict[str, Any], model: str, out: Responder) -> None:
        ident, created = "chatcmpl-fake" + secrets.token_hex(6), int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            data = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
                    "system_fingerprint": None,
                    "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
            return f"data: {json.dumps(data)}\n\n"

        out.begin("text/event-stream", {"x-request-id": "req_fake"})
        out.send(chunk({"role": "assistant", "content": "", "refusal": None}))
        for piece in turn.thinking:
            out.send(chunk({"content": None, self.reasoning_field: piece}))
        for piece in turn.text:
            out.send(chunk({"content": piece}))
        if turn.error_mid_stream:
            out.send("data: " + json.dumps({"error": {
                "message": "The server is overloaded; please try again later.", "type": "server_error",
                "param": None, "code": None}}) + "\n\n")
            out.end()
            return
        if turn.cut_after_text:
            out.cut()
            return
        if turn.stall_after_text:
            out.stall()
            return
        streams = []
        for index, call in enumerate(turn.tool_calls):
            raw = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments or {})
            head = {"index": index, "id": call.id or "call_fake" + secrets.token_hex(8), "type": "function",
                    "function": {"name": call.name, "arguments": ""}}
            if turn.thinking:
                self.reasoned_calls[head["id"]] = "".join(turn.thinking)
            tail = [{"index": index, "function": {"arguments": piece}}
                    for piece in split_text(raw, turn.split_arguments)]
            streams.append([head, *tail])
        for fragment in _order(streams, self.interleave_calls):
            out.send(chunk({"tool_calls": [fragment]}))
        finish = turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")
        out.send(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            usage: dict[str, Any] = {"prompt_tokens": self.usage_tokens(body, turn.input_tokens), "completion_tokens": turn.output_tokens,
                     "total_tokens": turn.input_tokens + turn.output_tokens}
            if turn.reasoning_tokens:
                usage["completion_tokens_details"] = {"reasoning_tokens": turn.reasoning_tokens}
            out.send("data: " + json.dumps({"id": ident, "object": "chat.completion.chunk", "created": created,
                                            "model": model, "choices": [], "usage": usage}) + "\n\n")
        out.send("data: [DONE]\n\n")
        out.end()


def _order(streams: list[list[dict[str, Any]]], interleave: bool) -> list[dict[str, Any]]:
    if not interleave:
        return [f for s in streams for f in s]
    result: list[dict[str, Any]] = []
    for step in range(max((len(s) for s in streams), default=0)):
        result += [s[step] for s in streams if step < len(s)]
    return result
