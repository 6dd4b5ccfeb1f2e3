"""`--self-test` says what it checked: one line on stdout, not a silent exit 0."""

from __future__ import annotations

import pytest

import os
import subprocess
import sys
from pathlib import Path

from cks_desktop.ui.selftest import CHECKED

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_passing_self_test_prints_one_line_naming_its_checks(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "CKS_DESKTOP_HOME": str(tmp_path / "untouched")}
    proc = subprocess.run([sys.executable, "-m", "cks_desktop", "--self-test"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, proc.stdout
    line = lines[0]
    assert line.startswith("cks-desktop: self-test passed (on the offscreen display, in a throwaway data folder)")
    assert all(check in line for check in CHECKED)
    assert proc.stderr.strip() == ""
