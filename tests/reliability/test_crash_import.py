"""An import of a cks-graph file with documents is both or nothing under SIGKILL: a real child
process imports the file and is killed at random points (its own SIGKILL from an SQLite
progress handler at a random VM step, or the parent's after a random delay); reopened, the
session holds either the documents AND the graph with its sources, or neither.

``CKS_CRASH_SEED`` reproduces a run; the seed is in every failure message.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from cks_desktop.documents.exchange import export_json, import_json, imported_id
from cks_desktop.documents.model import ReadDocument
from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.store import GraphStore

ROOT = Path(__file__).resolve().parents[2]
DOCS = 4
OBJECTS = 1500  # each with one source in a document


def _documents() -> list[ReadDocument]:
    docs = []
    for d in range(DOCS):
        text = " ".join(f"Person{d}x{i} works here." for i in range(OBJECTS // DOCS + 1))
        # Even documents are plain text (their id is the hash of the text, kept); odd ones carry the
        # hash of other bytes (a PDF's), so the import stores them under a new id and re-points.
        sha = hashlib.sha256(text.encode() if d % 2 == 0 else f"pdf bytes {d}".encode()).hexdigest()
        docs.append(ReadDocument(sha256=sha, name=f"d{d}.txt", size=len(text), media_type="text/plain",
                                 source="", reader="text", text=text, page_starts=()))
    return docs


def _export(tmp: Path) -> tuple[Path, Path, str]:
    """(the cks-graph file, an empty database to import into, its session)."""
    with GraphStore.open(tmp / "source.sqlite3") as store:
        sid = store.create_session("source").id
        docs = DocumentStore(store).add(sid, _documents()).added
        ops: list[dict[str, object]] = []
        for i in range(OBJECTS):
            doc = docs[i % DOCS]
            word = f"Person{i % DOCS}x{i // DOCS}"
            text = DocumentStore(store).get(sid, doc.id).text
            start = text.index(word + " ")
            ops += [{"op": "add_object", "type": "Person", "name": word, "label": f"$p{i}"},
                    {"op": "add_evidence", "object": f"$p{i}", "document_id": doc.id, "chunk_index": 0,
                     "start": start, "end": start + len(word), "quote": word}]
        store.apply(sid, ops, "test")
        data = export_json(store, sid)
    file = tmp / "graph.json"
    file.write_text(data, encoding="utf-8")
    with GraphStore.open(tmp / "empty.sqlite3") as store:
        target = store.create_session("target").id
    return file, tmp / "empty.sqlite3", target


def _state(db: Path, session_id: str) -> tuple[int, int, int]:
    """(documents, objects, sources) of the session, after reopening through the app's own path."""
    with GraphStore.open(db) as store:
        with store.connection_lock() as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            docs = conn.execute("SELECT count(*) FROM documents WHERE session_id = ?", (session_id,)).fetchone()[0]
            objs = conn.execute("SELECT count(*) FROM objects WHERE session_id = ?", (session_id,)).fetchone()[0]
            evid = conn.execute("SELECT count(*) FROM evidence WHERE session_id = ?", (session_id,)).fetchone()[0]
    return int(docs), int(objs), int(evid)


def _child(db: Path, session_id: str, file: Path, die_at: int, delay: float | None) -> tuple[int, str]:
    cmd = [sys.executable, "-m", "tests.reliability.import_child", str(db), session_id, str(file), str(die_at)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=120 if delay is None else delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode in (0, -signal.SIGKILL), f"child failed ({proc.returncode}):\n{err[-3000:]}"
    return proc.returncode, out


def test_sigkill_during_an_import_with_documents_is_both_or_nothing(tmp_path: Path) -> None:
    file, empty, sid = _export(tmp_path)
    db = tmp_path / "crash.sqlite3"
    shutil.copyfile(empty, db)
    code, out = _child(db, sid, file, 0, None)  # a whole import: how many VM steps it takes
    assert code == 0 and _state(db, sid) == (DOCS, OBJECTS, OBJECTS)
    steps = int(out.split("imported ")[1].split()[0])
    seed = int(os.environ.get("CKS_CRASH_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    killed = 0
    for trial in range(10):
        shutil.copyfile(empty, db)
        for suffix in ("-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        by_steps = trial < 8
        die_at = rng.randint(1, steps) if by_steps else 0
        delay = None if by_steps else rng.uniform(0.3, 3.0)
        code, _ = _child(db, sid, file, die_at, delay)
        killed += code == -signal.SIGKILL
        state = _state(db, sid)
        how = f"CKS_CRASH_SEED={seed} trial {trial}: kill {'at step ' + str(die_at) if by_steps else f'after {delay:.2f} s'}"
        assert state in ((0, 0, 0), (DOCS, OBJECTS, OBJECTS)), f"{how}: documents, objects, sources = {state}"
    assert killed >= 8  # the kills landed during the import


def test_only_evidence_follows_a_redone_document_id(tmp_path: Path) -> None:
    """A carried id that is not the hash of its text is re-pointed in the evidence only: the same
    64-hex string in a property value (a checksum someone recorded) stays as it was written."""
    text = "Ada Lovelace wrote the notes."
    carried = hashlib.sha256(b"the original PDF bytes").hexdigest()
    data = {"format": "cks-graph", "version": 2,
            "objects": [{"id": "o_1", "type": "File", "name": "notes", "properties": {"sha256": carried}}],
            "relations": [],
            "evidence": [{"object": "o_1", "document_id": carried, "chunk_index": 0, "start": 0, "end": 12,
                          "quote": "Ada Lovelace"}],
            "documents": [{"id": carried, "name": "notes.pdf", "size": 10, "media_type": "application/pdf",
                           "source": "", "reader": "pdf", "text": text}]}
    with GraphStore.open(tmp_path / "cks.sqlite3") as store:
        sid = store.create_session("S").id
        _, added = import_json(store, sid, json.dumps(data), "import")
        assert added == 1
        (obj,) = store.all_objects(sid)
        assert obj.properties == {"sha256": carried}
        exported = json.loads(store.export(sid, "json"))
        assert [e["document_id"] for e in exported["evidence"]] == [imported_id(text)]
