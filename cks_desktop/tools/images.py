"""Image bytes the chat accepts, and what they are. Qt-free on purpose.

An image reaches the chat from an MCP tool result (base64 in an ``ImageContent``), from the
person (paste, drop, ``chat --image``), or from the transcript. Whatever the sender *says* the
type is, the bytes decide: ``sniff`` reads the magic number and the header's width and height
(PNG, JPEG, GIF, WebP — what every vision API takes) without a decoding library, so the core
never needs Qt or Pillow and a malformed file costs a few header reads, never a decoder run.
Anything else, a file over ``MAX_IMAGE_BYTES``, or a header that does not hold together is
refused with one sentence (``ImageRefused``).

Nothing here ever fetches: images arrive as bytes, never as a URL a model or server chose.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

MAX_IMAGE_BYTES = 20 * 1024 * 1024  # what the vision APIs take at most (Anthropic 5 MB, OpenAI 20 MB)
MAX_SIDE = 30_000  # pixels: a header claiming more is not a picture anyone sends to a model
MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


class ImageRefused(ValueError):
    """Bytes that are not an image the chat takes; ``str(exc)`` is one sentence for the person."""


@dataclass(frozen=True)
class ImageBlob:
    """Validated image bytes: the type the bytes say, and the size from the header."""

    data: bytes = field(repr=False)
    media_type: str
    width: int
    height: int

    @property
    def digest(self) -> str:
        """The content address: sha256 of the bytes (one stored copy per session)."""
        return hashlib.sha256(self.data).hexdigest()

    @property
    def size(self) -> int:
        return len(self.data)


def _png(data: bytes) -> tuple[int, int]:
    if len(data) < 24 or data[12:16] != b"IHDR":
        raise ImageRefused("The PNG image has no header (IHDR), so it is not a readable picture.")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def _gif(data: bytes) -> tuple[int, int]:
    if len(data) < 10:
        raise ImageRefused("The GIF image ends inside its header.")
    width, height = struct.unpack("<HH", data[6:10])
    return int(width), int(height)


def _webp(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    raise ImageRefused("The WebP image has no frame header the app can read.")


_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg(data: bytes) -> tuple[int, int]:
    """Walk the JPEG segments to the first start-of-frame (which holds the size)."""
    pos = 2
    end = len(data)
    while pos + 4 <= end:
        if data[pos] != 0xFF:
            break
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            pos += 2
            continue
        length = int.from_bytes(data[pos + 2:pos + 4], "big")
        if length < 2:
            break
        if marker in _SOF:
            if pos + 9 > end:
                break
            height, width = struct.unpack(">HH", data[pos + 5:pos + 9])
            return int(width), int(height)
        if marker == 0xDA:  # start of scan before any frame header
            break
        pos += 2 + length
    raise ImageRefused("The JPEG image has no frame header the app can read.")


def sniff(data: bytes, *, claimed: str | None = None) -> ImageBlob:
    """The image in ``data``, or ``ImageRefused`` with the reason in one sentence.

    ``claimed``: the type the sender named (an MCP ``mimeType``); only the bytes count, so a
    PNG labelled ``image/jpeg`` is stored as the PNG it is, and a script labelled ``image/png``
    is refused."""
    if not data:
        raise ImageRefused("The image is empty.")
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageRefused(f"The image is {len(data) / 1024 / 1024:.1f} MB; the chat takes images up to "
                           f"{MAX_IMAGE_BYTES // 1024 // 1024} MB.")
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        media, (width, height) = "image/png", _png(data)
    elif data.startswith(b"\xff\xd8\xff"):
        media, (width, height) = "image/jpeg", _jpeg(data)
    elif data[:6] in (b"GIF87a", b"GIF89a"):
        media, (width, height) = "image/gif", _gif(data)
    elif data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        media, (width, height) = "image/webp", _webp(data)
    else:
        named = f" (it says {claimed})" if claimed else ""
        raise ImageRefused(f"This is not a PNG, JPEG, GIF or WebP image{named}; the chat takes only those.")
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        raise ImageRefused(f"The image's header says it is {width}×{height} pixels, which is not a picture "
                           "the chat can show.")
    return ImageBlob(data, media, width, height)


def from_base64(text: str, *, claimed: str | None = None) -> ImageBlob:
    """``sniff`` for base64 text (an MCP image block); bad base64 is refused like bad bytes.
    The length is checked before decoding, so a 500 MB string is refused without a copy."""
    if len(text) > MAX_IMAGE_BYTES * 4 // 3 + 8:
        raise ImageRefused(f"The image is larger than {MAX_IMAGE_BYTES // 1024 // 1024} MB; the chat takes "
                           "images up to that.")
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ImageRefused("The image's data is not valid base64.") from None
    blob = sniff(data, claimed=claimed)
    if len(text) == 4 * ((len(data) + 2) // 3):  # canonical: the same text an encoder writes
        remember_base64(blob.digest, blob.size, text)
    return blob


# Encoded images, by content address: a request re-sends every image of the chat each turn, and
# encoding is ~5 ms per MB; an MCP image arrives as base64 already. ``encode_for`` fills the
# caches from a worker thread before a request is built (``llm/vision.images_ready``), so the
# adapter's ``request()`` on the event loop only looks the strings up. Two kinds: the bare base64
# (Anthropic) and the ``data:`` URL (OpenAI's APIs), each bounded, least recently used first out.
B64_CACHE_BYTES = 64 * 1024 * 1024


class _Encoded:
    """A bounded LRU of strings keyed by (sha256, size[, media type]); safe across threads."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._items: "OrderedDict[tuple[str, ...], str]" = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> str | None:
        with self._lock:
            text = self._items.get(key)
            if text is not None:
                self._items.move_to_end(key)
            return text

    def put(self, key: tuple[str, ...], text: str) -> None:
        with self._lock:
            if key in self._items or len(text) > self.limit:
                return
            self._items[key] = text
            self._total += len(text)
            while self._total > self.limit and self._items:
                _, dropped = self._items.popitem(last=False)
                self._total -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._total = 0


