"""The main window fits the screen it opens on: a first start takes what a 1024×700 or 1280×800
screen has (frame included), a window restored from a larger monitor shrinks and moves onto a
smaller one, and one that fits stays where it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from cks_desktop.ui.window_fit import FRAME_GUESS, WANTED, Rect, fitted
from tests.ui.screens import run_on_screen



def test_a_window_that_fits_stays_where_it_was() -> None:
    area = Rect(0, 0, 1920, 1200)
    assert fitted(area, Rect(100, 80, 1280, 800), FRAME_GUESS) == Rect(100, 80, 1280, 800)


@pytest.mark.parametrize("screen", [(1024, 700), (1280, 800), (1366, 768)])
def test_a_first_start_takes_what_the_screen_has_frame_included(screen: tuple[int, int]) -> None:
    area = Rect(0, 0, *screen)
    got = fitted(area, Rect(0, 0, *WANTED), FRAME_GUESS)
    assert got.x >= 0 and got.y >= 0
    assert got.x + got.width + FRAME_GUESS[0] <= screen[0] and got.y + got.height + FRAME_GUESS[1] <= screen[1]
    assert got.width == min(WANTED[0], screen[0] - FRAME_GUESS[0])


def test_a_window_from_a_larger_monitor_moves_onto_the_smaller_one() -> None:
    area = Rect(0, 24, 1280, 776)  # a top panel of 24 px
    got = fitted(area, Rect(1500, 900, 1600, 1000), (2, 30))
    assert got.width == 1278 and got.height == 746 and got.x == 0 and got.y == 24


SHOW = """
import asyncio, sys, tempfile
from pathlib import Path
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
import qasync
from cks_desktop.paths import resolve
from cks_desktop.runtime import AppServices
from cks_desktop.secrets import SecretStore
from cks_desktop.ui.main_window import MainWindow

async def main():
    services = AppServices.open(resolve(Path(sys.argv[1])), secrets=SecretStore(secure=False))
    window = MainWindow(services)
    window.show()
    await asyncio.sleep(0)
    send = window.chat_panel.composer.send_button
    corner = send.mapTo(window, send.rect().bottomRight())
    import json
    print(json.dumps({"window": window.geometry().getRect(), "frame": window.frameGeometry().getRect(), "send": [corner.x(), corner.y()],
                      "status_bar": window.statusBar().isVisible()}), flush=True)
    await window.shutdown()

qasync.run(main())
"""


@pytest.mark.parametrize("screen", [(1024, 700), (1280, 800)])
def test_the_first_window_shows_the_composer_and_the_status_bar_on_a_small_screen(
        tmp_path: Path, screen: tuple[int, int]) -> None:
    shown = run_on_screen(tmp_path, screen, SHOW)
    x, y, w, h = shown["frame"]
    assert x >= 0 and y >= 0 and x + w <= screen[0] and y + h <= screen[1]
    w, h = shown["window"][2:]
    assert shown["send"][0] <= w and shown["send"][1] <= h  # Send is inside the window, so on the screen
    assert shown["status_bar"]
