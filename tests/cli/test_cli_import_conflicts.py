"""`cks-desktop sessions import … --on-conflict` in a real subprocess, and a refusal that
names every one of 30 problems on stderr (one line, nothing left out)."""

from __future__ import annotations

import pytest

import json
from pathlib import Path

from .test_cli import as_json, cks, home, ok, one_line_error, tool  # noqa: F401  (home is a fixture)


@pytest.mark.slow
def test_on_conflict_choices_and_the_default_error(home: Path, tmp_path: Path) -> None:
    src = ok(cks(home, "sessions", "create", "Source")).strip()
    tool(home, "add_object", src, {"type": "Person", "name": "Ada", "properties": {"born": 1815}})
    out = tmp_path / "g.json"
    ok(cks(home, "sessions", "export", src, "--format", "json", "-o", str(out)))
    dst = ok(cks(home, "sessions", "create", "Target")).strip()
    tool(home, "add_object", dst, {"type": "Person", "name": "Ada", "properties": {"city": "London"}})

    refused = one_line_error(cks(home, "sessions", "import", dst, str(out), "--format", "json"))
    assert "Person 'Ada' is already in the session" in refused and "--on-conflict" in refused
    skipped = as_json(cks(home, "sessions", "import", dst, str(out), "--format", "json",
                          "--on-conflict", "skip", "--json"))
    assert skipped["change_id"] is None and skipped["counts"]["duplicates_skipped"] == 1
    merged = ok(cks(home, "sessions", "import", dst, str(out), "--format", "json", "--on-conflict", "merge"))
    assert "merges 1 object" in merged
    ok(cks(home, "sessions", "import", dst, str(out), "--format", "json", "--on-conflict", "rename"))
    doc = json.loads(ok(cks(home, "sessions", "export", dst, "--format", "json")))
    assert sorted((o["name"], json.dumps(o["properties"], sort_keys=True)) for o in doc["objects"]) == [
        ("Ada", '{"born": 1815, "city": "London"}'), ("Ada (2)", '{"born": 1815}')]
    bad = cks(home, "sessions", "import", dst, str(out), "--format", "json", "--on-conflict", "overwrite")
    assert bad.returncode == 2 and "invalid choice: 'overwrite'" in bad.stderr


def test_a_refused_import_names_all_thirty_problems(home: Path, tmp_path: Path) -> None:
    sid = ok(cks(home, "sessions", "create", "S")).strip()
    rels = [{"type": "r", "source_id": f"ghost {i}", "target_id": f"nobody {i}"} for i in range(30)]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": "cks-graph", "version": 1, "objects": [], "relations": rels}))
    line = one_line_error(cks(home, "sessions", "import", sid, str(path), "--format", "json"))
    assert line.count("No object 'ghost") == 30 and "30 problems" in line and "more" not in line
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text("\n".join("{not json" for _ in range(30)))
    line = one_line_error(cks(home, "sessions", "import", sid, str(jsonl), "--format", "memory-jsonl"))
    assert all(f"line {i} is not valid JSON" in line for i in range(1, 31))
