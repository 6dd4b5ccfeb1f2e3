"""Real image bytes for the image tests, made with the standard library."""

from __future__ import annotations

import struct
import zlib


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def make_png(width: int = 4, height: int = 3, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid RGB PNG of one colour (decodable by Qt, sniffable by ``tools/images.py``)."""
    row = b"\x00" + bytes(rgb) * width
    raw = row * height
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw))
            + _chunk(b"IEND", b""))


def make_gif(width: int = 2, height: int = 2) -> bytes:
    """A minimal GIF header + one-colour image (enough for sniffing)."""
    return (b"GIF89a" + struct.pack("<HH", width, height) + b"\x80\x00\x00" + b"\x00\x00\x00\xff\xff\xff"
            + b",\x00\x00\x00\x00" + struct.pack("<HH", width, height) + b"\x00\x02\x02D\x01\x00;")


def make_jpeg_header(width: int = 640, height: int = 480) -> bytes:
    """The start of a baseline JPEG (SOI, APP0, SOF0): what ``sniff`` reads for the size."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof0 + b"\xff\xd9"


def make_webp_vp8x(width: int = 300, height: int = 200) -> bytes:
    body = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00" + (width - 1).to_bytes(3, "little") \
        + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body
