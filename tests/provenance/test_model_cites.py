"""The model sees provenance: a real `chat` run against the
fake provider (real wire protocol) is offered `get_sources`, its system prompt says (in our own
words, no document text) that facts carry sources it can cite, and a `get_sources` call sends the
quote, document name and page back to the model."""

from __future__ import annotations

import json
from pathlib import Path

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.store import GraphStore
from tests.agent.test_chat_cli import chat
from tests.documents.files import pdf_bytes
from tests.fakes.providers import make_fake
from tests.fakes.script import call_turn, text_turn


def test_a_chat_is_offered_get_sources_told_it_can_cite_and_gets_the_quotes(tmp_path: Path) -> None:
    root = tmp_path / "home"
    root.mkdir()
    (tmp_path / "letters.pdf").write_bytes(pdf_bytes(["Dear Charles, the Engine", "Yours, Ada in London"]))
    with GraphStore.open(root / "cks.sqlite3") as store:
        sid = store.create_session("Cite").id
        docs = DocumentStore(store)
        pdf = docs.get(sid, docs.add(sid, [read_path(tmp_path / "letters.pdf", 10**7)]).added[0].id)
        start = pdf.text.index("Ada in London")
        store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ada Lovelace", "label": "$a"},
                          {"op": "add_evidence", "object": "$a", "document_id": pdf.id, "start": start,
                           "end": start + len("Ada in London"), "quote": "Ada in London", "alignment": "exact"}],
                    "extraction")
    with make_fake("anthropic") as fake:
        fake.queue(call_turn("get_sources", {"ref": "Ada Lovelace"}, text="Looking it up."),
                   text_turn("She was in London (letters.pdf, p. 2)."))
        proc = chat(root, fake, sid, "where was Ada?")
        assert proc.returncode == 0, proc.stderr
        first, second = fake.generation_requests
    assert "get_sources" in {t["name"] for t in first.body["tools"]}
    system = json.dumps(first.body["system"])
    assert "get_sources" in system and "cite" in system
    assert "Ada in London" not in system  # the prompt is our own words, never document text
    sent_back = json.dumps(second.body["messages"][-1])
    assert "Ada in London" in sent_back and "letters.pdf" in sent_back and '\\"page\\": 2' in sent_back
