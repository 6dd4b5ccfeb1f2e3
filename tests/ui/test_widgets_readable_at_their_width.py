"""Widgets that keep their words readable at their usual width, held in place by real widgets.

The composer at the chat's usual width keeps its pickers and Send readable; an image chip shows
its picture, not a greyed square; the person's image sits under their bubble, above its actions;
the prices table's model heading is not cut; the MCP editor offers only the OAuth fields the
chosen sign-in uses; File → Share with other apps… opens that settings page.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QColor, QIcon
from PySide6.QtWidgets import QApplication

from cks_desktop.agent.images import part_of
from cks_desktop.tools.images import sniff
from cks_desktop.ui.chat.composer import Composer
from cks_desktop.ui.chat.image_view import ImageStrip, ImageThumb
from cks_desktop.ui.chat.message_widget import MessageWidget
from cks_desktop.ui.chat.model import MessageItem
from cks_desktop.ui.settings.dialog import SettingsDialog
from cks_desktop.ui.settings.mcp_editor import McpServerEditor
from cks_desktop.ui.settings.prices_table import PricesTable
from cks_desktop.ui.tasks import TaskTracker
from tests.png import make_png
from tests.ui.conftest import open_window
from tests.ui.test_settings import services  # noqa: F401 - the fixture


def _fits(widget: Any) -> bool:
    return widget.isVisible() and widget.width() >= widget.minimumSizeHint().width()


@pytest.mark.parametrize("width, one_row", [(310, False), (330, False), (720, True)])
def test_the_composer_keeps_its_pickers_and_send_readable(qtbot, width: int, one_row: bool) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    composer.context_meter.show()  # as when the context is known: one more widget in the row
    composer.setMinimumWidth(width)  # what the window's chat minimum (CHAT_MIN) does to its children
    composer.resize(width, 160)
    composer.show()
    qtbot.waitUntil(lambda: composer.width() == width, timeout=2000)
    QApplication.processEvents()
    for widget in (composer.send_button, composer.fetch_button, composer.attach_image_button,
                   composer.attach_documents_button):
        assert _fits(widget), (widget.objectName(), widget.width(), widget.minimumSizeHint().width())
    for box in (composer.provider_box, composer.model_box):  # about nine characters and the arrow, at least
        readable = box.fontMetrics().averageCharWidth() * 9 + 24
        assert box.isVisible() and box.width() >= readable, (box.objectName(), box.width(), readable)
    same_line = composer.provider_box.mapTo(composer, composer.provider_box.rect().center()).y() == \
        composer.send_button.mapTo(composer, composer.send_button.rect().center()).y()
    assert same_line is one_row
    chain, widget = [], composer.input.nextInFocusChain()
    while widget is not composer.input and len(chain) < 200:
        chain.append(widget)
        widget = widget.nextInFocusChain()
    first = min(chain.index(composer.provider_box), chain.index(composer.attach_documents_button))
    assert chain[first] is (composer.attach_documents_button if one_row else composer.provider_box), \
        "Tab goes through the composer's lines from top to bottom"


def test_a_disabled_thumbnail_still_shows_its_picture(qtbot) -> None:
    part = part_of(sniff(make_png(40, 30, (200, 30, 30))))
    thumb = ImageThumb(part, px=40)
    qtbot.addWidget(thumb)
    thumb.setEnabled(False)  # as the composer's chips are
    shown = thumb.icon().pixmap(thumb.iconSize(), QIcon.Mode.Disabled).toImage()
    assert QColor(shown.pixel(shown.width() // 2, shown.height() // 2)).getRgb()[:3] == (200, 30, 30)


def test_the_person_s_image_sits_under_the_bubble_above_its_actions(qtbot) -> None:
    from cks_desktop.ui.chat.chat_view import ChatView
    from cks_desktop.ui.chat.model import ChatModel

    model = ChatModel()
    view = ChatView(model)
    qtbot.addWidget(view)
    view.resize(360, 500)
    view.show()
    item = MessageItem("user", "What is in this picture?")
    item.images = (part_of(sniff(make_png(60, 60, (20, 120, 240)))),)
    model.append(item)
    view.flush()
    widget = view.widget_for(model.index_of(item))
    assert isinstance(widget, MessageWidget)
    qtbot.waitUntil(lambda: widget.isVisible() and widget.width() > 0, timeout=2000)
    QApplication.processEvents()
    [strip] = widget.findChildren(ImageStrip)
    thumb = strip.thumbs[0]
    assert strip.geometry().bottom() <= widget.actions_bar.geometry().top()
    right = thumb.mapTo(widget, thumb.rect().topRight()).x()
    assert right >= widget.width() - 40, "right-aligned, under the person's bubble"


def test_the_prices_table_model_heading_is_not_cut(qtbot) -> None:
    table = PricesTable()
    qtbot.addWidget(table)
    table.resize(640, 240)
    table.set_prices({"claude-sonnet-4-5": {"input": 3, "output": 15}})
    table.show()
    QApplication.processEvents()
    header = table.table.horizontalHeader()
    metrics = header.fontMetrics()
    for column in range(table.table.columnCount()):
        label = table.table.horizontalHeaderItem(column).text()
        assert header.sectionSize(column) >= metrics.horizontalAdvance(label), label
    assert "provider/model" in table.table.horizontalHeaderItem(0).toolTip()


def test_the_mcp_editor_offers_the_oauth_fields_of_the_chosen_sign_in(qtbot, services) -> None:  # noqa: F811
    editor = McpServerEditor(services, TaskTracker())
    qtbot.addWidget(editor)
    box = editor.oauth_grant_box
    box.setCurrentIndex(box.findData("authorization_code:"))
    assert not editor.oauth_key_button.isEnabled() and editor.oauth_secret_edit.isEnabled()
    box.setCurrentIndex(box.findData("client_credentials:private_key_jwt"))
    assert editor.oauth_key_button.isEnabled() and not editor.oauth_secret_edit.isEnabled()
    box.setCurrentIndex(box.findData("client_credentials:client_secret_basic"))
    assert not editor.oauth_key_button.isEnabled() and editor.oauth_secret_edit.isEnabled()


@pytest.mark.asyncio
async def test_file_share_with_other_apps_opens_that_settings_page(qtbot, home) -> None:
    async with open_window(home) as window:
        action = window.share_action
        assert action.toolTip() and not action.icon().isNull()
        action.trigger()
        dialog = window.findChild(SettingsDialog)
        assert dialog is not None and dialog.isVisible()
        assert dialog.nav.currentItem().text() == "Share with other apps"
        dialog.reject()
