"""A huge PNG's thumbnail is made without stalling the GUI thread: an 8,000 × 8,000 PNG (decoded,
244 MiB) in a chat's image strip; a 10 ms timer on the GUI thread records its longest gap while
the thumbnail is made, and the thumbnail ends up a small picture. Waits are on signals."""

from __future__ import annotations

import hashlib
import time

from PySide6.QtCore import QTimer

from cks_desktop.llm.messages import ImagePart
from cks_desktop.ui.chat.image_view import THUMB_PX, ImageStrip
from tests.png import make_png

MAX_STALL_S = 0.25  # was ~1.4 s: the whole image decoded and scaled on the GUI thread


def test_a_huge_png_thumbnail_never_stalls_the_gui_thread(qtbot) -> None:
    data = make_png(8000, 8000)
    part = ImagePart(image_id=hashlib.sha256(data).hexdigest(), media_type="image/png", width=8000, height=8000,
                     size=len(data), data=data)
    gaps: list[float] = []
    last = [time.monotonic()]

    def tick() -> None:
        now = time.monotonic()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    timer.start()
    qtbot.waitUntil(lambda: len(gaps) >= 3, timeout=5000)
    strip = ImageStrip()
    qtbot.addWidget(strip)
    gaps.clear()
    last[0] = time.monotonic()
    strip.set_images([part])
    [thumb] = strip.thumbs
    if getattr(thumb, "pending", False):
        with qtbot.waitSignal(thumb.ready, timeout=120_000):
            pass
    qtbot.waitUntil(lambda: len(gaps) >= 2, timeout=5000)  # a tick after the thumbnail was made
    timer.stop()
    assert thumb.decoded and max(thumb.iconSize().width(), thumb.iconSize().height()) == THUMB_PX
    print(f"longest GUI-thread stall {max(gaps):.3f} s")
    assert max(gaps) < MAX_STALL_S, f"longest GUI-thread stall {max(gaps):.3f} s"


def test_an_image_over_the_allocation_limit_says_it_is_too_large(qtbot) -> None:
    data = make_png(9000, 9000)  # 309 MiB decoded: over the 256 MiB limit
    part = ImagePart(image_id="x" * 64, media_type="image/png", width=9000, height=9000, size=len(data), data=data)
    strip = ImageStrip()
    qtbot.addWidget(strip)
    strip.set_images([part])
    [thumb] = strip.thumbs
    if thumb.pending:
        with qtbot.waitSignal(thumb.ready, timeout=60_000):
            pass
    assert not thumb.decoded and thumb.text() == "image too large to show"
