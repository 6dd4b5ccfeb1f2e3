"""The accessibility tree as a screen reader gets it: the real window under Xvfb on a private
D-Bus session, read over AT-SPI by the system's python3-pyatspi (tests/ui/a11y/probe.py).
Every control that shows has a name, and the graph canvas names the selected object.
Skipped, with the reason, where Xvfb, dbus-run-session or python3-pyatspi is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SYSTEM_PYTHON = "/usr/bin/python3"
CONTROLS = {"push button", "toggle button", "check box", "radio button", "combo box", "text", "entry",
            "spin button", "slider", "list", "tree", "table", "password text"}


def _missing() -> str | None:
    for tool in ("Xvfb", "dbus-run-session"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if not Path(SYSTEM_PYTHON).exists() or subprocess.run(
            [SYSTEM_PYTHON, "-c", "import pyatspi"], capture_output=True).returncode != 0:
        return "python3-pyatspi is not installed (apt-get install python3-pyatspi at-spi2-core)"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def test_every_shown_control_has_a_name_and_the_canvas_names_the_selection(tmp_path: Path) -> None:
    number = 70
    while Path(f"/tmp/.X11-unix/X{number}").exists() or Path(f"/tmp/.X{number}-lock").exists():
        number += 1
    server = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not Path(f"/tmp/.X11-unix/X{number}").exists():  # the server's socket: it is up
            assert time.monotonic() < deadline and server.poll() is None, "Xvfb did not start"
            time.sleep(0.05)
        env = {**os.environ, "DISPLAY": f":{number}", "QT_QPA_PLATFORM": "xcb",
               "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "PYTHONPATH": str(ROOT)}
        out = tmp_path / "tree.jsonl"
        run = subprocess.run(["dbus-run-session", "--", sys.executable, str(HERE / "a11y" / "app.py"),
                              str(tmp_path / "home"), str(out)], env=env, capture_output=True, text=True,
                             timeout=180, cwd=ROOT)
        assert run.returncode == 0, run.stderr[-2000:]
    finally:
        server.terminate()
        server.wait(10)
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    assert not [r for r in rows if "error" in r], rows[:1]
    shown = [r for r in rows if r["showing"]]
    assert len([r for r in shown if r["role"] == "push button"]) >= 20  # the real window, not an empty frame
    nameless = [(r["role"], r["path"]) for r in shown if r["role"] in CONTROLS and not r["name"].strip()]
    assert nameless == []
    assert any(r["name"] == "Graph canvas: Marie Curie (Person) selected" for r in shown)
    assert any(r["name"] == "Send the message" for r in shown)
