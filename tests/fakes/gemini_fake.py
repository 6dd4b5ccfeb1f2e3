"""A fake Gemini API (``v1`` and ``v1beta``) that speaks the ``streamGenerateContent?alt=sse`` stream.

Each event is ``data: <GenerateContentResponse>`` followed by a blank line
(CRLF, as Google sends it): candidates whose ``content.parts`` carry text pieces,
then one chunk with every ``functionCall`` part whole (``args`` as an object; an
``id`` only when the scripted call has one; the first call carries a
``thoughtSignature``, as Gemini 3 models send), and ``finishReason`` with
``usageMetadata`` on the last chunk (``thoughtsTokenCount`` when the turn has
``reasoning_tokens``). A turn's ``thinking`` comes first as ``thought: true`` parts
(thought summaries; the last is signed when no call follows). As the real API does:
- a scripted call with ``raw_arguments`` (a call the model botched) ends the
  answer with ``finishReason: MALFORMED_FUNCTION_CALL`` and a ``finishMessage``;
- ``error_mid_stream`` sends ``data: {"error": {...}}``;
- errors carry Google RPC bodies (``status``, and a ``RetryInfo`` detail for 429).
``GET /v1/models`` lists models; ``POST .../models/{model}:countTokens`` answers ``{"totalTokens": N}``
(``FakeServer.counted_tokens``). The key arrives in ``x-goog-api-key``.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
from typing import Any

from tests.fakes.server import FakeServer, RecordedRequest, Responder
from tests.fakes.script import Turn

_PATH = re.compile(r"^/(?P<version>v1|v1beta)/models/(?P<model>[^/:]+):streamGenerateContent$")
_COUNT_PATH = re.compile(r"^/(?P<version>v1|v1beta)/models/(?P<model>[^/:]+):countTokens$")
_ERRORS: dict[int, tuple[str, str]] = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "Request had invalid authentication credentials."),
    403: ("PERMISSION_DENIED", "Method doesn't allow unregistered callers."),
    404: ("NOT_FOUND", "models/{model} is not found for API version v1beta, or is not supported for "
          "generateContent. Call ListModels to see the list of available models and their supported methods."),
    429: ("RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details."),
    500: ("INTERNAL", "An internal error has occurred. Please retry or report in "
          "https://developers.generativeai.google/guide/troubleshooting"),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
}
SIGNATURE = b"fake-thought-signature"
THOUGHT_SIGNATURE = b"fake-signature-of-thoughts"
BAD_KEY_BODY = {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                          "status": "INVALID_ARGUMENT", "details": [
                              {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                               "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}}]}}


def error_body(status: int, model: str, retry_after: float | None = None) -> dict[str, Any]:
    rpc, message = _ERRORS.get(status, ("INTERNAL", "Internal error."))
    error: dict[str, Any] = {"code": status, "message": message.format(model=model), "status": rpc}
    if retry_after is not None:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after:g}s"}]
    return {"error": error}


class FakeGemini(FakeServer):
    name = "gemini"
    default_model = "gemini-test"

    def is_generation(self, request: RecordedRequest) -> bool:
        return request.method == "POST" and bool(_PATH.match(request.path))

    def handle(self, request: RecordedRequest, out: Responder) -> None:
        if request.method == "GET" and request.path in ("/v1/models", "/v1beta/models"):
            out.json(200, {"models": [
                {"name": f"models/{m}", "displayName": m, "supportedGenerationMethods": ["generateContent"]}
                for m in (self.default_model, "gemini-other")]})
            return
        counting = _COUNT_PATH.match(request.path)
        if request.method == "POST" and counting is not None:
            self._count(request.body or {}, counting.group("model"), out)
            return
        match = _PATH.match(request.path)
        if request.method != "POST" or match is None:
            out.json(404, {"error": {"code": 404, "message": "Not found", "status": "NOT_FOUND"}})
            return
        turn = self.next_turn()
        if turn is None:
            self.out_of_turns(out)
            return
        model = match.group("model")
        if turn.status is not None:
            headers = turn.error_headers()
            out.json(turn.status, turn.error_body or error_body(turn.status, model, turn.retry_after), headers)
            return
        self._stream(turn, model, out)

    def _count(self, body: dict[str, Any], model: str, out: Responder) -> None:
        """``POST /v1beta/models/{model}:countTokens``: ``{"totalTokens": N}`` for its ``contents``."""
        if self.count_stall:
            out.stall()
        elif self.count_status is not None:
            out.json(self.count_status, error_body(self.count_status, model))
        elif not body.get("contents") and not body.get("generateContentRequest"):
            out.json(400, error_body(400, model))
        else:
            out.json(200, {"totalTokens": self.counted_tokens(body)})

    @property
    def count_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if _COUNT_PATH.match(r.path)]

    def _stream(self, turn: Turn, model: str, out: Responder) -> None:
        response_id = secrets.token_hex(8)

        def event(parts: list[dict[str, Any]] | None, finish: str | None = None,
                  extra: dict[str, Any] | None = None) -> str:
            candidate: dict[str, Any] = {"index": 0}
            if parts is not None:
                candidate["content"] = {"parts": parts, "role": "model"}
            if finish:
                candidate["finishReason"] = finish
            candidate.update(extra or {})
            data: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": response_id,
                                    "usageMetadata": {"promptTokenCount": turn.input_tokens,
                                                      "candidatesTokenCount": turn.output_tokens if finish else 1,
                                                      "totalTokenCount": turn.input_tokens + turn.output_tokens,
                                                      **({"thoughtsTokenCount": turn.reasoning_tokens}
                                                         if turn.reasoning_tokens and finish else {})}}
            return "data: " + json.dumps(data) + "\r\n\r\n"

        out.begin("text/event-stream")
        if turn.thinking:  # thought summaries: ``thought: true`` parts, signed on the last
            signature = turn.thinking_signature or base64.b64encode(THOUGHT_SIGNATURE).decode()
            for number, piece in enumerate(turn.thinking, start=1):
                thought: dict[str, Any] = {"text": piece, "thought": True}
                if number == len(turn.thinking) and not turn.tool_calls:
                    thought["thoughtSignature"] = signature
                out.send(event([thought]))
        pending = list(turn.text)
        last_text = pending.pop() if pending and not turn.tool_calls else None
        for piece in pending:
            out.send(event([{"text": piece}]))
        if turn.error_mid_stream or turn.cut_after_text or turn.stall_after_text:
            if last_text is not None:
                out.send(event([{"text": last_text}]))
            if turn.error_mid_stream:
                out.send("data: " + json.dumps(error_body(503, model)) + "\r\n\r\n")
                out.end()
            elif turn.cut_after_text:
                out.cut()
            else:
                out.stall()
            return
        finish = {"length": "MAX_TOKENS", "stop": "STOP"}.get(turn.finish_reason or "stop", turn.finish_reason)
        bad = next((c for c in turn.tool_calls if c.raw_arguments is not None), None)
        if bad is not None:
            out.send(event(None, "MALFORMED_FUNCTION_CALL",
                           {"finishMessage": f"Malformed function call: {bad.name}({bad.raw_arguments})"}))
        elif turn.tool_calls:
            parts = []
            for position, call in enumerate(turn.tool_calls):
                fc: dict[str, Any] = {"name": call.name, "args": call.arguments or {}}
                if call.id:
                    fc["id"] = call.id
                part: dict[str, Any] = {"functionCall": fc}
                if position == 0:
                    part["thoughtSignature"] = base64.b64encode(SIGNATURE).decode()
                parts.append(part)
            out.send(event(parts, finish))
        else:
            out.send(event([{"text": last_text or ""}], finish))
        out.end()
