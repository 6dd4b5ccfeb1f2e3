"""The provider interface and its errors. CONTRACT — adapters live in ``providers/``.

An adapter wraps one vendor SDK. ``stream`` yields the neutral events of
``events.py``; it raises ``ProviderError`` (one human sentence in ``message``)
for every failure the person should read, and lets ``CancelledError`` through.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any, Protocol

from cks_desktop.llm.events import StreamEvent
from cks_desktop.llm.messages import Message, ToolDef


@dataclass(frozen=True)
class Price:
    """USD per million tokens (``llm/prices.py`` reads it; a profile lists its models' prices)."""

    input: float
    output: float
    cached: float | None = None  # None: cached tokens cost the input rate
    cache_write: float | None = None  # None: tokens written to the cache cost the input rate

    def to_json(self) -> dict[str, float]:
        data = {"input": self.input, "output": self.output}
        if self.cached is not None:
            data["cached_input"] = self.cached
        if self.cache_write is not None:
            data["cache_write"] = self.cache_write
        return data


@dataclass(frozen=True)
class ProviderProfile:
    """Everything the app knows about one provider family, in one place (``llm/profiles.py``).

    Callers branch on these facts, never on the provider's name, and every field has a
    reader (``tests/llm/test_profiles.py`` fails on a fact nobody reads: an unread flag
    would only pretend to configure something). Capabilities the app has no use for
    yet are not here on purpose; add one together with its reader.
    """

    name: str  # "anthropic" | "ollama" | "openai" | "gemini"
    display_name: str  # what the settings page, the composer and error messages call it
    adapter: str = ""  # "module:Class" of the adapter, imported only when one is built
    sdk: str = ""  # the vendor SDK's module, imported with the adapter only (the self-test checks start-up)
    default_model: str = ""  # when neither the call nor the settings name one
    default_base_url: str = ""  # when the settings' base URL is empty
    api_key_envs: tuple[str, ...] = ()  # env vars that may hold the key, preferred first; () = no key
    # Other servers speak this API at their own base URL (llama.cpp, LM Studio, vLLM): a key is
    # required only at the vendor's own host (the host of ``default_base_url``).
    compatible_servers: bool = False
    # Keys of the provider's settings section passed to the adapter as options (Ollama's num_ctx).
    setting_options: tuple[str, ...] = ()
    # Read by ``respond_json``: with neither, the schema is asked for in words, without response_schema.
    tool_calling: bool = True
    native_structured_output: bool = False  # respond_json: the adapter's native mode, else a forced tool
    # Several calls in one model turn. False asks the API not to (OpenAI ``parallel_tool_calls``,
    # Anthropic ``disable_parallel_tool_use``); Ollama's and Gemini's APIs have no such switch.
    parallel_tool_calls: bool = True
    can_list_models: bool = True  # the settings page offers "Fetch models"
    # Context windows in tokens, read by ``llm/windows.py``: (model-name prefix, tokens), the
    # longest matching prefix wins; ``default_context_window`` for a model not in the table.
    context_windows: tuple[tuple[str, int], ...] = ()
    default_context_window: int = 128_000
    # Which models take images, read by ``llm/vision.py``: (model-name prefix,
    # takes images), the longest matching prefix wins; ``default_images`` for a model not in the
    # table. ``images_from_server``: the server says per model (Ollama's ``/api/show`` capabilities).
    # The setting ``images`` ("yes"/"no") overrides all three (an OpenAI-compatible server's model).
    image_models: tuple[tuple[str, bool], ...] = ()
    default_images: bool = False
    images_from_server: bool = False
    # Other wire APIs of the same provider, chosen by its setting ``api`` (read by the factory and
    # the providers page): (setting value, what the page calls it, "module:Class" of its adapter);
    # the profile's own ``adapter`` is the default API. OpenAI's Responses API.
    alternate_apis: tuple[tuple[str, str, str], ...] = ()
    # Prices of the provider's models, read by ``llm/prices.py`` (the person's ``agent.prices`` win):
    # (model name, price); a dated id ("claude-haiku-4-5-20251001") takes the longest name it starts with.
    prices: tuple[tuple[str, Price], ...] = ()
    # Published answer limits in tokens, read by ``extraction/budget.py``: (model-name prefix, tokens),
    # the longest matching prefix wins; a model not listed is asked for nothing extra.
    output_limits: tuple[tuple[str, int], ...] = ()
    # The API requires an answer limit on every request (Anthropic's ``max_tokens``), so the
    # session's setting is the limit a call runs under (``extraction/budget.py``).
    max_tokens_always_sent: bool = False

    @property
    def needs_api_key(self) -> bool:
        return bool(self.api_key_envs)

    @property
    def api_key_env(self) -> str | None:
        """The variable named in messages (the first of ``api_key_envs``)."""
        return self.api_key_envs[0] if self.api_key_envs else None


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
        # The same failure for someone already on the provider's settings page (its Test button):
        # it names the field to fix rather than sending them to "Settings → Providers".
        self.local_message = message


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


@dataclass(frozen=True)
class GenerationParams:
    """Sampling settings for one request (the session's, else Settings → Chat & agent).

    None means "the provider's own default": nothing is sent, so a server that rejects a
    parameter is never sent it unasked. Each adapter maps these to its API's names
    (Anthropic ``temperature``/``max_tokens``, OpenAI ``temperature``/``max_completion_tokens``
    or ``max_tokens`` on compatible servers, Ollama ``options.temperature``/``num_predict``,
    Gemini ``temperature``/``max_output_tokens``).
    """

    temperature: float | None = None
    max_output_tokens: int | None = None
    # ask the model to think first (the session's switch; off: nothing is
    # asked, and thinking a model does anyway is still shown apart from the answer).
    # ``reasoning_budget``: tokens it may think for (None: the provider's default); providers
    # that take a level instead map it (``reasoning_level``).
    reasoning: bool = False
    reasoning_budget: int | None = None

    @property
    def empty(self) -> bool:
        return self.temperature is None and self.max_output_tokens is None and not self.reasoning

    @property
    def reasoning_level(self) -> str:
        """The budget as the level OpenAI's ``reasoning_effort`` and Ollama's ``think`` take."""
        budget = self.reasoning_budget
        if budget is None:
            return "medium"
        return "low" if budget < 4096 else "medium" if budget < 16384 else "high"


class Provider(Protocol):
    profile: ProviderProfile
    config: ProviderConfig

    def stream(self, messages: list[Message], tools: list[ToolDef], *, system: str | None = None,
               response_schema: dict[str, Any] | None = None,
               params: GenerationParams | None = None) -> AsyncGenerator[StreamEvent, None]: ...

    async def list_models(self) -> list[str]: ...

    async def aclose(self) -> None: ...