_B64 = _Encoded(B64_CACHE_BYTES)
_URLS = _Encoded(B64_CACHE_BYTES)
ENCODINGS = ("base64", "data_url")


def remember_base64(digest: str, size: int, text: str) -> None:
    """Keep ``text`` (the base64 of the ``size`` bytes whose sha256 is ``digest``) for ``base64_of``."""
    _B64.put((digest, str(size)), text)


def base64_of(digest: str, data: bytes) -> str:
    """The base64 text of ``data`` (whose sha256 is ``digest``), encoded once while it is recent."""
    key = (digest, str(len(data)))
    text = _B64.get(key)
    if text is None:
        text = base64.b64encode(data).decode("ascii")
        _B64.put(key, text)
    return text


def data_url_of(digest: str, media_type: str, data: bytes) -> str:
    """``data:<type>;base64,…`` of ``data``, built once while it is recent (OpenAI's image parts).
    The bare base64 is not kept beside it: one copy per image is enough."""
    key = (digest, str(len(data)), media_type)
    url = _URLS.get(key)
    if url is None:
        b64 = _B64.get((digest, str(len(data)))) or base64.b64encode(data).decode("ascii")
        url = f"data:{media_type};base64,{b64}"
        _URLS.put(key, url)
    return url


def is_encoded(digest: str, media_type: str, size: int, encoding: str) -> bool:
    if encoding == "data_url":
        return _URLS.get((digest, str(size), media_type)) is not None
    return _B64.get((digest, str(size))) is not None


def encode_for(images: "Iterable[tuple[str, str, bytes]]", encoding: str) -> None:
    """Encode (digest, media type, bytes) triples the way a request will need them; meant for a
    worker thread (``asyncio.to_thread``), so building the request on the loop is a lookup."""
    for digest, media_type, data in images:
        if encoding == "data_url":
            data_url_of(digest, media_type, data)
        elif encoding == "base64":
            base64_of(digest, data)


def clear_encoded() -> None:
    """Forget every encoded image (tests and the bench: a first turn)."""
    _B64.clear()
    _URLS.clear()


def describe(blob: ImageBlob) -> str:
    """``image/png, 16×16, 2,048 bytes``: how notes and rows name an image."""
    return f"{blob.media_type}, {blob.width}×{blob.height}, {blob.size:,} bytes"
