"""Qt bootstrap: QApplication + qasync loop, the quit flow (STACK.md R3)."""

from __future__ import annotations

import asyncio
import sys


def run_gui(data_dir: str | None = None, self_test: bool = False) -> int:
    from PySide6.QtWidgets import QApplication, QLabel
    import qasync

    app = QApplication.instance() or QApplication(sys.argv)
    app.setQuitOnLastWindowClosed(False)
    window = QLabel("CKS Desktop")
    window.setObjectName("mainWindow")

    async def amain() -> int:
        quit_requested = asyncio.Event()
        app.lastWindowClosed.connect(quit_requested.set)
        window.show()
        if self_test:
            await asyncio.sleep(0)
            return 0
        await quit_requested.wait()
        return 0

    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        return runner.run(amain())
