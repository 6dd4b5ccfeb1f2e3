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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.paths import AppPaths
    from cks_desktop.ui.main_window import MainWindow
    from cks_desktop.runtime import AppServices


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
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)  # Qt must never stop the loop behind asyncio's back
    app.setApplicationName(APP_ID)
    app.setApplicationDisplayName(APP_NAME)
    app.setDesktopFileName(APP_ID)
    icon = _icon_path()
    if icon is not None:
        app.setWindowIcon(QIcon(str(icon)))  # every window and the task bar (with the desktop file name)
    from cks_desktop.ui import theme

    theme.install(app)  # fonts, Fusion, palette, the one style sheet; the saved choice follows below

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
        from cks_desktop.runtime import AppServices
        from cks_desktop.settings import Ui

        asyncio.get_running_loop().set_exception_handler(crash.loop_exception_handler)
        services = await open_services(
            app_paths, lambda: AppServices.open(app_paths, secrets=secrets,
                                                provider_factory=selftest.provider_factory if self_test else None),
            interactive=not self_test)
        if services is None:
            return 2 if not self_test else 1
        if services.settings.problem:
            print(f"{APP_ID}: {services.settings.problem}", file=sys.stderr)
        theme.install(app, theme.normal_mode(services.settings.section(Ui).theme))

        window = await build_window(services, interactive=not self_test)
        if window is None:
            return 2 if not self_test else 1
        quit_requested = asyncio.Event()
        window.quitRequested.connect(quit_requested.set)
        _watch_signals(quit_requested)
        window.show()
        loaded_early = selftest.heavy_modules_loaded()  # must be none: they load after the window is up
        background = window.tasks.spawn(window.start_background(), name="background-start")
        # Once the SDKs and servers are loaded, move that long-lived heap out of the collector's
        # reach: a full collection over it costs about 0.2 s on the event loop, at random times.
        background.add_done_callback(lambda _task: gc.freeze())
        if not self_test:
            window.tasks.spawn(auto_backup(services.store), name="daily-backup")
        code = 0
        if self_test:
            ok, reason = await selftest.run_self_test(window)
            if ok and loaded_early:
                ok, reason = False, f"slow SDKs were imported before the window was shown: {loaded_early}"
            if not ok:
                print(f"{APP_ID}: self-test failed: {reason}", file=sys.stderr)
                code = 1
            else:
                print(selftest.passed_line(APP_ID, app.platformName()), flush=True)
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


async def open_services(app_paths: "AppPaths", opener: "Callable[[], AppServices]", *,
                        interactive: bool = True) -> "AppServices | None":
    """Open the services; if the database cannot be opened, is damaged or sits on a full
    disk, say so in the start-up dialog and offer the way out. None: the app should exit.

    The choices (the same as ``cks-desktop storage …``): open read-only (reads and
    exports go on, every write is refused with one sentence), export what can be read
    (every session as JSON into a ``salvage-<time>`` folder beside the database),
    restore the automatic backup (the current file is kept in ``damaged/``), quit.
    Blocking work (restore, export) runs on a worker thread.
    """
    from cks_desktop import APP_ID
    from cks_desktop.graph.errors import StoreError
    from cks_desktop.runtime.database_file import DatabaseFile

    db = app_paths.database
    database = DatabaseFile(db)
    note = ""
    while True:
        try:
            services = opener()
        except StoreError as exc:
            print(f"{APP_ID}: {exc}", file=sys.stderr)
            if not interactive:
                return None
            has_backup = bool(await asyncio.to_thread(database.backups))
            answer = await _startup_dialog(str(exc), note, can_read=False, has_backup=has_backup)
            if answer == "restore":
                note = await _restore(db)
                continue
            return None
        reason = services.store.read_only_reason
        if reason is None or not interactive:
            if reason:
                print(f"{APP_ID}: {reason}", file=sys.stderr)
            return services
        print(f"{APP_ID}: {reason}", file=sys.stderr)
        damaged = services.store.damage is not None
        has_backup = damaged and bool(await asyncio.to_thread(database.backups))
        while True:
            answer = await _startup_dialog(reason, note, can_read=True, has_backup=has_backup,
                                           can_export=damaged)
            if answer == "export":
                note = await _salvage(services.store, db)
                continue
            break
        if answer == "read-only":
            return services
        await services.aclose()
        if answer == "restore":
            note = await _restore(db)
            continue
        return None


