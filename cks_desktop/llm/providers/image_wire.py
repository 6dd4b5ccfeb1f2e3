"""Images in each vendor's wire format, for the four adapters.

Only an ``ImagePart`` with its bytes filled in (``agent/images.py`` does that from the session's
store) goes out as an image; one without bytes — its stored copy is gone — and every image for
a model that takes none go out as their note, so a request never fails over an image.

Where the image goes:
- Anthropic: ``image`` blocks with a base64 source, inside the ``tool_result`` block's content
  for a tool's image (the API takes images there), in the user message for the person's.
- OpenAI-compatible: a ``tool`` message's content is text only, so a tool's images follow the
  turn's tool messages as one user message (``image_url`` with a ``data:`` URL) that names the
  call they belong to; the person's images are ``image_url`` parts of their message.
- Ollama: the message's ``images`` list (raw bytes; the SDK base64-encodes them), on the
  ``tool`` message for a tool's images and the user message for the person's.
- Gemini: ``inline_data`` parts, after the turn's ``function_response`` parts.

The strings are encoded before ``request()`` runs, in a worker thread (``vision.images_ready``
with the adapter's ``image_encoding``: "base64" or "data_url"), so building a request with ten
1 MB images on the event loop is a few cache lookups. Ollama and Gemini take raw bytes; their
SDKs encode them when they serialise the request.
"""

from __future__ import annotations

from typing import Any

from cks_desktop.llm.messages import ImagePart, ToolResultPart
from cks_desktop.llm.vision import image_note
from cks_desktop.tools.images import base64_of, data_url_of


def usable(part: ImagePart, images: bool) -> bool:
    """Whether ``part`` goes out as an image (else as its note)."""
    return images and bool(part.data)


def note(part: ImagePart) -> str:
    return image_note(part) if part.data else f"{part.note} (not shown: the stored image is missing)"


def b64(part: ImagePart) -> str:
    """Encoded once per image while it is recent (``tools/images.base64_of``): every turn re-sends it."""
    return base64_of(part.image_id, part.data)


def data_url(part: ImagePart) -> str:
    """The ``data:`` URL OpenAI's APIs take, built once per image while it is recent."""
    return data_url_of(part.image_id, part.media_type, part.data)


def anthropic_image(part: ImagePart) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": part.media_type, "data": b64(part)}}


def openai_image(part: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": data_url(part)}}


def gemini_image(part: ImagePart) -> dict[str, Any]:
    return {"inline_data": {"mime_type": part.media_type, "data": part.data}}


def result_caption(result: ToolResultPart) -> str:
    """Names the call a following message's images belong to (OpenAI-compatible, Gemini)."""
    count = len(result.images)
    return f"The {'image' if count == 1 else f'{count} images'} returned by {result.name} (call {result.call_id}):"


def openai_result_images(results: list[ToolResultPart], images: bool) -> dict[str, Any] | None:
    """The user message that carries a turn's tool images to an OpenAI-compatible model, or None."""
    content: list[dict[str, Any]] = []
    for result in results:
        shown = [p for p in result.images if usable(p, images)]
        if not shown:
            continue
        content.append({"type": "text", "text": result_caption(result)})
        content += [openai_image(p) for p in shown]
    return {"role": "user", "content": content} if content else None
