"""Guards that keep the architecture and the platform pins honest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_hold() -> None:
    """import-linter: only ui/ and app.py import Qt; layers point one way."""
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint), "--no-cache"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_core_import_does_not_load_qt_or_sdks() -> None:
    """The CLI and core import without Qt and without the provider/MCP SDKs (start-up cost)."""
    code = (
        "import sys, cks_desktop.cli, cks_desktop.tools.registry, cks_desktop.graph.store, cks_desktop.llm;"
        "bad=[m for m in ('PySide6','qasync','anthropic','openai','google.genai','mcp') if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == ""


def test_pyside6_pin_is_safe_for_this_python() -> None:
    """PySide6 6.12.0 frees None/True on CPython 3.11 (STACK.md §1a): refuse that combination."""
    from PySide6 import __version_info__ as qt_version

    if sys.version_info < (3, 12):
        assert tuple(qt_version[:2]) < (6, 12), f"PySide6 {qt_version} crashes on Python 3.11"


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None/True are immortal on 3.12+")
def test_refcounts_survive_process_events_and_emit(qapp) -> None:
    """The crash's mechanism: refcounts of None/True must not drop across Qt calls."""
    from PySide6.QtCore import QCoreApplication, QObject, Signal

    class Emitter(QObject):
        fired = Signal()

    emitter = Emitter()
    emitter.fired.connect(lambda: None)
    before = (sys.getrefcount(None), sys.getrefcount(True))
    for _ in range(200):
        QCoreApplication.processEvents()
        emitter.fired.emit()
    after = (sys.getrefcount(None), sys.getrefcount(True))
    assert after[0] - before[0] > -50 and after[1] - before[1] > -50, (before, after)


def test_product_code_speaks_of_behaviour_not_of_the_issue_that_asked_for_it() -> None:
    """No "issue 16" in the product's code or docstrings: a reader outside the tracker learns nothing from it."""
    import re

    pattern = re.compile(r"\b[Ii]ssues? ?#?\d+")
    hits = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "cks_desktop").rglob("*.py"))
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if pattern.search(line) and "github.com" not in line]
    assert hits == []
