"""Dialogs that coroutines await without a nested event loop (STACK.md R9).

``exec()`` runs a nested Qt loop inside an asyncio task step and wedges every
other task, so dialogs are opened window-modal with ``open()`` and their
``finished`` signal resolves a future.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QDialog, QMessageBox, QPushButton, QWidget


def safe_choice(box: QMessageBox) -> QAbstractButton | None:
    """The button of ``box`` that does nothing: the one its code named for Esc, else the first whose
    role rejects or says no (Cancel, No, Close, Abort), else None (a box of one answer)."""
    if box.escapeButton() is not None:
        return box.escapeButton()
    refusing = (QMessageBox.ButtonRole.RejectRole, QMessageBox.ButtonRole.NoRole)
    return next((b for b in box.buttons() if box.buttonRole(b) in refusing), None)


def default_to_safe(box: QMessageBox) -> None:
    """One rule for every question the window asks: Esc and Enter take the answer that does nothing,
    unless the code that built the box chose another default on purpose."""
    safe = safe_choice(box)
    if safe is None:
        return
    box.setEscapeButton(safe)
    if box.defaultButton() is None and isinstance(safe, QPushButton):
        box.setDefaultButton(safe)


async def run_dialog(dialog: QDialog, on_open: "Callable[[QDialog], object] | None" = None) -> int:
    """Open ``dialog`` (window-modal, never ``exec()``) and wait for its result code; ``on_open``
    hears the dialog once it is open (tests and screenshots wait on it). A message box with a choice
    answers Esc (and, unless its code set a default, Enter) with its safe choice (``default_to_safe``)."""
    if isinstance(dialog, QMessageBox):
        default_to_safe(dialog)
    loop = asyncio.get_running_loop()
    future: asyncio.Future[int] = loop.create_future()

    def finished(code: int) -> None:
        if not future.done():
            future.set_result(int(code))

    dialog.finished.connect(finished)
    try:
        dialog.open()
        if on_open is not None:
            on_open(dialog)
        return await future
    except asyncio.CancelledError:
        if dialog.isVisible():
            dialog.reject()
        raise
    finally:
        dialog.finished.disconnect(finished)


async def confirm(parent: QWidget | None, title: str, text: str, *, accept_text: str,
                  informative: str = "", destructive: bool = False,
                  on_open: "Callable[[QDialog], object] | None" = None) -> bool:
    """Ask a yes/no question; the safe answer (Cancel) has the focus; ``on_open`` hears the box once
    it is open (tests and screenshots wait on it)."""
    from cks_desktop.ui.labels import plain_message_box  # titles and names are data: plain text

    box = plain_message_box(parent, icon=QMessageBox.Icon.Warning if destructive else QMessageBox.Icon.Question,
                            title=title, text=text, informative=informative)
    box.setObjectName("confirmDialog")
    accept = box.addButton(accept_text, QMessageBox.ButtonRole.DestructiveRole if destructive
                           else QMessageBox.ButtonRole.AcceptRole)
    accept.setObjectName("confirmAcceptButton")
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    cancel.setObjectName("confirmCancelButton")
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    try:
        await run_dialog(box, on_open)
        return box.clickedButton() is accept
    finally:
        box.deleteLater()


async def choose(parent: QWidget | None, title: str, text: str, choices: Sequence[tuple[str, str]], *,
                 informative: str = "", default: str, escape: str, critical: bool = False,
                 object_name: str = "chooseDialog") -> str:
    """Ask a question with several answers; returns the key of the one picked.

    ``choices`` are ``(key, button text)`` in display order; each button's object name
    is ``<object_name>_<key>`` so tests (and screen readers) can find it. Closing the
    box or pressing Esc answers ``escape``. The text is shown as plain text: it may
    quote a file name or an error message."""
    from cks_desktop.ui.labels import set_message_icon

    box = QMessageBox(parent)
    box.setObjectName(object_name)
    set_message_icon(box, QMessageBox.Icon.Critical if critical else QMessageBox.Icon.Warning)
    box.setWindowTitle(title)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(text)
    if informative:
        box.setInformativeText(informative)
    buttons: dict[str, QPushButton] = {}
    for key, label in choices:
        role = QMessageBox.ButtonRole.RejectRole if key == escape else QMessageBox.ButtonRole.AcceptRole
        button = box.addButton(label, role)
        button.setObjectName(f"{object_name}_{key}")
        buttons[key] = button
    box.setDefaultButton(buttons[default])
    box.setEscapeButton(buttons[escape])
    try:
        await run_dialog(box)
        clicked = box.clickedButton()
        return next((key for key, button in buttons.items() if button is clicked), escape)
    finally:
        box.deleteLater()
