"""How many tokens one request to a provider's model may hold.

The answer, first match wins:

1. the setting ``context_window`` in the provider's options (Settings → Providers, or a
   test): the person knows best, e.g. a gateway that serves a smaller window;
2. for a provider whose window is what the app sends (Ollama's ``num_ctx``: Ollama
   silently drops the start of a longer prompt), the configured ``num_ctx``, capped by
   the model's own ``context_length`` when the server reports it (``/api/show``);
3. what the server reports for the model (an OpenAI-compatible server's model list:
   vLLM's ``max_model_len``, OpenRouter's/LM Studio's ``context_length``, llama.cpp's
   ``meta.n_ctx_train``), asked once per provider object, best effort;
4. the profile's table of known windows (longest model-name prefix), else its default.

``window_for`` is async because of (2)/(3); its result is cached per provider object,
so a chat asks the server at most once. A failed or slow lookup (2 s) falls back to
the table, never to an error. The loop asks only once a request reaches an eighth of the known
window (``needs_lookup``): a short chat never sends the extra request.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any, TYPE_CHECKING

if TYPE_CHECKING:
    from cks_desktop.llm.provider import Provider

log = logging.getLogger(__name__)
LOOKUP_TIMEOUT_S = 2.0

_CACHE: "weakref.WeakKeyDictionary[Any, int]" = weakref.WeakKeyDictionary()


def _positive(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def known_window(profile: Any, model: str, options: dict[str, Any] | None = None) -> int:
    """The window without asking the server: the setting, ``num_ctx``, the table, the default."""
    opts = options or {}
    setting = _positive(opts.get("context_window"))
    if setting:
        return setting
    if "num_ctx" in getattr(profile, "setting_options", ()):
        return _positive(opts.get("num_ctx")) or int(profile.default_context_window)
    name = (model or "").lower()
    best: tuple[int, int] | None = None
    for prefix, tokens in profile.context_windows:
        if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), tokens)
    if best is not None:
        return best[1]
    return int(profile.default_context_window)


def looked_up(provider: "Provider") -> int | None:
    """The window ``window_for`` found for ``provider`` before, if it was asked."""
    try:
        return _CACHE.get(provider)
    except TypeError:
        return None


def known_window_for(provider: "Provider") -> int:
    """The window without asking the server (or what an earlier lookup found)."""
    found = looked_up(provider)
    if found is not None:
        return found
    config = provider.config
    return known_window(provider.profile, config.model, config.options or {})


def needs_lookup(provider: Any, tokens: int) -> bool:
    """Worth asking the server: the request reached half the known window, and no lookup yet."""
    options = provider.config.options or {}
    return (looked_up(provider) is None and not _positive(options.get("context_window"))
            and hasattr(provider, "reported_context_window") and tokens * 8 >= known_window_for(provider))


async def window_for(provider: "Provider") -> int:
    """The window of ``provider``'s configured model in tokens (cached per provider object)."""
    try:
        cached = _CACHE.get(provider)
    except TypeError:  # an object that cannot be weakly referenced: no cache
        cached = None
    if cached is not None:
        return cached
    config = provider.config
    options = config.options or {}
    window = known_window(provider.profile, config.model, options)
    if not _positive(options.get("context_window")):
        reported = await _reported(provider)
        if reported:
            if "num_ctx" in getattr(provider.profile, "setting_options", ()):
                window = min(window, reported)  # num_ctx above the model's own limit is capped by it
            else:
                window = reported
    try:
        _CACHE[provider] = window
    except TypeError:
        pass
    return window


async def _reported(provider: "Provider") -> int | None:
    ask = getattr(provider, "reported_context_window", None)
    if ask is None:
        return None
    try:
        return _positive(await asyncio.wait_for(ask(), LOOKUP_TIMEOUT_S))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - a lookup is best effort; the table answers instead
        log.info("the context window of %s could not be read: %s", config_name(provider), exc)
        return None


def config_name(provider: "Provider") -> str:
    return f"{provider.config.name}/{provider.config.model}"


def reported_in_listing(entry: dict[str, Any]) -> int | None:
    """A model's window from one entry of an OpenAI-compatible ``/models`` listing, if it says."""
    for key in ("context_length", "max_model_len", "max_context_length", "context_window"):
        value = _positive(entry.get(key))
        if value:
            return value
    meta = entry.get("meta")
    if isinstance(meta, dict):
        return _positive(meta.get("n_ctx_train")) or _positive(meta.get("n_ctx"))
    return None
