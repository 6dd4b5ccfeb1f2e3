"""Documents in a session: real files in each format, each failure case with
its one sentence, dedup, one transaction, and the documents section of the JSON export."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cks_desktop.documents.errors import DocumentError, UnreadableDocument
from cks_desktop.documents.exchange import export_json, import_json
from cks_desktop.documents.readers import DOCX, HTML, MARKDOWN, PDF, TEXT, read_path
from cks_desktop.settings import Documents, Settings
from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.schema import schema_version
from cks_desktop.graph.store import GraphStore

from tests.pgfixtures import open_graph, pg_cluster, pg_url  # noqa: F401

from .files import HOSTILE_HTML, docx_file, encrypted_pdf, pdf_bytes, scanned_pdf

MB = 1024 * 1024


@pytest.fixture
def store(open_graph: Callable[[], GraphStore]) -> Iterator[GraphStore]:
    s = open_graph()  # SQLite and PostgreSQL: the document store's own SQL runs on both
    yield s
    s.close()


def _write(path: Path, data: bytes | str) -> Path:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_each_format_reads_to_text_with_pages_kept(tmp_path: Path) -> None:
    txt = read_path(_write(tmp_path / "a.txt", "Ada\r\nmet Bob.\r\n"), MB)
    assert (txt.media_type, txt.text, txt.page_starts) == (TEXT, "Ada\nmet Bob.\n", ())
    md = read_path(_write(tmp_path / "a.md", "# Title\n\n*Ada*"), MB)
    assert md.media_type == MARKDOWN and md.text == "# Title\n\n*Ada*"
    pdf = read_path(_write(tmp_path / "p.pdf", pdf_bytes(["First page (Ada)", "Second page Bob", "Third"])), MB)
    assert pdf.media_type == PDF and pdf.reader.startswith("pypdf ")
    assert [pdf.text[s:s + 5] for s in pdf.page_starts] == ["First", "Secon", "Third"]
    doc = read_path(docx_file(tmp_path / "w.docx", ["Hello Ada", "", "Bye"], [["name", "city"], ["Bob", "Oslo"]]),
                    MB)
    assert doc.media_type == DOCX and doc.text == "Hello Ada\nBye\nname\tcity\nBob\tOslo"
    assert len(txt.sha256) == 64 and txt.source == os.path.abspath(tmp_path / "a.txt") and txt.size == 15


def test_hostile_html_keeps_only_readable_text(tmp_path: Path) -> None:
    doc = read_path(_write(tmp_path / "h.html", HOSTILE_HTML), MB)
    assert doc.media_type == HTML
    assert doc.text == "Report\n\nFindings\n\nAda Lovelace worked with Charles Babbage.\n\nThe end & more."
    for word in ("attacker", "fetch", "alert", "svg text", "template text", "enable scripts", "tracker"):
        assert word not in doc.text


@pytest.mark.slow
def test_ten_megabytes_of_nesting_is_read_without_recursion(tmp_path: Path) -> None:
    depth = 1_000_000  # "<div>" + "</div>" a level: 11 MB
    path = _write(tmp_path / "deep.html", "<div>" * depth + "deep inside" + "</div>" * depth
                  + "<svg>" * 1000 + "hidden" + "<p>after</p>")
    assert path.stat().st_size > 10 * MB
    assert read_path(path, 100 * MB).text == "deep inside"


@pytest.mark.parametrize("case, expected", [
    ("empty", "is empty (0 bytes)"),
    ("too_big", "larger than the 1.0 MB a document may be (Settings key documents.max_file_mb)"),
    ("scanned", "has no text layer (a scanned PDF?)"),
    ("encrypted", "is an encrypted PDF protected by a password"),
    ("corrupt_pdf", "is not a PDF that can be read"),
    ("corrupt_docx", "is not a Word document that can be read"),
    ("zip_not_docx", "is a ZIP file but not a Word document"),
    ("binary", "is not a text file"),
    ("blank_text", "contains no readable text"),
    ("scripts_only", "contains no readable text"),
    ("nul_bytes", "contains no readable text"),
    ("control_only", "contains no readable text"),
    ("missing", "does not exist"),
    ("folder", "is a folder"),
])
def test_a_file_that_cannot_be_read_gets_one_sentence(tmp_path: Path, case: str, expected: str) -> None:
    import zipfile

    path = tmp_path / f"{case}.bin"
    if case == "empty":
        path = _write(tmp_path / "e.txt", b"")
    elif case == "too_big":
        path = _write(tmp_path / "big.txt", b"x" * (MB + 1))
    elif case == "scanned":
        path = scanned_pdf(tmp_path / "scan.pdf")
    elif case == "encrypted":
        path = encrypted_pdf(tmp_path / "locked.pdf")
    elif case == "corrupt_pdf":
        path = _write(tmp_path / "bad.pdf", pdf_bytes(["text"])[:70])
    elif case == "corrupt_docx":
        path = _write(tmp_path / "bad.docx", b"PK\x03\x04 truncated")
    elif case == "zip_not_docx":
        path = tmp_path / "other.docx"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("hello.txt", "hi")
    elif case == "binary":
        path = _write(tmp_path / "blob.dat", bytes(range(256)) * 4)
    elif case == "blank_text":
        path = _write(tmp_path / "blank.md", " \n\t\n")
    elif case == "nul_bytes":  # was added as a document of "0 characters"
        path = _write(tmp_path / "zeros.txt", b"\x00" * 4096)
    elif case == "control_only":
        path = _write(tmp_path / "ctl.txt", b"\x00\x01\x02\x1b\x7f \n\t\x00")
    elif case == "scripts_only":
        path = _write(tmp_path / "s.html", "<script>alert(1)</script><style>p{}</style>")
    elif case == "folder":
        path = tmp_path / "dir"
        path.mkdir()
    with pytest.raises(UnreadableDocument) as info:
        read_path(path, MB)
    message = str(info.value)
    assert expected in message and "\n" not in message and message.endswith(".")


def test_the_size_cap_is_checked_before_reading(tmp_path: Path) -> None:
    sparse = tmp_path / "huge.txt"
    with sparse.open("wb") as handle:  # 500 MB on paper, nothing on disk: reading it would take seconds
        handle.truncate(500 * MB)
    started = time.perf_counter()
    with pytest.raises(UnreadableDocument, match=r"huge.txt is 500.0 MB, larger than the 100.0 MB"):
        read_path(sparse, Documents().max_file_bytes)
    assert time.perf_counter() - started < 1.0
    assert Settings(tmp_path / "s.json", {"documents": {"max_file_mb": 2}}).section(Documents).max_file_bytes == 2 * MB
    odd = Settings(tmp_path / "s.json", {"documents": {"max_file_mb": "lots"}})
    assert odd.section(Documents).max_file_bytes == 100 * MB and "documents.max_file_mb" in (odd.problem or "")


@contextlib.contextmanager
def _inserting_fails(store: GraphStore, name: str) -> Iterator[None]:
    """The database refuses to insert the document called ``name`` (a trigger, on either backend)."""
    if getattr(store, "backend", "sqlite") == "postgresql":
        import psycopg

        with psycopg.connect(str(store.path), autocommit=True) as conn:
            conn.execute("CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                         f"IF NEW.name = '{name}' THEN RAISE EXCEPTION 'disk trouble'; END IF; RETURN NEW; END $$")
            conn.execute("CREATE TRIGGER boom BEFORE INSERT ON documents FOR EACH ROW EXECUTE FUNCTION boom()")
        try:
            yield
        finally:
            with psycopg.connect(str(store.path), autocommit=True) as conn:
                conn.execute("DROP TRIGGER boom ON documents")
                conn.execute("DROP FUNCTION boom()")
        return
    store._conn.execute(f"CREATE TRIGGER boom BEFORE INSERT ON documents WHEN NEW.name = '{name}' "
                        "BEGIN SELECT RAISE(ABORT, 'disk trouble'); END")
    try:
        yield
    finally:
        store._conn.execute("DROP TRIGGER boom")


def test_store_dedups_by_content_and_adds_in_one_transaction(store: GraphStore, tmp_path: Path) -> None:
    assert schema_version() >= 5
    sid = store.create_session("S").id
    docs = DocumentStore(store)
    a = read_path(_write(tmp_path / "a.txt", "Same bytes"), MB)
    copy = read_path(_write(tmp_path / "copy-of-a.md", "Same bytes"), MB)
    pdf = read_path(_write(tmp_path / "p.pdf", pdf_bytes(["One", "Two"])), MB)
    first = docs.add(sid, [a, copy, pdf])
    assert [d.name for d in first.added] == ["a.txt", "p.pdf"] and [d.name for d in first.already] == ["a.txt"]
    again = docs.add(sid, [pdf])
    assert not again.added and again.already[0].id == pdf.sha256
    listed = docs.list_documents(sid)
    assert [(d.name, d.pages, d.characters) for d in listed] == [("a.txt", 0, 10), ("p.pdf", 2, 8)]
    shown = docs.get(sid, pdf.sha256[:8])
    assert shown.text == "One\n\nTwo" and shown.page_of(5) == 2 and shown.page_of(0) == 1
    assert docs.get(sid, "a.txt").text == "Same bytes"
    with pytest.raises(DocumentError, match="has no document"):
        docs.resolve(sid, "nothing")
    other = store.create_session("Other").id
    assert docs.add(other, [a]).added  # per session: the same file can be in two sessions

    # A failure in the middle of an add rolls back the documents written before it.
    txt = read_path(_write(tmp_path / "new.txt", "new"), MB)
    word = read_path(docx_file(tmp_path / "w.docx", ["x"]), MB)
    with _inserting_fails(store, "w.docx"), pytest.raises(StoreError):
        docs.add(sid, [txt, word])
    assert [d.name for d in docs.list_documents(sid)] == ["a.txt", "p.pdf"]

    removed = docs.remove(sid, "a.txt")
    assert removed.name == "a.txt" and [d.name for d in docs.list_documents(sid)] == ["p.pdf"]
    store.delete_session(sid)  # the documents go with the session
    with store.connection_lock() as conn:
        assert conn.execute("SELECT count(*) FROM documents WHERE session_id = ?", (sid,)).fetchone()[0] == 0


def test_documents_travel_with_the_json_export(store: GraphStore, tmp_path: Path) -> None:
    sid = store.create_session("S").id
    store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ada"}], "test")
    DocumentStore(store).add(sid, [read_path(_write(tmp_path / "p.pdf", pdf_bytes(["One", "Two"])), MB)])
    data = export_json(store, sid)
    doc = json.loads(data)
    assert doc["version"] == 1 and doc["documents"][0]["page_starts"] == [0, 5]
    assert len(store.export(sid, "json")) < len(data)

    # A version 1 reader (the graph import alone) ignores the section.
    plain = store.create_session("Graph only").id
    store.import_data(plain, "json", data, "test")
    assert [o.name for o in store.all_objects(plain)] == ["Ada"] and not DocumentStore(store).list_documents(plain)

    target = store.create_session("T").id
    result, added = import_json(store, target, data, "test")
    assert added == 1 and result.change is not None
    back = DocumentStore(store).get(target, "p.pdf")
    assert back.text == "One\n\nTwo" and back.page_starts == (0, 5)
    _, again = import_json(store, target, data, "test", on_conflict="skip")
    assert again == 0 and len(DocumentStore(store).list_documents(target)) == 1

    # A bad documents section refuses the whole import: neither graph nor documents are written.
    doc["documents"][0]["page_starts"] = [0, 999]
    fresh = store.create_session("F").id
    with pytest.raises(StoreError, match="Nothing was imported: document 0 has page_starts"):
        import_json(store, fresh, json.dumps(doc), "test")
    assert not store.all_objects(fresh) and not DocumentStore(store).list_documents(fresh)


def test_a_database_with_schema_four_gains_the_table(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    GraphStore.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE documents")
    # the tables of migrations 6 and later: a schema-4 file has none of them
    for table in ("chat_usage", "evidence", "extraction_cache", "extraction_runs", "chat_images", "passages",
                  "passages_fts"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("PRAGMA user_version = 4")
    conn.close()
    with GraphStore.open(path) as reopened:
        sid = reopened.create_session("S").id
        assert DocumentStore(reopened).list_documents(sid) == []
