"""Dialogs and secondary windows open whole on the screen, centred on the window they belong to:
the MCP server editor with its OAuth fields (taller than a 700-pixel screen) keeps Save on the
screen, and the document viewer, which asked for a place half off the screen, is brought back;
a place the person gives a window later is kept. The passage mark in the document viewer follows
a theme switch."""

from __future__ import annotations

from pathlib import Path

import pytest

from cks_desktop.ui.window_fit import Rect, centred_on
from tests.ui.screens import run_on_screen



def test_a_dialog_is_centred_on_its_window_and_kept_inside_the_screen() -> None:
    area = Rect(0, 0, 1024, 700)
    got = centred_on(Rect(0, 0, 1024, 700), area, (600, 400), (8, 40))
    assert (got.x, got.y) == ((1024 - 608) // 2, (700 - 440) // 2)
    tall = centred_on(Rect(0, 0, 1024, 700), area, (640, 1100), (8, 40))
    assert tall.y == 0 and tall.height == 660  # shrunk to what the screen has, frame included
    edge = centred_on(Rect(700, 400, 600, 500), area, (500, 400), (8, 40))  # an owner partly off screen
    assert edge.x + edge.width + 8 <= 1024 and edge.y + edge.height + 40 <= 700


SHOW = """
import asyncio, sys, json
from pathlib import Path
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
import qasync
from cks_desktop.paths import resolve
from cks_desktop.runtime import AppServices
from cks_desktop.secrets import SecretStore
from cks_desktop.ui.main_window import MainWindow
from cks_desktop.ui.provenance.viewer import DocumentViewer
from cks_desktop.ui.settings.mcp_editor import McpServerEditor
from cks_desktop.ui.tasks import TaskTracker

def rect(w):
    return list(w.frameGeometry().getRect())

async def main():
    services = AppServices.open(resolve(Path(sys.argv[1])), secrets=SecretStore(secure=False))
    window = MainWindow(services)
    window.show()
    await asyncio.sleep(0)
    editor = McpServerEditor(services, TaskTracker(), parent=window)
    editor.transport_box.setCurrentIndex(editor.transport_box.findData("http"))
    editor.resize(700, 1100)  # what the form with its OAuth fields asks for
    editor.show()
    await asyncio.sleep(0)
    save = editor.save_button
    corner = save.mapTo(editor, save.rect().bottomRight())
    viewer = DocumentViewer(services.store, lambda coro: coro.close(), window)
    viewer.move(900, 600)  # where it once placed itself, beside the inspector
    viewer.show()
    await asyncio.sleep(0)
    first = rect(viewer)
    viewer.hide()
    viewer.move(20, 30)  # the person put it there
    viewer.show()
    await asyncio.sleep(0)
    print(json.dumps({"window": rect(window), "editor": rect(editor), "save": [corner.x(), corner.y()],
                      "editor_size": [editor.width(), editor.height()], "save_visible": save.isVisibleTo(editor),
                      "viewer": first, "viewer_again": rect(viewer)}), flush=True)
    editor.close(); viewer.close()
    await window.shutdown()

qasync.run(main())
"""


@pytest.mark.parametrize("screen", [(1024, 700), (1280, 800)])
def test_dialogs_open_whole_on_a_small_screen_centred_on_the_window(tmp_path: Path,
                                                                    screen: tuple[int, int]) -> None:
    shown = run_on_screen(tmp_path, screen, SHOW)
    for name in ("editor", "viewer"):  # frame geometry: the window and the frame around it
        x, y, w, h = shown[name]
        assert x >= 0 and y >= 0 and x + w <= screen[0] and y + h <= screen[1], (name, shown)
        wx, wy, ww, wh = shown["window"]
        assert abs((x + w / 2) - (wx + ww / 2)) <= 2 and abs((y + h / 2) - (wy + wh / 2)) <= 2 \
            or y == 0 or y + h == screen[1], (name, shown)  # centred, or as near as the screen allows
    assert shown["save_visible"] and shown["save"][1] <= shown["editor_size"][1]  # Save is on the screen
    assert shown["viewer_again"][:2] == [20, 30]  # a later show keeps the place the person chose


def test_the_passage_mark_follows_a_theme_switch(qtbot, qapp) -> None:
    from cks_desktop.ui import theme
    from cks_desktop.ui.provenance.viewer import DocumentViewer

    class Doc:
        id, name, media_type, pages = "d1", "notes.md", "text/markdown", 0
        text = "Notes on the Curies. Marie Curie worked in Paris."

        def page_of(self, _start: int) -> None:
            return None

    manager = theme.install(qapp, "light")
    viewer = DocumentViewer(None, lambda coro: coro.close())
    qtbot.addWidget(viewer)
    viewer.document = Doc()
    viewer.text.setPlainText(Doc.text)
    viewer.show_passage(21, 48)

    def mark() -> tuple[str, str]:
        [selection] = viewer.text.extraSelections()
        return selection.format.background().color().name(), selection.format.foreground().color().name()

    light = mark()
    assert light == (theme.color("passage_mark").name(), theme.color("text").name())
    manager.set_mode("dark")
    try:
        assert mark() == (theme.color("passage_mark").name(), theme.color("text").name()) != light
    finally:
        manager.set_mode("light")
