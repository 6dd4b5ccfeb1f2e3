"""The real window on a throwaway data folder with a small graph, one object selected; it runs
``probe.py`` with the system python3 against itself and writes its output to ``argv[2]``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))


async def run(home: Path, out: Path) -> int:
    from PySide6.QtWidgets import QApplication

    from cks_desktop.paths import resolve
    from cks_desktop.runtime import AppServices
    from cks_desktop.secrets import SecretStore
    from cks_desktop.ui import theme
    from cks_desktop.ui.main_window import MainWindow

    theme.install(QApplication.instance(), "light")
    services = AppServices.open(resolve(home), secrets=SecretStore(secure=False))
    window = MainWindow(services)
    window.resize(1200, 760)
    window.show()
    try:
        sid = window.sidebar.create_session()
        services.store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Marie Curie", "label": "$m"},
                                   {"op": "add_object", "type": "City", "name": "Paris", "label": "$p"},
                                   {"op": "add_relation", "source": "$m", "target": "$p", "type": "worked_in"}],
                             "person")
        window.open_session(sid)
        view = window.graph_view
        await view.sync.opened.wait()
        for _ in range(100):
            if "Marie Curie" in view.object_names():
                break
            await asyncio.sleep(0.05)
        oid = services.store.resolve(sid, "Marie Curie").id
        view.state.select(oid)
        view._selection_changed()
        probe = await asyncio.create_subprocess_exec(
            "/usr/bin/python3", str(Path(__file__).with_name("probe.py")), str(__import__("os").getpid()),
            stdout=asyncio.subprocess.PIPE)
        data, _ = await asyncio.wait_for(probe.communicate(), 90)
        out.write_bytes(data)
        return probe.returncode or 0
    finally:
        await window.shutdown()


def main() -> int:
    from PySide6.QtWidgets import QApplication

    from cks_desktop.ui.event_loop import AppEventLoop

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    with asyncio.Runner(loop_factory=lambda: AppEventLoop(app)) as runner:
        return runner.run(run(Path(sys.argv[1]), Path(sys.argv[2])))


if __name__ == "__main__":
    sys.exit(main())
