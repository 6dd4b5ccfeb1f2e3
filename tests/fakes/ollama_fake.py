"""A fake Ollama server that speaks the native ``/api/chat`` NDJSON stream.

Each line is one JSON object: ``done:false`` chunks with text pieces, tool calls
arriving whole in one ``done:false`` chunk (``arguments`` as an object, no ids —
what Ollama sends), then a ``done:true`` chunk with ``done_reason`` and the token
counts. As the real server does:
- a model named in ``models_without_tools`` asked with ``tools`` answers 400
  ``{"error": "registry.ollama.ai/library/<m>:latest does not support tools"}``
  without consuming a turn;
- a scripted call with ``raw_arguments`` (JSON the model got wrong) becomes the
  ``{"error": "error parsing tool call: ..."}`` line Ollama sends when it cannot
  parse the model's call;
- ``error_mid_stream`` sends an ``{"error": ...}`` line;
- a turn's ``thinking`` streams as ``message.thinking`` pieces before the text.
Errors are ``{"error": "<text>"}``. ``GET /api/tags`` and ``/api/version`` answer
like Ollama, so listing models and ``detect_ollama`` work against it.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from tests.fakes.server import FakeServer, RecordedRequest, Responder
from tests.fakes.script import Turn

_ERRORS = {
    400: "invalid request",
    401: "unauthorized",
    404: 'model "{model}" not found, try pulling it first',
    429: "too many requests",
    500: "llama runner process has terminated: exit status 2",
    503: "server busy, please try again.  maximum pending requests exceeded",
}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class FakeOllama(FakeServer):
    name = "ollama"
    default_model = "llama-test"
    vision_models: set[str] = {"llava-test"}
    models_without_thinking: set[str] = {"llama-nothink"}  # asked to ``think``, they answer 400  # /api/show lists "vision" for these

    def __init__(self, *, chunk_delay: float = 0.0, models_without_tools: set[str] | None = None) -> None:
        super().__init__(chunk_delay=chunk_delay)
        self.models_without_tools = set(models_without_tools or ())

    def is_generation(self, request: RecordedRequest) -> bool:
        return request.method == "POST" and request.path == "/api/chat"

    def handle(self, request: RecordedRequest, out: Responder) -> None:
        if request.method == "GET" and request.path == "/api/version":
            out.json(200, {"version": "0.12.6"})
            return
        if request.method == "GET" and request.path == "/api/tags":
            out.json(200, {"models": [
                {"name": f"{m}:latest", "model": f"{m}:latest", "modified_at": _now(), "size": 1000,
                 "digest": "0" * 64, "details": {"format": "gguf", "family": "llama", "parameter_size": "8B",
                                                 "quantization_level": "Q4_K_M"}}
                for m in (self.default_model, "llama-other")]})
            return
        if request.method == "POST" and request.path == "/api/show":  # capabilities ("vision")
            shown = str((request.body or {}).get("model", ""))
            capabilities = ["completion", "tools", *(["vision"] if shown in self.vision_models else [])]
            out.json(200, {"modelfile": "", "parameters": "", "template": "", "model_info": {},
                           "details": {"format": "gguf", "family": "llama"}, "capabilities": capabilities})
            return
        if not self.is_generation(request):
            out.json(404, {"error": "404 page not found"})
            return
        body = request.body or {}
        model = str(body.get("model", self.default_model))
        if body.get("tools") and model in self.models_without_tools:
            out.json(400, {"error": f"registry.ollama.ai/library/{model}:latest does not support tools"})
            return
        if body.get("think") and model in self.models_without_thinking:  # as Ollama answers
            out.json(400, {"error": f'"{model}" does not support thinking'})
            return
        turn = self.next_turn()
        if turn is None:
            self.out_of_turns(out)
            return
        if turn.status is not None:
            headers = turn.error_headers()
            out.json(turn.status, turn.error_body or {"error": _ERRORS.get(turn.status, "internal error")
                                                      .format(model=model)}, headers)
            return
        self._stream(turn, model, out)

    def _stream(self, turn: Turn, model: str, out: Responder) -> None:
        def line(data: dict[str, Any]) -> str:
            return json.dumps(data) + "\n"

        def chunk(message: dict[str, Any]) -> str:
            return line({"model": model, "created_at": _now(), "message": {"role": "assistant", **message},
                         "done": False})

        out.begin("application/x-ndjson")
        for piece in turn.thinking:  # a thinking model's ``message.thinking``, before the answer
            out.send(chunk({"content": "", "thinking": piece}))
        for piece in turn.text:
            out.send(chunk({"content": piece}))
        if turn.error_mid_stream:
            out.send(line({"error": "an error was encountered while running the model: unexpected EOF"}))
            out.end()
            return
        if turn.cut_after_text:
            out.cut()
            return
        if turn.stall_after_text:
            out.stall()
            return
        bad = next((c for c in turn.tool_calls if c.raw_arguments is not None), None)
        if bad is not None:
            out.send(line({"error": f"error parsing tool call: raw='{bad.raw_arguments}', "
                                    "err=invalid character looking for beginning of value"}))
            out.end()
            return
        if turn.tool_calls:
            out.send(chunk({"content": "", "tool_calls": [
                {"function": {"name": c.name, "arguments": c.arguments or {}}} for c in turn.tool_calls]}))
        reason = turn.finish_reason or "stop"
        out.send(line({"model": model, "created_at": _now(), "message": {"role": "assistant", "content": ""},
                       "done": True, "done_reason": reason, "total_duration": 1000, "load_duration": 10,
                       "prompt_eval_count": turn.input_tokens, "prompt_eval_duration": 100,
                       "eval_count": turn.output_tokens, "eval_duration": 200}))
        out.end()
