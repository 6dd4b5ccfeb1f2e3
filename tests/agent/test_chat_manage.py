"""Clear chat and Delete exchange through the real CLI; the graph stays.

Deleting works on whole exchanges (a message of the person's and its whole
answer), so tool calls and their results go together: the chat still loads,
its rows stay numbered 1..n, no call record is orphaned, and the next turn
runs on it with a request every provider accepts.
"""

from __future__ import annotations

import pytest

import json
from pathlib import Path

from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore

from tests.agent.test_chat_cli import chat, cks, home, one_line_error  # noqa: F401 - the fixture
from tests.fakes.providers import make_fake
from tests.fakes.script import call_turn, text_turn


def three_exchanges(root: Path, sid: str) -> None:
    with make_fake("anthropic") as fake:
        fake.queue(text_turn("One."))
        assert chat(root, fake, sid, "first").returncode == 0
        fake.queue(call_turn("add_object", {"type": "Person", "name": "Alice"}, text="Adding."), text_turn("Two."))
        assert chat(root, fake, sid, "second").returncode == 0
        fake.queue(text_turn("Three."))
        assert chat(root, fake, sid, "third").returncode == 0


def rows_are_consistent(root: Path, sid: str) -> list[int]:
    with GraphStore.open(root / "cks.sqlite3") as store:
        TranscriptStore.for_store(store).history(sid)
        with store.connection_lock() as conn:
            seqs = [r[0] for r in conn.execute("SELECT seq FROM chat_messages WHERE session_id = ? ORDER BY seq",
                                               (sid,))]
            (orphans,) = conn.execute("SELECT count(*) FROM chat_tool_calls c WHERE NOT EXISTS "
                                      "(SELECT 1 FROM chat_messages m WHERE m.id = c.message_id)").fetchone()
    assert seqs == list(range(1, len(seqs) + 1)) and orphans == 0
    return seqs


@pytest.mark.slow
def test_delete_an_exchange_with_tool_calls_keeps_the_graph_and_the_chat_continues(home: tuple[Path, str]) -> None:  # noqa: F811
    root, sid = home
    three_exchanges(root, sid)
    before = cks(root, "chat", "--session", sid, "--history").stdout.splitlines()
    assert "you #2: second" in before
    unconfirmed = cks(root, "chat", "--session", sid, "--delete-turn", "2")
    assert "--yes" in one_line_error(unconfirmed, 2) and "nothing was deleted" in unconfirmed.stderr
    assert cks(root, "chat", "--session", sid, "--history").stdout.splitlines() == before
    done = cks(root, "chat", "--session", sid, "--delete-turn", "2", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Deleted exchange 2 (4 messages); the graph is unchanged."
    after = cks(root, "chat", "--session", sid, "--history").stdout.splitlines()
    assert after == ["you #1: first", "assistant: One.", "you #2: third", "assistant: Three."]
    assert len(rows_are_consistent(root, sid)) == 4
    with GraphStore.open(root / "cks.sqlite3") as store:
        assert store.resolve(sid, "Alice").type == "Person"  # the graph stays
    with make_fake("anthropic") as fake:
        fake.queue(text_turn("Four."))
        proc = chat(root, fake, sid, "fourth")
        sent = json.dumps(fake.generation_requests[0].body)
        assert not fake.problems
    assert proc.returncode == 0 and "second" not in sent and "Adding." not in sent
    missing = cks(root, "chat", "--session", sid, "--delete-turn", "9", "--yes")
    assert "no exchange 9" in one_line_error(missing, 2) and "3 exchanges" in missing.stderr
    both = cks(root, "chat", "--session", sid, "--clear", "hi")
    assert "not both" in one_line_error(both, 2)


@pytest.mark.slow
def test_clear_chat_removes_every_message_only(home: tuple[Path, str]) -> None:  # noqa: F811
    root, sid = home
    three_exchanges(root, sid)
    cleared = cks(root, "chat", "--session", sid, "--clear", "--json", "--yes")
    assert cleared.returncode == 0 and json.loads(cleared.stdout)["deleted_messages"] == 8
    assert cks(root, "chat", "--session", sid, "--history").stdout == "(no messages yet)\n"
    rows_are_consistent(root, sid)
    with GraphStore.open(root / "cks.sqlite3") as store:
        assert store.resolve(sid, "Alice").type == "Person" and store.resolve(sid, "Bob").type == "Person"
    with make_fake("anthropic") as fake:
        fake.queue(text_turn("Fresh start."))
        proc = chat(root, fake, sid, "hello again")
        messages = fake.generation_requests[0].body["messages"]
    assert proc.returncode == 0 and len(messages) == 1
