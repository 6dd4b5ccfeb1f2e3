"""First-start-to-window time: from spawning ``python`` to the main window's first Show event.

    .venv/bin/python bench/startup.py [--runs 5] [--platform offscreen] [--ab]

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


def one_run(platform: str, variant: str = "") -> float:
    with tempfile.TemporaryDirectory(prefix="cks-bench-start-") as home:
        env = dict(os.environ, QT_QPA_PLATFORM=platform, CKS_DESKTOP_HOME=home, PYTHONPYCACHEPREFIX=PYCACHE)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # see PYCACHE
        start = time.time()
        out = subprocess.run([sys.executable, "-c", CHILD, home, variant], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=60)
        for line in out.stdout.splitlines():
            if line.startswith("SHOWN "):
                return float(line.split()[1]) - start
        raise SystemExit(f"the window never showed:\n{out.stderr[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--platform", default="offscreen")
    parser.add_argument("--ab", action="store_true",
                        help="alternate runs with and without the theme (ui/theme.install) and compare")
    args = parser.parse_args()
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
