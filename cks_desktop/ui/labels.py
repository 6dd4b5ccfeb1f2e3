"""Every label and message box that can show untrusted text is made here, as plain text.

Qt guesses: a ``QLabel``, ``QMessageBox`` or ``QInputDialog`` label with the
default ``AutoText`` format renders its text as HTML when it looks like HTML,
so an object named ``<img src=file:///home/me/photo.jpg><b style='color:red'>
Your licence expired</b>`` displayed a local image and a fake warning
(item 10). Names, types, titles, server names and descriptions,
model text and error messages are data. So the rule is structural: widgets in
``cks_desktop/ui`` never construct ``QLabel``/``QMessageBox`` themselves but
call these helpers, which fix the format to ``PlainText``; the one label with
markup of our own (the chat's set-up notice, every dynamic part escaped) says
so by calling ``rich_label``. ``tests/ui/test_plain_text.py`` enforces the rule
over the source and walks the live widgets with hostile names everywhere.
Tooltips go through ``ui.text.plain_tooltip``.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog, QLabel, QMessageBox, QWidget

PLAIN = Qt.TextFormat.PlainText


def plain_label(text: str = "", *, name: str = "", wrap: bool = False, selectable: bool = False,
                parent: QWidget | None = None) -> QLabel:
    """A label that shows ``text`` literally (no HTML, no links, no images)."""
    label = QLabel(parent)
    label.setTextFormat(PLAIN)
    label.setText(text)
    if name:
        label.setObjectName(name)
    label.setWordWrap(wrap)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def rich_label(html: str = "", *, name: str = "") -> QLabel:
    """A label of the app's own markup. Every dynamic part of ``html`` must be ``html.escape``d."""
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setText(html)
    if name:
        label.setObjectName(name)
    return label


# A message box's kind → the Phosphor glyph and colour role drawn for it (Qt's standard icons are the
# style's own light-blue "?" and yellow "!", unthemed in both schemes: look.md).
MESSAGE_ICONS: dict[QMessageBox.Icon, tuple[str, str]] = {
    QMessageBox.Icon.Question: ("question", "accent"),
    QMessageBox.Icon.Information: ("info", "accent"),
    QMessageBox.Icon.Warning: ("warning", "warning"),
    QMessageBox.Icon.Critical: ("warning-octagon", "danger"),
}
MESSAGE_ICON_PX = 40


def set_message_icon(box: QMessageBox, icon: QMessageBox.Icon) -> None:
    """Give ``box`` the theme's glyph for its kind (the standard icon when the icon font is missing);
    ``NoIcon`` leaves it without one. The pixmap is made at the box's device pixel ratio."""
    from cks_desktop.ui import theme  # late: the theme module is heavier than these helpers

    glyph = MESSAGE_ICONS.get(icon)
    themed = theme.icon(*glyph) if glyph is not None else None
    if themed is None or themed.isNull():
        box.setIcon(icon)
        return
    box.setIconPixmap(themed.pixmap(MESSAGE_ICON_PX, MESSAGE_ICON_PX))


def plain_message_box(parent: QWidget | None, *, icon: QMessageBox.Icon = QMessageBox.Icon.NoIcon, title: str = "",
                      text: str = "", informative: str = "",
                      buttons: QMessageBox.StandardButton = QMessageBox.StandardButton.NoButton) -> QMessageBox:
    """A message box whose text and informative text are plain (the format is set before the text)."""
    box = QMessageBox(parent)
    box.setTextFormat(PLAIN)
    set_message_icon(box, icon)
    box.setWindowTitle(title)
    box.setText(text)
    if informative:
        box.setInformativeText(informative)
    if buttons != QMessageBox.StandardButton.NoButton:
        box.setStandardButtons(buttons)
    return box


def plain_input_dialog(parent: QWidget | None, *, title: str, label: str) -> QInputDialog:
    """A ``QInputDialog`` whose label is plain text (Qt gives it ``AutoText`` and no setter)."""
    dialog = QInputDialog(parent)
    dialog.setWindowTitle(title)
    dialog.setLabelText(label)
    for child in dialog.findChildren(QLabel):
        child.setTextFormat(PLAIN)
    return dialog
