"""Counts agree with their noun everywhere a person reads them ("1 object", never "1 objects").

Three layers: the helper, a scan of the sources that print counts (ui and commands) for a number
written straight before a plural noun or an "(s)", and the real CLI on a one-object session.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from cks_desktop.plural import counted, noun

ROOT = Path(__file__).resolve().parents[2]
SCANNED = [ROOT / "cks_desktop" / "ui", ROOT / "cks_desktop" / "commands"]
# "{n} objects", "{len(x):,} tools", "{count} server(s)": a count glued to a fixed plural.
FIXED_PLURAL = re.compile(r"\{[^{}]*\}\s+(?:(?:more|oldest|new|other|hidden|selected|MCP) )?"
                          r"(objects|relations|tools|servers|models|messages|changes|errors|items|types|sessions|"
                          r"calls|problems|hops|exchanges|results|files)\b(?!:)"
                          r"|\{[^{}]*\}\s+[A-Za-z ]+\(s\)")


def test_the_helper_agrees_with_the_number() -> None:
    assert counted(1, "object") == "1 object" and counted(0, "object") == "0 objects"
    assert counted(2, "relation") == "2 relations" and counted(12000, "object", grouped=True) == "12,000 objects"
    assert counted(1, "MCP server") == "1 MCP server" and counted(3, "child", "children") == "3 children"
    assert noun(1, "it", "them") == "it" and noun(2, "it", "them") == "them"


def test_no_count_is_glued_to_a_fixed_plural_in_the_sources() -> None:
    found = []
    for folder in SCANNED:
        for path in sorted(folder.rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if ("f\"" in line or "f'" in line) and FIXED_PLURAL.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "use cks_desktop.plural.counted:\n" + "\n".join(found)


def test_cli_lists_a_one_object_session_in_the_singular(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CKS_DESKTOP_HOME"}

    def cks(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(tmp_path), *args],
                              capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    sid = cks("sessions", "create", "One").strip()
    cks("tools", "call", "add_object", "--session", sid, "--args", '{"type": "Person", "name": "Ada"}')
    listed = cks("sessions", "list")
    assert " 1 object " in listed and " 0 relations " in listed and "1 objects" not in listed
