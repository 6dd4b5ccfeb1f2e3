"""Logging to a rotating file, secret redaction, and the uncaught-exception dialog.

An exception that escapes a slot or a background task must not end the app:
it is logged (with secrets redacted) and shown in a dialog with the traceback
and the log file's path, and the person carries on. Redaction covers the
secrets this run knows (``SecretStore.known_values``) and the shapes of common
API keys and auth headers, so a pasted traceback never leaks a key.
"""

from __future__ import annotations

import logging
import logging.handlers
import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from cks_desktop.plural import counted

log = logging.getLogger("cks_desktop.crash")

_PATTERNS = [
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"sk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"AIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-~+/=]{8,}"),
    re.compile(r"(?i)((?:api[_-]?key|token|secret|password|authorization)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{4,}"),
]
REDACTED = "[redacted]"


class Redactor:
    """Replaces known secret values and key-shaped strings with ``[redacted]``."""

    def __init__(self, known: Callable[[], list[str]] | None = None) -> None:
        self._known = known or (lambda: [])

    def __call__(self, text: str) -> str:
        from cks_desktop.secret_shapes import redact_text

        text = redact_text(text, self._known())  # known values, then every shape secret_shapes knows
        for pattern in _PATTERNS:
            text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
        return text


class _RedactingFormatter(logging.Formatter):
    def __init__(self, redact: Redactor) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self._redact = redact

    def format(self, record: logging.LogRecord) -> str:
        return self._redact(super().format(record))


def setup_logging(log_file: Path, redact: Redactor, *, level: int = logging.INFO) -> logging.Handler:
    """Attach a rotating, redacting file handler to the root logger (1 MB × 5 files)."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(log_file, maxBytes=1_000_000, backupCount=5,
                                                   encoding="utf-8", delay=True)
    handler.setFormatter(_RedactingFormatter(redact))
    handler.setLevel(level)
    root = logging.getLogger()
    if root.getEffectiveLevel() > level:
        # The file wants more than the console shows: keep the console (--verbose or not) as it was.
        for existing in root.handlers:
            if existing.level == logging.NOTSET:
                existing.setLevel(root.getEffectiveLevel())
        root.setLevel(level)
    root.addHandler(handler)
    return handler


_QT_NOISE = ("This plugin does not support propagateSizeHints()",)


def route_qt_messages() -> None:
    """Send Qt's own warnings to the log instead of stderr (dropping known harmless noise)."""
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    qt_log = logging.getLogger("qt")
    levels = {QtMsgType.QtDebugMsg: logging.DEBUG, QtMsgType.QtInfoMsg: logging.INFO,
              QtMsgType.QtWarningMsg: logging.WARNING, QtMsgType.QtCriticalMsg: logging.ERROR,
              QtMsgType.QtFatalMsg: logging.CRITICAL}

    def handler(kind: QtMsgType, _context: object, message: str) -> None:
        if message not in _QT_NOISE:
            qt_log.log(levels.get(kind, logging.WARNING), "%s", message)

    qInstallMessageHandler(handler)


class CrashReporter:
    """The process-wide hook for exceptions nobody caught.

    Installed as ``sys.excepthook`` (qasync routes failed ``asyncSlot`` tasks
    there) and as the asyncio loop's exception handler.
    """

    def __init__(self, log_file: Path, redact: Redactor, parent: Callable[[], QWidget | None] = lambda: None) -> None:
        self.log_file = log_file
        self.redact = redact
        self._parent = parent
        self._dialog: QMessageBox | None = None
        self._suppressed = 0

    def install(self) -> None:
        sys.excepthook = self.excepthook

    def excepthook(self, exc_type: type[BaseException], exc: BaseException,
                   tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            return
        text = self.redact("".join(traceback.format_exception(exc_type, exc, tb)))
        log.error("uncaught exception\n%s", text)
        self._show(self.redact(f"{exc_type.__name__}: {exc}"), text)

    def loop_exception_handler(self, loop: object, context: dict) -> None:
        exc = context.get("exception")
        if isinstance(exc, BaseException):
            self.excepthook(type(exc), exc, exc.__traceback__)
        else:
            log.error("asyncio: %s", self.redact(str(context.get("message", context))))

    def _show(self, summary: str, details: str) -> None:
        if QApplication.instance() is None:
            return
        if self._dialog is not None and self._dialog.isVisible():
            self._suppressed += 1
            self._dialog.setInformativeText(self._informative() +
                                            f"\n\n{counted(self._suppressed, 'more error')} happened since; see the log.")
            return
        self._suppressed = 0
        from cks_desktop.ui.labels import plain_message_box  # the summary quotes the error: never HTML

        box = plain_message_box(self._parent(), icon=QMessageBox.Icon.Critical)  # the theme's glyph
        box.setObjectName("crashDialog")
        box.setWindowTitle("Unexpected error")
        box.setText(f"Something went wrong, but the app is still running.\n\n{summary[:500]}")
        box.setInformativeText(self._informative())
        box.setDetailedText(details)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.setStandardButtons(QMessageBox.StandardButton.Close)
        box.setWindowModality(Qt.WindowModality.NonModal)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.destroyed.connect(self._forget)
        self._dialog = box
        box.show()

    def _forget(self) -> None:
        self._dialog = None

    def _informative(self) -> str:
        return f"The details are in the log file:\n{self.log_file}"
