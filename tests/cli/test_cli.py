"""The real `cks-desktop` in a subprocess against a temporary --data-dir.

Each subprocess costs ~0.3 s, so each test walks a whole scenario.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ENV = {k: v for k, v in os.environ.items() if k != "CKS_DESKTOP_HOME"}


def cks(data_dir: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(data_dir), *args],
                          capture_output=True, text=True, timeout=60, input=stdin, env=ENV)


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


def as_json(proc: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(proc.stdout)  # exactly one document, or this raises


def one_line_error(proc: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def tool(data_dir: Path, name: str, session: str, args: dict[str, Any], *extra: str) -> Any:
    proc = cks(data_dir, "tools", "call", name, "--session", session, "--args", json.dumps(args), "--json", *extra)
    return proc, as_json(proc)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_session_lifecycle(home: Path) -> None:
    sid = ok(cks(home, "sessions", "create", "Research")).strip()
    assert sid.startswith("s_") and "\n" not in sid
    other = as_json(cks(home, "sessions", "create", "Scratch", "--json"))
    assert other["title"] == "Scratch" and other["id"] != sid
    listed = as_json(cks(home, "sessions", "list", "--json"))["sessions"]
    assert {s["id"]: s["title"] for s in listed} == {sid: "Research", other["id"]: "Scratch"}
    assert as_json(cks(home, "sessions", "rename", sid, "Research notes", "--json"))["title"] == "Research notes"
    ok(tool(home, "add_object", sid, {"type": "Person", "name": "Ada"})[0])
    shown = ok(cks(home, "sessions", "show", sid))
    assert "Research notes" in shown and "Objects:    1" in shown and "Person (1)" in shown
    assert "adds 1 object" in shown
    ok(cks(home, "sessions", "delete", other["id"]))
    assert "Scratch" not in ok(cks(home, "sessions", "list"))
    missing = cks(home, "sessions", "show", other["id"], "--json")
    assert other["id"] in one_line_error(missing)
    assert "error" in as_json(missing)  # --json: still one JSON document


@pytest.mark.slow
def test_export_import_round_trip(home: Path, tmp_path: Path) -> None:
    src = ok(cks(home, "sessions", "create", "Source")).strip()
    proc, result = tool(home, "evolve_knowledge", src, {"operations": [
        {"op": "add_object", "type": "Person", "name": "Ada", "label": "$a", "properties": {"born": 1815}},
        {"op": "add_object", "type": "Machine", "name": "Engine", "label": "$e"},
        {"op": "add_relation", "source": "$a", "target": "$e", "type": "wrote_about"}]})
    ok(proc)
    assert result["structured"]["status"] == "applied"
    out = tmp_path / "graph.json"
    ok(cks(home, "sessions", "export", src, "--format", "json", "--output", str(out)))
    dst = ok(cks(home, "sessions", "create", "Copy")).strip()
    imported = as_json(cks(home, "sessions", "import", dst, str(out), "--format", "json", "--json"))
    assert imported["change_id"] and imported["counts"]["objects_added"] == 2

    def shape(doc: dict[str, Any]) -> Any:
        names = {o["id"]: o["name"] for o in doc["objects"]}
        return (sorted((o["type"], o["name"], json.dumps(o["properties"], sort_keys=True)) for o in doc["objects"]),
                sorted((r["type"], names[r["source_id"]], names[r["target_id"]]) for r in doc["relations"]))

    copy = json.loads(ok(cks(home, "sessions", "export", dst, "--format", "json")))
    assert copy["format"] == "cks-graph" and shape(copy) == shape(json.loads(out.read_text()))
    jsonl = ok(cks(home, "sessions", "export", src, "--format", "memory-jsonl"))
    third = ok(cks(home, "sessions", "create", "From memory")).strip()
    ok(cks(home, "sessions", "import", third, "-", "--format", "memory-jsonl", stdin=jsonl))
    assert ok(cks(home, "sessions", "export", third, "--format", "memory-jsonl")).splitlines() == jsonl.splitlines()
    bad = cks(home, "sessions", "import", third, str(tmp_path / "nope.json"), "--format", "json")
    assert "nope.json" in one_line_error(bad)


def test_tools_list(home: Path) -> None:
    offered = as_json(cks(home, "tools", "list", "--json"))["tools"]
    names = {t["name"] for t in offered}
    assert len(names) == 24 and {"evolve_knowledge", "construct_knowledge", "read_mcp_resource"} <= names
    assert "create_session" not in names
    assert all("session_id" not in t["input_schema"]["properties"] for t in offered)
    everything = {t["name"]: t for t in as_json(cks(home, "tools", "list", "--all", "--json"))["tools"]}
    assert len(everything) == 29 and everything["delete_session"]["llm_exposed"] is False
    text = ok(cks(home, "tools", "list"))
    assert "graph_summary" in text and "delete_session" not in text


def test_tools_call_exit_codes_and_approval(home: Path) -> None:
    sid = ok(cks(home, "sessions", "create", "Calls")).strip()
    proc, added = tool(home, "add_object", sid, {"type": "Person", "name": "Ada"})
    ok(proc)
    assert set(added) == {"call_id", "name", "is_error", "content", "structured", "outcome", "change_id"}
    assert added["name"] == "add_object" and added["is_error"] is False
    assert added["outcome"] == "ok" and added["change_id"] == added["structured"]["change_id"]
    assert added["structured"]["object"]["name"] == "Ada"

    proc, missing = tool(home, "get_object", sid, {"ref": "Nobody"})
    assert proc.returncode == 1 and missing["is_error"] and "Nobody" in missing["content"]

    bad_json = cks(home, "tools", "call", "get_object", "--session", sid, "--args", "{ref: Ada}")
    assert "--args is not valid JSON" in one_line_error(bad_json)
    invalid = cks(home, "tools", "call", "get_object", "--session", sid, "--args", '{"ref": 5}')
    assert invalid.returncode == 2 and "at ref" in invalid.stderr
    no_session = cks(home, "tools", "call", "graph_summary", "--session", "s_nope", "--args", "{}")
    assert "s_nope" in one_line_error(no_session)
    unknown = cks(home, "tools", "call", "frobnicate", "--session", sid)
    assert "Unknown tool" in one_line_error(unknown)

    denied = cks(home, "tools", "call", "remove_object", "--session", sid, "--args", '{"ref": "Ada"}')
    assert denied.returncode == 1 and "--yes" in denied.stderr and "Traceback" not in denied.stderr
    # Allowed, the same call finds Ada: the denied one wrote nothing.
    proc, removed = tool(home, "remove_object", sid, {"ref": "Ada"}, "--yes")
    ok(proc)
    assert removed["structured"]["removed"]["name"] == "Ada" and removed["structured"]["change_id"]


def test_broken_databases_give_one_line(home: Path) -> None:
    home.mkdir()
    db = home / "cks.sqlite3"
    db.write_bytes(b"this is not a database" * 100)
    before = db.read_bytes()
    for args in (("sessions", "list"), ("tools", "call", "graph_summary", "--session", "s_x", "--args", "{}")):
        proc = cks(home, *args)
        assert proc.returncode != 0 and proc.stdout == ""
        line = one_line_error(proc, proc.returncode)
        assert "cks.sqlite3" in line or "database" in line.lower()
    assert db.read_bytes() == before  # nothing was written to it

    db.unlink()
    ok(cks(home, "sessions", "create", "x"))
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 999")
    conn.close()
    too_new = cks(home, "sessions", "list", "--json")
    assert "newer" in one_line_error(too_new).lower()
    assert "error" in as_json(too_new)


def test_settings_reach_the_cli(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.txt").write_text("from the allowed folder\n", encoding="utf-8")
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"agent": {"allowed_folders": [str(folder)],
                                                              "tool_policies": {"read_text_file": "auto"}}}))
    listed = {t["name"]: t for t in as_json(cks(home, "tools", "list", "--json"))["tools"]}
    assert listed["read_text_file"]["policy"] == "auto" and listed["read_text_file"]["default_policy"] == "always"
    proc = cks(home, "tools", "call", "read_text_file", "--args", json.dumps({"path": "note.txt"}))
    assert ok(proc) == "from the allowed folder\n"
