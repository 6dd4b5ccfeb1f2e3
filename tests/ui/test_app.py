"""Start-up pieces: redaction, the crash dialog, the thread bridge, the status bar, and --self-test."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from cks_desktop.ui.bridge import EventBridge
from cks_desktop.ui.crash import CrashReporter, Redactor, setup_logging
from cks_desktop.ui.status import StatusWidgets

from tests.ui.helpers import wait

ROOT = Path(__file__).resolve().parents[2]


def test_redactor_hides_known_secrets_and_key_shapes() -> None:
    redact = Redactor(lambda: ["hunter2-password"])
    text = redact("key=sk-ant-api03-abcdefghijklmnop and Bearer abcdef123456789 and hunter2-password "
                  'and {"api_key": "zzzzzzzz"} and AIzaSyA1234567890abcdefghijk')
    for secret in ("sk-ant-api03-abcdefghijklmnop", "abcdef123456789", "hunter2-password", "zzzzzzzz",
                   "AIzaSyA1234567890abcdefghijk"):
        assert secret not in text
    assert text.count("[redacted]") >= 5 and "Bearer [redacted]" in text


def test_crash_dialog_keeps_the_app_running_and_logs_redacted(qtbot, tmp_path: Path) -> None:
    log_file = tmp_path / "logs" / "app.log"
    redact = Redactor(lambda: ["sk-ant-very-secret-key"])
    handler = setup_logging(log_file, redact)
    try:
        reporter = CrashReporter(log_file, redact)
        try:
            raise RuntimeError("boom with sk-ant-very-secret-key inside")
        except RuntimeError as exc:
            reporter.excepthook(type(exc), exc, exc.__traceback__)
        box = next(w for w in QApplication.topLevelWidgets()
                   if isinstance(w, QMessageBox) and w.objectName() == "crashDialog" and w.isVisible())
        qtbot.addWidget(box)
        assert "still running" in box.text() and "RuntimeError: boom" in box.text()
        assert str(log_file) in box.informativeText()
        assert "sk-ant-very-secret-key" not in box.text() + box.detailedText()
        assert "Traceback" in box.detailedText()
        reporter.excepthook(ValueError, ValueError("second"), None)  # while the first is open: counted
        assert "1 more error" in box.informativeText()
        handler.flush()
        logged = log_file.read_text()
        assert "RuntimeError: boom" in logged and "sk-ant-very-secret-key" not in logged
        box.close()
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()


@pytest.mark.asyncio
async def test_bridge_delivers_worker_thread_events_on_the_gui_thread() -> None:
    bridge = EventBridge()
    listeners = []
    bridge.attach(lambda listener: listeners.append(listener) or (lambda: listeners.remove(listener)))
    seen: asyncio.Future[tuple[object, bool]] = asyncio.get_running_loop().create_future()
    bridge.arrived.connect(lambda e: seen.done() or seen.set_result((e, threading.current_thread() is
                                                                   threading.main_thread())))
    worker = threading.Thread(target=lambda: listeners[0]("from a worker"))
    worker.start()
    worker.join()
    assert await wait(seen) == ("from a worker", True)
    bridge.detach()
    assert listeners == []


@pytest.mark.asyncio
async def test_bridge_delivers_a_gui_thread_write_after_it_returns() -> None:
    """A write made on the GUI thread (an edit in the window) returns before any view redraws."""
    bridge = EventBridge()
    listeners = []
    bridge.attach(lambda listener: listeners.append(listener) or (lambda: listeners.remove(listener)))
    seen: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    bridge.arrived.connect(lambda e: seen.done() or seen.set_result(e))
    listeners[0]("from the window")
    assert not seen.done()  # not inside the write
    assert await wait(seen) == "from the window"
    bridge.detach()


@dataclass
class _State:
    name: str
    status: str
    reason: str = ""
    enabled: bool = True


def test_status_bar_has_one_light_per_server(qtbot) -> None:
    status = StatusWidgets()
    qtbot.addWidget(status)
    status.set_provider("Anthropic · claude")
    assert status.provider_button.text() == "Anthropic · claude"
    status.set_servers([_State("files", "starting"), _State("web", "failed", "npx was not found"),
                        _State("off", "stopped", enabled=False)])
    assert sorted(status.lights) == ["files", "web"]
    assert "npx was not found" in status.lights["web"].toolTip()
    clicked: list[str] = []
    status.serverClicked.connect(clicked.append)
    status.lights["web"].click()
    assert clicked == ["web"]
    status.set_servers([_State("files", "ready")])
    assert list(status.lights) == ["files"] and status.lights["files"].status == "ready"


def test_self_test_runs_the_real_window(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "CKS_DESKTOP_HOME": str(tmp_path / "untouched")}
    proc = subprocess.run([sys.executable, "-m", "cks_desktop", "--self-test"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == ""
    assert not (tmp_path / "untouched").exists()  # the self-test works in a throwaway folder


def test_the_log_file_gets_info_without_the_console_getting_louder(tmp_path: Path) -> None:
    root = logging.getLogger()
    console = logging.StreamHandler()
    saved_level, saved_handlers = root.level, list(root.handlers)
    root.setLevel(logging.WARNING)
    root.addHandler(console)
    handler = setup_logging(tmp_path / "app.log", Redactor())
    try:
        logging.getLogger("cks_desktop.test").info("an info line")
        handler.flush()
        assert "an info line" in (tmp_path / "app.log").read_text()
        assert console.level == logging.WARNING  # the console still shows warnings only
    finally:
        root.removeHandler(handler)
        handler.close()
        root.removeHandler(console)
        root.setLevel(saved_level)
        assert root.handlers == saved_handlers
