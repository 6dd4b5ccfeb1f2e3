"""The documents use case both front ends call: add files (per-file refusals, one transaction),
list, open, remove; and the reader registry the file filter and the CLI help read."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cks_desktop.documents.errors import DocumentError
from cks_desktop.documents.readers import registry
from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.store import GraphStore
from cks_desktop.runtime import UseCases
from cks_desktop.runtime.documents import DocumentsUseCase
from cks_desktop.settings import Settings
from tests.documents.files import docx_file, pdf_bytes, scanned_pdf


@pytest.fixture
def store(open_graph: Callable[[], GraphStore]) -> Iterator[GraphStore]:
    s = open_graph()  # SQLite and PostgreSQL: the documents' own SQL runs on both
    yield s
    s.close()


def _use(store: GraphStore, limit: int = 10**7) -> DocumentsUseCase:
    return DocumentsUseCase(store, lambda: limit)


def test_add_files_adds_the_readable_ones_and_names_each_refusal(store: GraphStore, tmp_path: Path) -> None:
    sid = store.create_session("Docs").id
    (tmp_path / "notes.md").write_text("# Notes\n\nAda met Bob.\n")
    (tmp_path / "paper.pdf").write_bytes(pdf_bytes(["Page one", "Page two"]))
    word = docx_file(tmp_path / "letter.docx", ["Dear Ada,"])
    scan = scanned_pdf(tmp_path / "scan.pdf")
    (tmp_path / "empty.txt").write_bytes(b"")
    files = [tmp_path / "notes.md", tmp_path / "paper.pdf", word, scan, tmp_path / "empty.txt",
             str(tmp_path / "missing.txt")]
    outcome = _use(store).add_files(sid, files)
    assert [d.name for d in outcome.added] == ["notes.md", "paper.pdf", "letter.docx"]
    assert [r.file for r in outcome.refused] == [str(scan), str(tmp_path / "empty.txt"), str(tmp_path / "missing.txt")]
    assert "no text layer" in outcome.refused[0].error and "0 bytes" in outcome.refused[1].error
    assert "does not exist" in outcome.refused[2].error and not outcome.nothing_added
    again = _use(store).add_files(sid, [tmp_path / "notes.md"])
    assert not again.added and [d.name for d in again.already] == ["notes.md"] and not again.refused
    assert [d.media_type for d in _use(store).list(sid)] == [
        "text/markdown", "application/pdf", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"]


def test_add_files_refuses_an_unknown_session_before_reading(store: GraphStore, tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        _use(store).add_files("no-such-session", [tmp_path / "missing.txt"])


def test_the_size_cap_comes_from_the_settings_at_each_add(store: GraphStore, tmp_path: Path) -> None:
    sid = store.create_session("Docs").id
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(json.dumps({"documents": {"max_file_mb": 0.001}}))  # about 1 kB
    (tmp_path / "big.txt").write_text("Ada " * 1000)
    documents = UseCases(store, Settings.load(settings_file)).documents
    outcome = documents.add_files(sid, [tmp_path / "big.txt"])
    assert outcome.nothing_added and "documents.max_file_mb" in outcome.refused[0].error


def test_open_and_remove_through_the_use_case(store: GraphStore, tmp_path: Path) -> None:
    sid = store.create_session("Docs").id
    (tmp_path / "notes.txt").write_text("Ada met Bob.\r\n")
    documents = _use(store)
    heard: list[str] = []
    unsubscribe = documents.subscribe(heard.append)
    try:
        doc = documents.add_files(sid, [tmp_path / "notes.txt"]).added[0]
        assert documents.open(sid, doc.id[:8]).text == "Ada met Bob.\n"
        found, orphans = documents.preview_removal(sid, "notes.txt")
        assert found.id == doc.id and orphans.empty
        removal = documents.remove(sid, "notes.txt", "keep", "user")
        assert removal.document.id == doc.id and documents.list(sid) == []
    finally:
        unsubscribe()
    assert heard == [sid, sid]
    with pytest.raises(DocumentError):
        documents.open(sid, "notes.txt")


def test_the_registry_has_one_record_per_format_and_feeds_the_filter_and_help() -> None:
    names = [f.name for f in registry.formats()]
    assert names == ["Text", "Markdown", "HTML", "PDF", "Word"]
    assert DocumentsUseCase.format_names() == "Text, Markdown, HTML, PDF, Word"
    shown = DocumentsUseCase.file_filter()
    assert all(f"*{suffix}" in shown for fmt in registry.formats() for suffix in fmt.suffixes)
    assert DocumentsUseCase.type_name("application/pdf") == "PDF"
    assert DocumentsUseCase.type_name("application/x-unknown") == "application/x-unknown"
    # magic bytes decide over the name; a ZIP counts as Word only when it is not named otherwise
    assert registry.detect("report.txt", b"%PDF-1.7").name == "PDF"
    assert registry.detect("letter", b"PK\x03\x04").name == "Word"
    assert registry.detect("archive.zip", b"PK\x03\x04").name == "Text"
    assert registry.detect("page.xhtml", b"<html>").name == "HTML"


NEW_READER = '''
from cks_desktop.documents.model import Extracted

def _read(data: bytes, name: str) -> Extracted:
    return Extracted(text=data.decode("ascii").upper())

FORMATS = (__import__("cks_desktop.documents.readers.registry", fromlist=["DocumentFormat"]).DocumentFormat(
    media_type="text/x-shout", name="Shout", suffixes=(".shout",), read=_read, reader_name=lambda: "shout 1"),)
'''


def test_a_new_format_is_one_module_in_the_readers_package(tmp_path: Path) -> None:
    """A reader module dropped beside the others is read, named in the file filter and in the CLI's
    help, and shown by its name in the documents list: nothing else names the formats."""
    import subprocess
    import sys

    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "shout_reader.py").write_text(NEW_READER, encoding="utf-8")
    (tmp_path / "a.shout").write_text("hello", encoding="ascii")
    code = f"""
import contextlib, io, sys
import cks_desktop.documents.readers as readers
readers.__path__.append({str(extra)!r})
from cks_desktop.documents.readers import read_path
from cks_desktop.runtime.documents import DocumentsUseCase
from cks_desktop import cli
doc = read_path(__import__("pathlib").Path({str(tmp_path / "a.shout")!r}), 10**6)
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
    cli.main(["documents", "--help"])
print(doc.media_type, doc.text, "*.shout" in DocumentsUseCase.file_filter(), DocumentsUseCase.type_name("text/x-shout"),
      "Shout" in out.getvalue())
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["text/x-shout", "HELLO", "True", "Shout", "True"]
