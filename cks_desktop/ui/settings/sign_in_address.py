"""The sign-in address of an OAuth server, shown the moment the sign-in starts.

A browser sign-in opens the authorization page in the system browser, but a machine without
one (a remote desktop, a locked-down kiosk, a server under Xvfb) opens nothing, and the list
would say "starting…" until the sign-in times out. So the address is shown at once, whether a
browser opened or not, in a read-only field with Copy: the person can open it on any device.
It goes away when the sign-in ends. The address is the authorization server's (untrusted): it
is shown as plain text in a line edit, never as a link or rich text.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPushButton, QVBoxLayout, QWidget

from cks_desktop.ui import theme
from cks_desktop.ui.settings.widgets import note_label


def system_browser(url: str) -> bool:
    """Open ``url`` in the system browser; False when there is none (nothing opened)."""
    return bool(QDesktopServices.openUrl(QUrl(url)))


class SignInAddress(QWidget):
    """"Sign in to “x”: …" with the address and Copy; hidden while no sign-in runs."""

    def __init__(self, browser: Callable[[str], bool] = system_browser) -> None:
        super().__init__()
        self.setObjectName("mcpSignInAddress")
        self.browser = browser
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.note = note_label()
        self.note.setObjectName("mcpSignInNote")
        layout.addWidget(self.note)
        row = QHBoxLayout()
        self.address = QLineEdit()
        self.address.setObjectName("mcpSignInUrl")
        self.address.setReadOnly(True)
        self.address.setAccessibleName("Sign-in address")
        row.addWidget(self.address, 1)
        self.copy_button = QPushButton("Copy address")
        self.copy_button.setObjectName("mcpSignInCopy")
        self.copy_button.setAutoDefault(False)
        theme.bind_icon(self.copy_button, "copy")
        self.copy_button.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.address.text()))
        row.addWidget(self.copy_button)
        layout.addLayout(row)
        self.hide()

    def opener(self, name: str) -> Callable[[str], None]:
        """The sign-in's ``open_url`` for server ``name``: try the browser, show the address."""
        def open_url(url: str) -> None:
            opened = self.browser(url)
            self.note.setText(
                f"Sign in to “{name}”: " + ("the page opened in your browser. If it did not, open this address "
                                           "in a browser on any device:" if opened else
                                           "no browser could be opened here. Open this address in a browser on "
                                           "any device and sign in:"))
            self.address.setText(url)
            self.address.setCursorPosition(0)
            self.show()

        return open_url

    def done(self) -> None:
        self.address.clear()
        self.hide()
