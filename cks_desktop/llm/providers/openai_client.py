"""What both OpenAI adapters share: one ``AsyncOpenAI`` client per provider object, made on first use.

Chat Completions (``openai_compat``) and the Responses API (``openai_responses``) are two wire APIs
of the same SDK and server: the same key, base URL, timeout, retries, TLS trust, error mapping,
model list and close. Only the request and the stream differ, so only those live in each adapter.
"""

from __future__ import annotations

import openai

from cks_desktop.llm.errors import (
    ErrorContext, body_error, build, from_status, from_transport, requested, retry_after_from_headers,
    transport_in_chain, unexpected,
)
from cks_desktop.llm.profiles import OPENAI
from cks_desktop.llm.provider import ProviderConfig, ProviderError, ProviderProfile
from cks_desktop.llm.providers.base import Adapter, shared_tls


class OpenAIClientAdapter(Adapter):
    def __init__(self, config: ProviderConfig, profile: ProviderProfile = OPENAI) -> None:
        super().__init__(config, profile)
        self._client_obj: openai.AsyncOpenAI | None = None

    @property
    def base_url(self) -> str:
        return self.config.base_url or self.profile.default_base_url

    def _client(self) -> openai.AsyncOpenAI:
        if self._closed:
            raise RuntimeError("this provider was closed")
        if self._client_obj is None:
            self._client_obj = openai.AsyncOpenAI(
                api_key=self.config.api_key or "not-needed", base_url=self.base_url,
                timeout=self.config.timeout, max_retries=0,  # Adapter.stream retries (llm/retry.py)
                http_client=openai.DefaultAsyncHttpxClient(verify=shared_tls("httpx2")))
        return self._client_obj

    def map_error(self, exc: BaseException, *, started: bool) -> ProviderError:
        return map_openai(exc, self.error_context(), started=started)

    async def _list_models(self) -> list[str]:
        return [model.id async for model in self._client().models.list()]

    async def _aclose(self) -> None:
        if self._client_obj is not None:
            await self._client_obj.close()
            self._client_obj = None


# -- OpenAI (and compatible servers) -----------------------------------------------------------

_OPENAI_CODES = {
    "invalid_api_key": "auth",
    "model_not_found": "model_not_found",
    "rate_limit_exceeded": "rate_limited",
    "insufficient_quota": "rate_limited",
    "server_error": "server_error",
}


def map_openai(exc: BaseException, ctx: ErrorContext, *, started: bool) -> ProviderError:
    import openai

    if isinstance(exc, openai.APIStatusError):
        etype, message = body_error(exc.body)
        code = exc.code or ""
        hint = _OPENAI_CODES.get(code)
        if code == "context_length_exceeded":
            hint = "prompt_too_long"
        if exc.status_code in (401, 403):
            hint = "auth"
        return from_status(ctx, exc.status_code, message=message or exc.message, hint=hint,
                           retry_after=retry_after_from_headers(exc.response.headers), request=requested(exc))
    if isinstance(exc, openai.APITimeoutError):
        return build(ctx, "timeout")
    if isinstance(exc, openai.APIConnectionError):
        return transport_in_chain(ctx, exc, started) or build(ctx, "stream_cut" if started else "connection")
    if isinstance(exc, openai.APIError):  # an ``{"error": ...}`` object inside the stream
        etype, message = body_error(exc.body)
        hint = _OPENAI_CODES.get(exc.code or "") or _OPENAI_CODES.get(etype or "") or "server_error"
        if "overload" in (message or "").lower():
            hint = "overloaded"
        return from_status(ctx, None, message=message or exc.message, hint=hint)
    return from_transport(ctx, exc, started=started) or unexpected(ctx, exc)
