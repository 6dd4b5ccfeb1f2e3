"""Qt bootstrap: QApplication + qasync loop, logging, the crash hook, the quit flow (STACK.md R3).

The loop runs through ``asyncio.Runner(loop_factory=AppEventLoop)`` (qasync); the
app ends by returning from ``amain`` after the window's ``shutdown`` closed
chats, MCP servers and provider clients — never by ``app.quit()`` with work
pending. Slow imports (provider SDKs, the MCP SDK) happen after the window is
shown.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import tempfile
from pathlib import Path


def _icon_path() -> Path | None:
    """The window icon ships inside the package, so pip installs and bundles both have it."""
    candidate = Path(__file__).resolve().parent / "resources" / "cks-desktop.svg"
    return candidate if candidate.is_file() else None


def run_gui(data_dir: str | None = None, self_test: bool = False) -> int:
    if self_test:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        with tempfile.TemporaryDirectory(prefix="cks-self-test-") as scratch:
            return _run(scratch, self_test=True)
    return _run(data_dir, self_test=False)


def _run(data_dir: str | None, *, self_test: bool) -> int:
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from cks_desktop import APP_ID, APP_NAME, paths
    from cks_desktop.graph.errors import StoreError
    from cks_desktop.secrets import SecretStore
    from cks_desktop.ui.crash import (
        CrashReporter,
        Redactor,
        route_qt_messages,
        setup_logging,
    )
    from cks_desktop.ui.event_loop import AppEventLoop

    app_paths = paths.resolve(data_dir).ensure()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)  # Qt must never stop the loop behind asyncio's back
    app.setApplicationName(APP_ID)
    app.setApplicationDisplayName(APP_NAME)
    app.setDesktopFileName(APP_ID)
    icon = _icon_path()
    if icon is not None:
        app.setWindowIcon(QIcon(str(icon)))

    secrets = SecretStore()
    redact = Redactor(secrets.known_values)
    handler = setup_logging(app_paths.app_log, redact)
    route_qt_messages()
    window = None
    crash = CrashReporter(app_paths.app_log, redact, parent=lambda: window)
    previous_hook = sys.excepthook
    crash.install()

    async def amain() -> int:
        nonlocal window
        from cks_desktop.ui import selftest
        from cks_desktop.ui.main_window import MainWindow
        from cks_desktop.ui.services import AppServices

        asyncio.get_running_loop().set_exception_handler(crash.loop_exception_handler)
        try:
            services = AppServices.open(app_paths, secrets=secrets,
                                        provider_factory=selftest.provider_factory if self_test else None)
        except StoreError as exc:
            print(f"{APP_ID}: {exc}", file=sys.stderr)
            return await _fatal(str(exc)) if not self_test else 1
        if services.settings.problem:
            print(f"{APP_ID}: {services.settings.problem}", file=sys.stderr)

        window = MainWindow(services)
        quit_requested = asyncio.Event()
        window.quitRequested.connect(quit_requested.set)
        _watch_signals(quit_requested)
        window.show()
        loaded_early = selftest.heavy_modules_loaded()  # must be none: they load after the window is up
        background = window.tasks.spawn(window.start_background(), name="background-start")
        # Once the SDKs and servers are loaded, move that long-lived heap out of the collector's
        # reach: a full collection over it costs about 0.2 s on the event loop, at random times.
        background.add_done_callback(lambda _task: gc.freeze())
        code = 0
        if self_test:
            ok, reason = await selftest.run_self_test(window)
            if ok and loaded_early:
                ok, reason = False, f"slow SDKs were imported before the window was shown: {loaded_early}"
            if not ok:
                print(f"{APP_ID}: self-test failed: {reason}", file=sys.stderr)
                code = 1
            else:
                await asyncio.wait({background}, timeout=10)
        else:
            await quit_requested.wait()
        await window.shutdown()
        window.deleteLater()
        return code

    try:
        with asyncio.Runner(loop_factory=lambda: AppEventLoop(app)) as runner:
            return runner.run(amain())
    finally:
        from PySide6.QtCore import qInstallMessageHandler

        qInstallMessageHandler(None)
        sys.excepthook = previous_hook
        import logging

        logging.getLogger().removeHandler(handler)
        handler.close()


async def _fatal(message: str) -> int:
    """The database cannot be opened: say so in a window, then exit 2."""
    from PySide6.QtWidgets import QMessageBox

    from cks_desktop import APP_NAME
    from cks_desktop.ui.dialogs import run_dialog

    box = QMessageBox(QMessageBox.Icon.Critical, APP_NAME, f"{APP_NAME} cannot start.\n\n{message}")
    await run_dialog(box)
    return 2


def _watch_signals(quit_requested: asyncio.Event) -> None:
    """Ctrl+C / SIGTERM quit like the window's close button (best effort: not on Windows)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(sig, lambda *_args: loop.call_soon_threadsafe(quit_requested.set))
        except (ValueError, OSError):  # not the main thread, or not supported here
            continue
    from PySide6.QtCore import QTimer

    # Python runs signal handlers only between bytecodes; a light timer gives it the chance.
    timer = QTimer()
    timer.setInterval(500)
    timer.timeout.connect(lambda: None)
    timer.start()
    quit_requested._signal_timer = timer  # type: ignore[attr-defined]  # keep it alive with the event
