"""Render the app icon SVG into every raster size and container the platforms need.

Why a script and not exported files: the SVG stays the single source, so a changed icon can never
leave a stale 16 px PNG or .ico behind. Qt's own SVG renderer does the drawing (it is already a
dependency), and the two container formats are written here because Qt cannot write them with
several sizes in one file:

* ``.ico`` (Windows): classic 32-bit DIB entries for the small sizes, which every Windows tool reads,
  and a PNG entry for 256 px, which is what Windows Vista and later expect for that size.
* ``.icns`` (macOS): PNG entries under the OSTypes macOS reads for 16…1024 px (including @2x).

Output layout under ``--out`` (default ``build/icons``)::

    hicolor/<N>x<N>/apps/cks-desktop.png   N in 16 22 24 32 48 64 128 256 512
    hicolor/scalable/apps/cks-desktop.svg
    cks-desktop.ico  cks-desktop.icns  cks-desktop.png (256 px)

Run: ``python scripts/render_icons.py [--svg cks_desktop/resources/cks-desktop.svg] [--out build/icons]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ICON_NAME = "cks-desktop"
HICOLOR_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 20, 24, 32, 40, 48, 64, 128, 256)
# OSType -> pixel size. icp4/icp5/icp6 are the PNG-capable small types; ic11…ic14 are @2x variants.
ICNS_TYPES = (
    (b"icp4", 16), (b"icp5", 32), (b"icp6", 64), (b"ic07", 128), (b"ic08", 256), (b"ic09", 512),
    (b"ic10", 1024), (b"ic11", 32), (b"ic12", 64), (b"ic13", 256), (b"ic14", 512),
)


class Renderer:
    """Draws the SVG at any size into a straight-alpha ARGB32 QImage, caching by size."""

    def __init__(self, svg: Path) -> None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from PySide6.QtGui import QGuiApplication
        from PySide6.QtSvg import QSvgRenderer

        self._app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
        self._svg = QSvgRenderer(str(svg))
        if not self._svg.isValid():
            raise SystemExit(f"render_icons: {svg} is not a valid SVG")
        self._cache: dict[int, object] = {}

    def image(self, size: int):  # -> QImage
        if size not in self._cache:
            from PySide6.QtCore import QRectF, Qt
            from PySide6.QtGui import QImage, QPainter

            img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
            img.fill(Qt.GlobalColor.transparent)
            painter = QPainter(img)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            self._svg.render(painter, QRectF(0, 0, size, size))
            painter.end()
            self._cache[size] = img.convertToFormat(QImage.Format.Format_ARGB32)
        return self._cache[size]

    def png(self, size: int) -> bytes:
        from PySide6.QtCore import QBuffer, QByteArray, QIODevice

        data = QByteArray()
        buf = QBuffer(data)
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        if not self.image(size).save(buf, "PNG"):
            raise SystemExit(f"render_icons: could not encode a {size} px PNG")
        buf.close()
        return bytes(data.data())

    def bgra_rows(self, size: int) -> list[bytes]:
        """Top-down rows of B,G,R,A bytes (ARGB32 in little-endian memory order)."""
        img = self.image(size)
        bits = bytes(img.constBits())
        stride = img.bytesPerLine()
        rows = [bits[y * stride: y * stride + size * 4] for y in range(size)]
        if sys.byteorder != "little":  # ARGB32 is a native-endian 32-bit word
            rows = [b"".join(r[i:i + 4][::-1] for i in range(0, len(r), 4)) for r in rows]
        return rows


def ico_bytes(r: Renderer, sizes: tuple[int, ...] = ICO_SIZES) -> bytes:
    """ICONDIR + ICONDIRENTRYs, then each image (DIB below 256 px, PNG at 256 px)."""
    images = [_ico_dib(r, s) if s < 256 else r.png(s) for s in sizes]
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries = b""
    for size, data in zip(sizes, images):
        dim = 0 if size >= 256 else size  # 0 means 256 in this one-byte field
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset)
        offset += len(data)
    return header + entries + b"".join(images)


def _ico_dib(r: Renderer, size: int) -> bytes:
    """BITMAPINFOHEADER (height doubled: XOR image + AND mask), bottom-up BGRA rows, 1-bit mask."""
    rows = r.bgra_rows(size)
    mask_stride = ((size + 31) // 32) * 4
    mask_rows = []
    for row in rows:
        bits = bytearray(mask_stride)
        for x in range(size):
            if row[x * 4 + 3] == 0:  # fully transparent pixel: mask bit set
                bits[x // 8] |= 0x80 >> (x % 8)
        mask_rows.append(bytes(bits))
    pixels = b"".join(reversed(rows))
    mask = b"".join(reversed(mask_rows))
    header = struct.pack("<IiiHHIIiiII", 40, size, size * 2, 1, 32, 0, len(pixels) + len(mask), 0, 0, 0, 0)
    return header + pixels + mask


def icns_bytes(r: Renderer) -> bytes:
    """'icns' + total length, then (OSType, length incl. its 8-byte header, PNG data) elements."""
    body = b"".join(ostype + struct.pack(">I", len(png) + 8) + png
                    for ostype, png in ((t, r.png(s)) for t, s in ICNS_TYPES))
    return b"icns" + struct.pack(">I", len(body) + 8) + body


def render(svg: Path, out: Path) -> list[Path]:
    r = Renderer(svg)
    written: list[Path] = []

    def write(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)

    for size in HICOLOR_SIZES:
        write(out / "hicolor" / f"{size}x{size}" / "apps" / f"{ICON_NAME}.png", r.png(size))
    scalable = out / "hicolor" / "scalable" / "apps" / f"{ICON_NAME}.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(svg, scalable)
    written.append(scalable)
    write(out / f"{ICON_NAME}.png", r.png(256))
    write(out / f"{ICON_NAME}.ico", ico_bytes(r))
    write(out / f"{ICON_NAME}.icns", icns_bytes(r))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--svg", type=Path, default=ROOT / "cks_desktop" / "resources" / f"{ICON_NAME}.svg")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "icons")
    args = parser.parse_args(argv)
    files = render(args.svg, args.out)
    print(f"render_icons: wrote {len(files)} files under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
