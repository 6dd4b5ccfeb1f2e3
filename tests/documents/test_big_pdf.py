"""A PDF of very many pages: refused at once past the page bound (also when its /Count lies);
within it, the CLI shows progress and stops on Ctrl+C with nothing added, and the window's add
shows a progress dialog whose Cancel stops it with nothing added. The PDFs are made here (one
short text line per page); bench/big_pdf.py measures 100,000 pages."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cks_desktop.documents.readers.pdf import MAX_PAGES
from cks_desktop.documents.store import DocumentStore
from tests.cli.test_cli import ENV, cks, home, ok  # noqa: F401  (home is a fixture)
from tests.documents.files import pdf_bytes
from tests.documents.test_zip_bombs import _read

PAGES = 1_500  # a read of a few seconds: long enough to see progress and to stop


def _pdf(path: Path, pages: int) -> Path:
    path.write_bytes(pdf_bytes([f"Page {i} says hello." for i in range(pages)]))
    return path


def test_a_pdf_over_the_page_bound_is_one_sentence_at_once(tmp_path: Path) -> None:
    seen = _read(_pdf(tmp_path / "huge.pdf", MAX_PAGES + 1))
    assert seen["outcome"] == (f"huge.pdf has more than {MAX_PAGES:,} pages, more than this app reads from one "
                               "file; split it into parts (a PDF tool can) and add those."), seen
    assert float(str(seen["seconds"])) < 10, seen  # was read whole: ~16 s here for 10,001 pages, 2 min for 100,000


def test_a_pdf_whose_page_count_lies_is_counted(tmp_path: Path) -> None:
    lying = tmp_path / "liar.pdf"
    data = pdf_bytes([f"Page {i}" for i in range(MAX_PAGES + 1)])
    data = data.replace(f"/Count {MAX_PAGES + 1} >>".encode(), b"/Count 3 >>".ljust(len(f"/Count {MAX_PAGES + 1} >>")))
    lying.write_bytes(data)
    seen = _read(lying)
    assert str(seen["outcome"]).startswith(f"liar.pdf has more than {MAX_PAGES:,} pages"), seen


def test_the_cli_shows_progress_and_stops_on_ctrl_c_with_nothing_added(home: Path, tmp_path: Path) -> None:
    big = _pdf(tmp_path / "big.pdf", PAGES)
    sid = ok(cks(home, "sessions", "create", "Docs")).strip()
    with subprocess.Popen([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "documents", "add",
                           "--session", sid, str(big)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=ENV) as proc:
        lines = _stop_when_reading(proc)
    assert lines[-1] == "cks-desktop: stopped; nothing was added.\n", lines
    assert all(line.startswith("Reading big.pdf: ") for line in lines[:-1]), lines
    assert ok(cks(home, "documents", "list", "--session", sid, "--json")).count('"id"') == 0


def _stop_when_reading(proc: subprocess.Popen[str]) -> list[str]:
    """Wait for a progress line past the first, send SIGINT, return every stderr line."""
    lines: list[str] = []
    progressed = threading.Event()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if re.match(r"Reading big\.pdf: [\d,]+ of 1,500 pages…", line) and not line.startswith("Reading big.pdf: 0 "):
                progressed.set()
        progressed.set()  # the process ended: the assertion below tells whether progress was seen

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    assert progressed.wait(60)
    assert proc.poll() is None, f"the read ended before it could be stopped: {lines}"
    os.kill(proc.pid, signal.SIGINT)  # what Ctrl+C sends
    assert proc.wait(60) == 130
    reader.join(10)
    return lines


@pytest.mark.asyncio
async def test_the_windows_add_shows_progress_and_cancel_stops_it_with_nothing_added(qtbot, home: Path,
                                                                                      tmp_path: Path) -> None:
    from tests.ui.conftest import open_window
    from tests.ui.helpers import signal_future, wait

    big = _pdf(tmp_path / "big.pdf", 3 * PAGES)  # the window's first paint and dialog take a while under load
    async with open_window(home) as window:
        window.sidebar.create_session()
        sid = window.current_session
        intake = window.documents
        shown = signal_future(intake.progressShown)
        failed = signal_future(intake.failed)
        task = window.tasks.spawn(intake.add_paths([big]), name="add-big")
        (dialog,) = await wait(shown, 60)
        assert dialog.isVisible() and dialog.labelText().startswith(("Reading big.pdf: page ", "Opening big.pdf"))
        started = time.monotonic()
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QPushButton

        (button,) = dialog.findChildren(QPushButton)
        assert button.text() == "Cancel"
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        (sentence,) = await wait(failed, 30)
        assert sentence == "Stopped: nothing was added." and time.monotonic() - started < 5
        assert await wait(task) is None
        assert DocumentStore(window.services.store).list_documents(sid) == []
