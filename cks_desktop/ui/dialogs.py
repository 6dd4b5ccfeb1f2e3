"""Dialogs that coroutines await without a nested event loop (STACK.md R9).

``exec()`` runs a nested Qt loop inside an asyncio task step and wedges every
other task, so dialogs are opened window-modal with ``open()`` and their
``finished`` signal resolves a future.
"""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QDialog, QMessageBox, QWidget


async def run_dialog(dialog: QDialog) -> int:
    """Open ``dialog`` (window-modal) and wait for its result code."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[int] = loop.create_future()

    def finished(code: int) -> None:
        if not future.done():
            future.set_result(int(code))

    dialog.finished.connect(finished)
    try:
        dialog.open()
        return await future
    except asyncio.CancelledError:
        if dialog.isVisible():
            dialog.reject()
        raise
    finally:
        dialog.finished.disconnect(finished)


async def confirm(parent: QWidget | None, title: str, text: str, *, accept_text: str,
                  informative: str = "", destructive: bool = False) -> bool:
    """Ask a yes/no question; the safe answer (Cancel) has the focus."""
    box = QMessageBox(parent)
    box.setObjectName("confirmDialog")
    box.setIcon(QMessageBox.Icon.Warning if destructive else QMessageBox.Icon.Question)
    box.setWindowTitle(title)
    box.setText(text)
    if informative:
        box.setInformativeText(informative)
    accept = box.addButton(accept_text, QMessageBox.ButtonRole.DestructiveRole if destructive
                           else QMessageBox.ButtonRole.AcceptRole)
    accept.setObjectName("confirmAcceptButton")
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    cancel.setObjectName("confirmCancelButton")
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    try:
        await run_dialog(box)
        return box.clickedButton() is accept
    finally:
        box.deleteLater()