async def build_window(services: "AppServices", *, interactive: bool = True) -> "MainWindow | None":
    """The main window, or — when the database fails while the first screen is read (a
    table missing, a damaged page) — the "cannot start" dialog and None, never a traceback."""
    from cks_desktop import APP_ID
    from cks_desktop.graph.errors import StoreError
    from cks_desktop.ui.main_window import MainWindow

    try:
        return MainWindow(services)
    except StoreError as exc:
        print(f"{APP_ID}: {exc}", file=sys.stderr)
        await services.aclose()
        if interactive:
            await _fatal(str(exc))
        return None


async def _startup_dialog(message: str, note: str, *, can_read: bool, has_backup: bool,
                          can_export: bool = False) -> str:
    from cks_desktop import APP_NAME
    from cks_desktop.ui.dialogs import choose

    choices: list[tuple[str, str]] = []
    if can_read:
        choices.append(("read-only", "Open read-only"))
    if can_export:
        choices.append(("export", "Export what can be read"))
    if has_backup:
        choices.append(("restore", "Restore the automatic backup"))
    choices.append(("quit", "Quit"))
    headline = (f"{APP_NAME} can open this database only read-only." if can_read
                else f"{APP_NAME} cannot start.")
    return await choose(None, APP_NAME, f"{headline}\n\n{message}", choices, informative=note,
                        default=choices[0][0], escape="quit", critical=not can_read, object_name="startupDialog")


async def _restore(db: "Path") -> str:
    """Restore on a worker; the sentence to show next time the dialog opens."""
    from cks_desktop.graph.errors import StoreError
    from cks_desktop.runtime.database_file import DatabaseFile

    database = DatabaseFile(db)
    try:
        done = await asyncio.to_thread(database.restore)
    except StoreError as exc:
        return f"Restoring failed: {exc}"
    return database.restored_sentence(done)


async def _salvage(store: "GraphStore", db: "Path") -> str:
    from cks_desktop.graph.errors import StoreError
    from cks_desktop.runtime.database_file import DatabaseFile

    try:
        salvaged = await asyncio.to_thread(DatabaseFile(db).salvage, store)
    except StoreError as exc:
        return f"Exporting failed: {exc}"
    return salvaged.sentence()


async def auto_backup(store: "GraphStore") -> None:
    """The daily backup (graph/backup.py), on a worker; never raises. A backup that finds
    the file damaged turns the store read-only, so the damage spreads no further."""
    import logging

    from cks_desktop.graph import backup

    log = logging.getLogger("cks_desktop.backup")
    if store.backend != "sqlite":  # a team database is backed up by its server (docs/team.md)
        return
    if store.read_only_reason or not await asyncio.to_thread(backup.backup_due, store.path):
        return
    try:
        made = await asyncio.to_thread(backup.make_backup, store.path)
    except backup.DamagedSource as exc:
        store.mark_damaged(exc.problem)
        log.warning("%s", exc)
    except backup.BackupError as exc:
        log.warning("%s", exc)
    else:
        log.info("backed up the database to %s", made.path)


async def _fatal(message: str) -> int:
    """The database cannot be opened: say so in a window, then exit 2."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    from cks_desktop import APP_NAME
    from cks_desktop.ui.dialogs import run_dialog

    box = QMessageBox(QMessageBox.Icon.Critical, APP_NAME, f"{APP_NAME} cannot start.\n\n{message}")
    box.setObjectName("cannotStartDialog")
    box.setTextFormat(Qt.TextFormat.PlainText)  # the message quotes a path and SQLite's words
    try:
        await run_dialog(box)
    finally:
        box.deleteLater()
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
