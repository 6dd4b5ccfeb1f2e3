"""Run a window script in a fresh process on an offscreen screen of a given size, for tests of
what fits on a small screen (the offscreen platform's screen size comes from a config file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def run_on_screen(tmp_path: Path, screen: tuple[int, int], script: str) -> dict[str, Any]:
    """Run ``script`` (given a fresh data folder as its argument) on a ``screen``-sized offscreen
    screen; returns the JSON object its last line printed."""
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "s", "x": 0, "y": 0, "width": screen[0],
                                               "height": screen[1], "logicalDpi": 96}]}), encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}", "PYTHONPATH": str(ROOT),
           "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    (tmp_path / "home").mkdir()
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "home")], capture_output=True, text=True,
                         env=env, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    shown: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return shown
