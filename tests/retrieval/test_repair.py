"""A damaged index, or one made by another version, is rebuilt with one sentence and nothing lost;
indexing killed half-way is finished by the next run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.messages import Message
from cks_desktop.retrieval import items
from cks_desktop.retrieval.index import PassageIndex
from cks_desktop.retrieval.service import retrieve
from tests.retrieval.conftest import DISTRACTORS, add_text

MAIN = Path(__file__).resolve().parents[2]
FACT = "The lighthouse at Varn was lit for the first time in 1872 by keeper Ilse Brandt."


def _session(store: GraphStore) -> str:
    sid = store.create_session("s").id
    add_text(store, sid, "fact.txt", FACT)
    for i, t in enumerate(DISTRACTORS):
        add_text(store, sid, f"d{i}.txt", t)
    store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ilse Brandt"}], "test")
    TranscriptStore.for_store(store).append(sid, [Message.user("Ask about the Varn lighthouse later.")])
    return sid


def test_a_corrupt_full_text_table_is_rebuilt_with_one_sentence(store: GraphStore) -> None:
    sid = _session(store)
    assert retrieve(store, sid, "When was the lighthouse lit?").passages[0].text == FACT
    with store.transaction() as conn:
        conn.execute("UPDATE passages_fts_data SET block = x'ffffffffffffffff' WHERE id > 10")
    found = retrieve(store, sid, "When was the lighthouse lit?")
    assert found.passages[0].text == FACT
    assert len(found.notes) == 1 and found.notes[0].startswith("The search index was damaged")
    assert found.notes[0].endswith("it was rebuilt from the documents, the graph and the chats.")
    assert found.messages and "Ilse Brandt" in [o.name for o in retrieve(store, sid, "Ilse Brandt").objects]
    assert not retrieve(store, sid, "When was the lighthouse lit?").notes  # once
    store.apply(sid, [{"op": "add_object", "type": "Place", "name": "Varn"}], "test")  # still writable


def test_items_tables_of_another_version_are_rebuilt(store: GraphStore) -> None:
    sid = _session(store)
    retrieve(store, sid, "lighthouse")
    with store.transaction() as conn:
        conn.execute("DROP TABLE retrieval_meta")
        conn.execute("DROP TABLE retrieval_items")
        conn.execute("CREATE TABLE retrieval_items (n INTEGER PRIMARY KEY, session_id TEXT, ref TEXT)")
    found = retrieve(store, sid, "Varn lighthouse")
    assert len(found.notes) == 1 and "another version" in found.notes[0]
    assert found.messages and found.passages[0].text == FACT
    assert items.sync(store, sid).embedded == 0


def test_a_cli_search_on_a_damaged_index_says_so_on_stderr_and_answers(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    store = GraphStore.open(home / "cks.sqlite3")
    sid = _session(store)
    retrieve(store, sid, "lighthouse")
    with store.transaction() as conn:
        conn.execute("UPDATE passages_fts_data SET block = x'ffffffffffffffff' WHERE id > 10")
    store.close()
    env = {**os.environ, "PYTHONPATH": str(MAIN), "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    proc = subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "ask", "--session", sid,
                           "When was the lighthouse lit?", "--retrieve-only", "--json"],
                          cwd=MAIN, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    assert FACT in proc.stdout
    assert [line for line in proc.stderr.splitlines() if "search index" in line][0].startswith(
        "cks-desktop: The search index was damaged")


_CHILD = textwrap.dedent("""
    import sys
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.retrieval.index import PassageIndex

    store = GraphStore.open(sys.argv[1])

    def progress(done, total, name):
        if done == 2:  # two documents written, the third about to be: tell the parent, wait to be killed
            print("two", flush=True)
            sys.stdin.readline()

    PassageIndex(store).sync(sys.argv[2], progress)
""")


def test_indexing_killed_half_way_is_finished_by_the_next_run(tmp_path: Path) -> None:
    path = tmp_path / "cks.sqlite3"
    store = GraphStore.open(path)
    sid = _session(store)
    store.close()
    env = {**os.environ, "PYTHONPATH": str(MAIN)}
    with subprocess.Popen([sys.executable, "-c", _CHILD, str(path), sid], cwd=MAIN, env=env,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as child:
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "two"
            child.send_signal(signal.SIGKILL)
            assert child.wait(timeout=60) == -signal.SIGKILL
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    store = GraphStore.open(path)
    try:
        report = PassageIndex(store).sync(sid)
        assert report.documents == 1 + len(DISTRACTORS) - 2  # only what the killed run had not written
        found = retrieve(store, sid, "When was the lighthouse lit?")
        assert found.passages[0].text == FACT and not found.notes
        with store.connection_lock() as conn:
            assert conn.execute("SELECT count(*) FROM passages").fetchone()[0] == \
                conn.execute("SELECT count(*) FROM passages_fts").fetchone()[0]
    finally:
        store.close()


def test_a_database_that_takes_no_writes_still_answers_from_its_passages(store: GraphStore) -> None:
    sid = _session(store)
    PassageIndex(store).sync(sid)  # the passages are indexed; the items never were
    store.mark_damaged("a test marked it so")
    found = retrieve(store, sid, "When was the lighthouse lit?")
    assert found.passages[0].text == FACT and found.messages == []
