"""Whether the chosen model takes images: one answer for the adapters,
the agent loop and the composer.

First match wins:

1. the setting ``images`` in the provider's options ("yes"/"no"; Settings → Providers or
   ``settings.json``): the person knows what their OpenAI-compatible server's model reads;
2. a provider whose server says per model (``images_from_server``: Ollama's ``/api/show``
   lists ``"vision"`` among a model's ``capabilities``), asked once per provider object
   and only when a request has an image in it (a chat without images never asks);
3. the profile's table of known vision models (longest model-name prefix), else
   ``default_images``.

``accepts_images`` is async because of (2) and caches per provider object; a failed or slow
lookup (2 s) answers "no", so the model gets the note it always got, never an error.
``sends_images`` is what an adapter's synchronous ``request()`` reads: the setting, the
table, or what an earlier lookup found.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Iterable
from typing import Any

from cks_desktop.llm.messages import ImagePart, Message, ToolResultPart
from cks_desktop.tools.images import ENCODINGS, encode_for, is_encoded

log = logging.getLogger(__name__)
LOOKUP_TIMEOUT_S = 2.0
_YES = {"yes", "true", "on", "1"}
_NO = {"no", "false", "off", "0"}

_CACHE: "weakref.WeakKeyDictionary[Any, bool]" = weakref.WeakKeyDictionary()


def _setting(options: dict[str, Any] | None) -> bool | None:
    value = (options or {}).get("images")
    if isinstance(value, bool):
        return value
    text = str(value or "").strip().lower()
    if text in _YES:
        return True
    if text in _NO:
        return False
    return None


def known_images(profile: Any, model: str, options: dict[str, Any] | None = None) -> bool | None:
    """Whether ``model`` takes images without asking the server; None: only the server can say."""
    setting = _setting(options)
    if setting is not None:
        return setting
    if profile.images_from_server:
        return None
    name = (model or "").lower()
    best: tuple[int, bool] | None = None
    for prefix, takes in profile.image_models:
        if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), takes)
    return best[1] if best is not None else bool(profile.default_images)


def sends_images(provider: Any) -> bool:
    """What a request built now does: images as images (True) or their notes (False)."""
    try:
        cached = _CACHE.get(provider)
    except TypeError:
        cached = None
    if cached is not None:
        return cached
    config = provider.config
    return bool(known_images(provider.profile, config.model, config.options))


async def accepts_images(provider: Any) -> bool:
    """Whether ``provider``'s model takes images, asking the server once when only it can say."""
    try:
        cached = _CACHE.get(provider)
    except TypeError:
        cached = None
    if cached is not None:
        return cached
    config = provider.config
    known = known_images(provider.profile, config.model, config.options)
    if known is not None:
        return known
    found = False
    ask = getattr(provider, "reported_capabilities", None)
    if ask is not None:
        try:
            capabilities = await asyncio.wait_for(ask(), LOOKUP_TIMEOUT_S)
            found = "vision" in {str(c).lower() for c in capabilities or ()}
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - best effort: the note is the safe answer
            log.info("could not ask %s whether %s takes images: %s", provider.profile.display_name,
                     config.model, exc)
    try:
        _CACHE[provider] = found
    except TypeError:
        pass
    return found


def has_images(messages: Iterable[Message]) -> bool:
    """Whether any message (or tool result in one) carries an image."""
    for message in messages:
        for part in message.parts:
            if isinstance(part, ImagePart) or (isinstance(part, ToolResultPart) and part.images):
                return True
    return False


def _image_parts(messages: Iterable[Message]) -> list[ImagePart]:
    out: list[ImagePart] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, ImagePart):
                out.append(part)
            elif isinstance(part, ToolResultPart):
                out += part.images
    return out


async def images_ready(provider: Any, messages: Iterable[Message]) -> None:
    """Before an adapter builds a request: settle the answer when the request has an image, and
    encode the images the way the adapter sends them (its ``image_encoding``: "base64" or
    "data_url") in a worker thread, so its synchronous ``request()`` never encodes megabytes on
    the event loop (images already encoded, the common case on later turns, cost a lookup)."""
    messages = list(messages)
    if not has_images(messages) or not await accepts_images(provider):
        return
    encoding = str(getattr(provider, "image_encoding", "") or "")
    if encoding not in ENCODINGS:
        return
    todo = {(p.image_id, p.media_type, len(p.data)): p.data for p in _image_parts(messages)  # no hash of bytes
            if p.data and not is_encoded(p.image_id, p.media_type, len(p.data), encoding)}
    if todo:
        await asyncio.to_thread(encode_for, [(d, t, data) for (d, t, _n), data in todo.items()], encoding)


def refusal_text(model: str, display_name: str) -> str:
    """The sentence for an image the person attached for a model that does not take images."""
    return (f"{model} ({display_name}) does not take images: remove the image or choose a model that "
            "reads images (for an OpenAI-compatible server's model, set \"images\" to \"yes\" in "
            "Settings → Providers if it does).")


def refusal(provider: Any) -> str:
    return refusal_text(provider.config.model, provider.profile.display_name)


def image_note(part: ImagePart) -> str:
    """What a model without images reads in place of the person's image."""
    return f"{part.note} (not shown: this model does not take images)"


def image_chars(part: ImagePart) -> int:
    """What an image costs a request, in the characters the context estimate counts (about four
    a token): the vendors bill roughly width × height / 750 tokens, scaled down to at most about
    1,600 tokens; a reference without bytes is sent as its note."""
    if not part.data:
        return len(part.note) + 40
    tokens = min(1_600, max(85, part.width * part.height // 750))
    return tokens * 4
