"""`cks-desktop documents add|list|show|remove` in a real subprocess."""

from __future__ import annotations

import pytest

import json
from pathlib import Path

from tests.documents.files import docx_file, pdf_bytes, scanned_pdf

from .test_cli import as_json, cks, home, ok, one_line_error  # noqa: F401  (home is a fixture)


@pytest.mark.slow
def test_add_list_show_remove_and_export(home: Path, tmp_path: Path) -> None:
    sid = ok(cks(home, "sessions", "create", "Docs")).strip()
    (tmp_path / "notes.md").write_text("# Notes\n\nAda met Bob.\n")
    (tmp_path / "paper.pdf").write_bytes(pdf_bytes(["Page one", "Page two"]))
    word = docx_file(tmp_path / "letter.docx", ["Dear Ada,"])
    scan = scanned_pdf(tmp_path / "scan.pdf")
    (tmp_path / "empty.txt").write_bytes(b"")

    out = cks(home, "documents", "add", "--session", sid, str(tmp_path / "notes.md"), str(tmp_path / "paper.pdf"),
              str(word), str(scan), str(tmp_path / "empty.txt"), "--json")
    assert out.returncode == 1 and "Traceback" not in out.stderr  # some refused, the rest added
    result = json.loads(out.stdout)
    assert [d["name"] for d in result["added"]] == ["notes.md", "paper.pdf", "letter.docx"]
    assert [r["file"] for r in result["refused"]] == [str(scan), str(tmp_path / "empty.txt")]
    assert out.stderr.count("\n") == 2 and "no text layer" in out.stderr and "0 bytes" in out.stderr

    again = ok(cks(home, "documents", "add", "-s", sid, str(tmp_path / "notes.md")))
    assert again.startswith("Already in the session: notes.md")
    listed = as_json(cks(home, "documents", "list", "--session", sid, "--json"))["documents"]
    assert [(d["name"], d["pages"]) for d in listed] == [("notes.md", 0), ("paper.pdf", 2), ("letter.docx", 0)]
    shown = ok(cks(home, "documents", "show", "--session", sid, "paper.pdf", "--text"))
    assert "2 pages" in shown and shown.endswith("Page one\n\nPage two\n")
    by_prefix = as_json(cks(home, "documents", "show", "-s", sid, listed[0]["id"][:8], "--json", "--text"))
    assert by_prefix["text"] == "# Notes\n\nAda met Bob.\n"

    exported = tmp_path / "export.json"
    ok(cks(home, "sessions", "export", sid, "--format", "json", "-o", str(exported)))
    other = ok(cks(home, "sessions", "create", "Copy")).strip()
    imported = as_json(cks(home, "sessions", "import", other, str(exported), "--format", "json", "--json"))
    assert imported["documents_added"] == 3

    removed = ok(cks(home, "documents", "remove", "--session", sid, "letter.docx"))
    assert removed.startswith("Removed letter.docx")
    assert one_line_error(cks(home, "documents", "remove", "--session", sid, "letter.docx")) \
        == "cks-desktop: The session has no document 'letter.docx' (see: cks-desktop documents list)."


def test_failures_are_one_line_and_add_nothing(home: Path, tmp_path: Path) -> None:
    sid = ok(cks(home, "sessions", "create", "Docs")).strip()
    line = one_line_error(cks(home, "documents", "add", "--session", sid, str(tmp_path / "missing.pdf")))
    assert line.endswith("missing.pdf does not exist.")
    (tmp_path / "a.txt").write_text("text")
    assert "No session" in one_line_error(cks(home, "documents", "add", "--session", "s_nope", str(tmp_path / "a.txt")))
    err = as_json(cks(home, "documents", "list", "--session", "s_nope", "--json"))
    assert "No session" in err["error"]
    assert as_json(cks(home, "documents", "list", "--session", sid, "--json"))["documents"] == []
