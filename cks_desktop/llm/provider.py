"""The provider interface and its errors. CONTRACT — adapters live in ``providers/``.

An adapter wraps one vendor SDK. ``stream`` yields the neutral events of
``events.py``; it raises ``ProviderError`` (one human sentence in ``message``)
for every failure the person should read, and lets ``CancelledError`` through.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from cks_desktop.llm.events import StreamEvent
from cks_desktop.llm.messages import Message, ToolDef


@dataclass(frozen=True)
class ProviderProfile:
    """Capability facts; callers branch on these, never on the provider's name."""

    name: str  # "anthropic" | "ollama" | "openai" | "gemini"
    display_name: str
    tool_calling: bool = True
    native_structured_output: bool = False
    parallel_tool_calls: bool = True
    needs_api_key: bool = True
    api_key_env: str | None = None
    can_list_models: bool = True


class ProviderError(Exception):
    """A failure worth one sentence in the chat.

    ``kind``: auth, model_not_found, rate_limited, overloaded, server_error,
    connection, timeout, stream_cut, bad_request, no_tool_support, missing_key.
    """

    def __init__(self, message: str, kind: str, *, retryable: bool = False, detail: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.retryable = retryable
        self.detail = detail


@dataclass(frozen=True)
class ProviderConfig:
    name: str
    model: str
    base_url: str = ""
    api_key: str | None = None
    timeout: float = 120.0
    max_retries: int = 2
    max_tokens: int = 4096
    options: dict[str, Any] | None = None  # provider-specific (ollama: num_ctx)


class Provider(Protocol):
    profile: ProviderProfile
    config: ProviderConfig

    def stream(self, messages: list[Message], tools: list[ToolDef], *, system: str | None = None,
               response_schema: dict[str, Any] | None = None) -> AsyncIterator[StreamEvent]: ...

    async def list_models(self) -> list[str]: ...

    async def aclose(self) -> None: ...
