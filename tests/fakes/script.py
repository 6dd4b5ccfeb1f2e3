"""A provider-neutral script of model turns, played by every fake LLM server.

Each fake (Anthropic SSE, Ollama NDJSON, OpenAI SSE, Gemini SSE) renders the
same ``Turn`` in its own real wire protocol, so one scenario runs unchanged
against all four SDKs. The in-process ``ScriptedProvider`` plays it without a
socket (for loop-logic tests and ``--self-test``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ScriptedCall:
    name: str  # the wire name the model "sends"
    arguments: dict[str, Any] | None = None  # None with raw_arguments: send exactly that text
    id: str | None = None  # None: providers that synthesize ids do; others get one generated
    raw_arguments: str | None = None  # e.g. invalid JSON


@dataclass
class Turn:
    """One model response.

    ``text`` is sent as the given chunks in order; then ``tool_calls``.
    ``status``/``error_body``: answer with that HTTP status instead (e.g. 429, 401, 529).
    ``retry_after``: a Retry-After header with the error status.
    ``error_mid_stream``: after the text chunks, send the provider's in-stream error of that type
    (e.g. "overloaded_error"), where the protocol has one; otherwise cut the stream.
    ``cut_after_text``: close the connection abruptly after the text chunks (no finish).
    ``stall_after_text``: stop sending (keep the socket open) after the text chunks until the
    client goes away or the server closes.
    ``split_arguments``: send tool-call argument JSON in this many fragments (where the protocol
    streams fragments), deliberately splitting mid-token.
    ``thinking``: the model's thinking, as chunks (see the fields' comment below).
    """

    text: list[str] = field(default_factory=list)
    tool_calls: list[ScriptedCall] = field(default_factory=list)
    status: int | None = None
    error_body: dict[str, Any] | None = None
    retry_after: float | None = None
    error_mid_stream: str | None = None
    cut_after_text: bool = False
    stall_after_text: bool = False
    split_arguments: int = 3
    stall_in_arguments: bool = False  # (Anthropic) stop sending after the first call's argument fragments
    finish_reason: str | None = None  # override ("length", ...)
    input_tokens: int = 11
    output_tokens: int = 7
    # Thinking, sent before the text in each protocol's own form: Anthropic
    # ``thinking`` blocks (only when the request enabled thinking) closed by ``signature_delta``,
    # Ollama ``message.thinking``, OpenAI-compatible ``reasoning_content``/``reasoning`` deltas,
    # Gemini ``thought`` parts. ``thinking_signature`` None: the fake makes one up (Anthropic, Gemini).
    thinking: list[str] = field(default_factory=list)
    thinking_signature: str | None = None
    redacted_thinking: str | None = None  # (Anthropic) a redacted_thinking block with this data
    reasoning_tokens: int = 0
    # The Retry-After header as an HTTP date (``email.utils.formatdate(..., usegmt=True)``) instead of
    # ``retry_after`` seconds.
    retry_after_date: str | None = None

    def error_headers(self) -> dict[str, str]:
        """The headers of this turn's error answer: ``retry-after`` in seconds or as an HTTP date."""
        if self.retry_after_date is not None:
            return {"retry-after": self.retry_after_date}
        return {"retry-after": f"{self.retry_after:g}"} if self.retry_after is not None else {}


def text_turn(*chunks: str) -> Turn:
    return Turn(text=list(chunks))


def call_turn(name: str, arguments: dict[str, Any] | None = None, *, text: str = "") -> Turn:
    return Turn(text=[text] if text else [], tool_calls=[ScriptedCall(name, arguments or {})])
