"""First-start-to-window time: from spawning ``python`` to the main window's first Show event.

    .venv/bin/python bench/startup.py [--runs 5] [--platform offscreen] [--ab] [--floor]

``--floor`` measures beside the floor, interleaved in one run: a process that imports
``PySide6.QtWidgets`` and shows an empty ``QMainWindow`` (the least any Qt window costs), the app
on a fresh data folder (a first start) and the app on an existing one (an ordinary start); it
prints the machine's load and each median's ratio to the floor's (target: 1.5x or less).

Each run is a fresh process on a fresh data folder (a first start: one session is created),
started the way a person starts the app (``cks_desktop.app.run_gui``). The child prints the
wall-clock time of the window's Show event and closes the window at once; the parent prints each
run and the median. The first run warms the disk cache and is reported but left out of the median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A warm start reads cached bytecode, as an installed app does: with PYTHONDONTWRITEBYTECODE set
# (as in some shells and CI) every run compiled each of our ~150 modules again (about 0.4 s on
# 2 busy cores). The cache lives outside the tree; the first, uncounted run fills it.
PYCACHE = str(Path(tempfile.gettempdir()) / "cks-bench-startup-pycache")

CHILD = r"""
import sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

app = QApplication(sys.argv[:1])

class Probe(QObject):
    done = False
    def eventFilter(self, obj, event):
        if not self.done and event.type() == QEvent.Type.Show and isinstance(obj, QMainWindow):
            self.done = True
            print(f"SHOWN {time.time():.6f}", flush=True)
            QTimer.singleShot(0, obj.close)
        return False

probe = Probe()
app.installEventFilter(probe)
if len(sys.argv) > 2 and sys.argv[2] == "no-theme":  # the A/B baseline: the same start without the design
    import cks_desktop.ui.theme as theme
    theme.install = lambda *args, **kwargs: None
    theme.normal_mode = lambda value: "system"
from cks_desktop.app import run_gui
sys.exit(run_gui(sys.argv[1]))
"""


FLOOR = r"""
import sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

app = QApplication(sys.argv[:1])

class Probe(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Show and isinstance(obj, QMainWindow):
            print(f"SHOWN {time.time():.6f}", flush=True)
            QTimer.singleShot(0, app.quit)
        return False

probe = Probe()
app.installEventFilter(probe)
window = QMainWindow()
window.show()
app.exec()
"""


def _spawn(code: str, platform: str, home: str, variant: str = "") -> float:
    env = dict(os.environ, QT_QPA_PLATFORM=platform, CKS_DESKTOP_HOME=home, PYTHONPYCACHEPREFIX=PYCACHE)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # see PYCACHE
    start = time.time()
    out = subprocess.run([sys.executable, "-c", code, home, variant], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    for line in out.stdout.splitlines():
        if line.startswith("SHOWN "):
            return float(line.split()[1]) - start
    raise SystemExit(f"the window never showed:\n{out.stderr[-2000:]}")


def one_run(platform: str, variant: str = "") -> float:
    with tempfile.TemporaryDirectory(prefix="cks-bench-start-") as home:
        return _spawn(CHILD, platform, home, variant)


def floor_table(platform: str, runs: int) -> None:
    """The floor, a first start and an ordinary start, interleaved; medians and ratios."""
    with tempfile.TemporaryDirectory(prefix="cks-bench-existing-") as existing:
        _spawn(CHILD, platform, existing)  # makes the data folder (and warms the caches)
        _spawn(FLOOR, platform, existing)
        rows: dict[str, list[float]] = {"floor": [], "fresh": [], "existing": []}
        for _ in range(runs):
            rows["floor"].append(_spawn(FLOOR, platform, existing))
            rows["fresh"].append(one_run(platform))
            rows["existing"].append(_spawn(CHILD, platform, existing))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    floor = statistics.median(rows["floor"])
    print(f"load average (1 min): {load:.2f}; {runs} interleaved runs each")
    print("what                                   median s   ratio to floor")
    names = {"floor": "floor: QtWidgets + empty QMainWindow", "fresh": "app, fresh data folder",
             "existing": "app, existing data folder"}
    for key, label in names.items():
        median = statistics.median(rows[key])
        print(f"{label:<38} {median:>8.3f}   {median / floor:>6.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--platform", default="offscreen")
    parser.add_argument("--ab", action="store_true",
                        help="alternate runs with and without the theme (ui/theme.install) and compare")
    parser.add_argument("--floor", action="store_true",
                        help="interleave with the bare Qt window and an existing data folder; ratios")
    args = parser.parse_args()
    if args.floor:
        floor_table(args.platform, args.runs)
        return
    if args.ab:
        one_run(args.platform)
        pairs = [(one_run(args.platform, "no-theme"), one_run(args.platform)) for _ in range(args.runs)]
        print("run  without theme  with theme")
        for i, (a, b) in enumerate(pairs):
            print(f"{i:>3}  {a:>13.3f}  {b:>10.3f}")
        print(f"median without {statistics.median(a for a, _ in pairs):.3f} s, "
              f"with {statistics.median(b for _, b in pairs):.3f} s")
        return
    times = [one_run(args.platform) for _ in range(args.runs + 1)]
    print("run  seconds")
    for i, t in enumerate(times):
        print(f"{i:>3}  {t:.3f}{'  (cold, not counted)' if i == 0 else ''}")
    print(f"median of {args.runs} warm runs: {statistics.median(times[1:]):.3f} s")


if __name__ == "__main__":
    main()
