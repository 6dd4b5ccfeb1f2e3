"""The reference server ``@modelcontextprotocol/server-everything``, installed from npm once per machine.

Shared by the tests that run it: the manager and CLI tests (tests/mcp/test_callbacks_cli.py) and the
whole window (tests/ui/test_everything_window.py). A machine without npm, or where npm cannot fetch
the package, skips those tests with the reason instead of failing.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

EVERYTHING_CACHE = Path("/tmp/cks-test-npm-everything")  # installed once, reused by later runs


def everything_entry() -> Path:
    """The installed server-everything entry point; skip (with the reason) when npm cannot fetch it."""
    entry = EVERYTHING_CACHE / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if entry.exists():
        return entry
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm and node are needed to install @modelcontextprotocol/server-everything")
    EVERYTHING_CACHE.mkdir(parents=True, exist_ok=True)
    try:
        p = subprocess.run(["npm", "install", "--prefix", str(EVERYTHING_CACHE), "--no-audit", "--no-fund",
                            "@modelcontextprotocol/server-everything"], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.skip("npm did not install @modelcontextprotocol/server-everything within 300 s")
    if p.returncode != 0 or not entry.exists():
        pytest.skip(f"npm could not install @modelcontextprotocol/server-everything: {p.stderr.strip()[-300:]}")
    return entry
