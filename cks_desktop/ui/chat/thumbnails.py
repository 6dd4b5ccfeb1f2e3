"""Decoding an image for a thumbnail: scaled while it is read, bounded, and off the GUI thread
when it is big.

Why: an 8,000 × 8,000 PNG decoded with ``QImage.fromData`` and then scaled took ~1.4 s and
~545 MB on the GUI thread per thumbnail (the whole image, then its scaled copy, then a pixmap).
Here ``QImageReader`` reads it with ``setScaledSize`` (JPEG decodes straight at the small size;
PNG, which cannot, is decoded and scaled inside the reader, so only the small image is kept) and
``setAllocationLimit`` (``ALLOCATION_MB``: a bigger image is not decoded at all and its chip says
it is too large to show). An image whose header says it has more than ``SYNC_PIXELS`` pixels is
decoded on one worker thread (one at a time, so at most one big decode is in memory); the
thumbnail shows a placeholder until the small ``QImage`` comes back, and only then becomes a
``QPixmap`` on the GUI thread (pixmaps belong to it). Small images decode at once, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from enum import Enum

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QObject, QSize, Qt, Signal
from PySide6.QtGui import QImage, QImageReader

ALLOCATION_MB = 256  # the most one decode may allocate (an 8,000 × 8,000 RGBA image is 244 MiB)
SYNC_PIXELS = 1_000_000  # up to this many pixels (4 MB decoded) an image is decoded on the GUI thread

_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cks-thumbnails")


class Outcome(Enum):
    """What decoding gave: a picture, bytes no reader understands, or an image over the limit."""

    DECODED = "decoded"
    UNREADABLE = "unreadable"
    TOO_LARGE = "too large"


def _reader(data: bytes) -> tuple[QImageReader, QBuffer]:
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    reader.setAllocationLimit(ALLOCATION_MB)
    return reader, buffer


def header_size(data: bytes) -> QSize:
    """The image's size from its header (invalid when no reader knows the bytes); reads no pixels."""
    reader, _buffer = _reader(data)
    return reader.size()


def decode_scaled(data: bytes, px: int) -> tuple[Outcome, QImage | None]:
    """The image fitted into ``px`` × ``px`` (never enlarged), read at that size; safe on any thread."""
    if not data:
        return Outcome.UNREADABLE, None
    reader, _buffer = _reader(data)
    size = reader.size()
    if size.isValid() and size.width() * size.height() * 4 > ALLOCATION_MB * 1024 * 1024:
        return Outcome.TOO_LARGE, None
    if size.isValid() and (size.width() > px or size.height() > px):
        reader.setScaledSize(size.scaled(px, px, Qt.AspectRatioMode.KeepAspectRatio))
    image = reader.read()
    if image.isNull():
        too_large = reader.error() == QImageReader.ImageReaderError.InvalidDataError and size.isValid()
        return (Outcome.TOO_LARGE if too_large and "allocation" in reader.errorString().lower()
                else Outcome.UNREADABLE), None
    return Outcome.DECODED, image


class _Delivery(QObject):
    """Carries a worker's result to the GUI thread (a queued signal of an object living there)."""

    done = Signal(object, object)  # Outcome, QImage | None


def decode_later(data: bytes, px: int, parent: QObject,
                 then: Callable[[Outcome, QImage | None], None]) -> None:
    """Decode on the worker; ``then(outcome, image)`` runs on the GUI thread, unless ``parent``
    was deleted meanwhile (the result is then dropped)."""
    delivery = _Delivery(parent)
    delivery.done.connect(then)

    def work() -> None:
        outcome, image = decode_scaled(data, px)
        try:
            delivery.done.emit(outcome, image)
        except RuntimeError:  # the thumbnail (and its delivery) was deleted before the decode ended
            pass

    _pool.submit(work)
