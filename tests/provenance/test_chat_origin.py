"""A chat write records where it came from ("hand edits and chat writes record
their origin too: the person; the chat turn"): a real `chat` CLI run against the fake provider
adds an object; `get_sources` then says the chat wrote it (and which change), and the window's
read (with the transcript) names the chat message whose tool call made the change (derived from
the change log and the transcript, see provenance/model.py)."""

from __future__ import annotations

import pytest

import json
from pathlib import Path

from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.provenance.queries import authorship
from tests.agent.test_chat_cli import chat, cks, home  # noqa: F401 - the fixture
from tests.fakes.providers import make_fake
from tests.fakes.script import call_turn, text_turn


@pytest.mark.slow
def test_get_sources_names_the_chat_turn_that_wrote_an_object(home: tuple[Path, str]) -> None:  # noqa: F811
    root, sid = home
    with make_fake("anthropic") as fake:
        fake.queue(call_turn("add_object", {"type": "Person", "name": "Alice"}, text="Adding."), text_turn("Done."))
        assert chat(root, fake, sid, "add Alice").returncode == 0
    proc = cks(root, "tools", "call", "get_sources", "--session", sid, "--args", json.dumps({"ref": "Alice"}),
               "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    result = data["structured"]
    written = result["written_by"]
    assert written[0]["author"] == "chat" and result["sources"] == []
    assert written[0]["chat_message_id"] is None  # the tools sit below the chat: they name the change
    with GraphStore.open(root / "cks.sqlite3") as store:  # the window (ui) asks the transcript for the turn
        transcript = TranscriptStore.for_store(store)
        alice = store.resolve(sid, "Alice")
        (who,) = authorship(store, sid, alice.id, messages_of=transcript.messages_for_changes)
        with store.connection_lock() as conn:
            role, parts = conn.execute("SELECT role, parts FROM chat_messages WHERE id = ?",
                                       (who.chat_message_id,)).fetchone()
    assert who.author == "chat" and who.change_id == written[0]["change_id"]
    assert role == "assistant" and "Adding." in parts  # the model's turn that called add_object
