"""The chat's edits both front ends call: delete an exchange, clear, drop an answer, prepare a
Retry — each one transaction with one sentence, and the same sentence in the window and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cks_desktop.agent.transcript import Mark, TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.messages import Message
from cks_desktop.runtime import UseCases
from cks_desktop.runtime.chat import NOTHING_TO_RETRY, ChatEditRefused, StaleExchange
from cks_desktop.settings import Settings


@pytest.fixture
def store(open_graph: Callable[[], GraphStore]) -> Iterator[GraphStore]:
    s = open_graph()  # SQLite and PostgreSQL: the transcript's own SQL runs on both
    yield s
    s.close()


def _chat(store: GraphStore, exchanges: int) -> str:
    sid = store.create_session("Chat").id
    transcript = TranscriptStore.for_store(store)
    for i in range(exchanges):
        transcript.append(sid, [Message.user(f"question {i}"), Message("assistant", [])])
    return sid


def test_delete_clear_and_drop_answer_say_what_they_did(store: GraphStore, tmp_path: Path) -> None:
    sid = _chat(store, 3)
    chat = UseCases(store, Settings.load(tmp_path / "settings.json")).chat
    edit = chat.delete_exchange(sid, 2, expect_prompt="question 1")
    assert edit.removed == 2 and edit.sentence == "Deleted exchange 2 (2 messages); the graph is unchanged."
    with pytest.raises(StaleExchange):  # the window showed another message as exchange 2
        chat.delete_exchange(sid, 2, expect_prompt="question 1")
    assert chat.drop_answer(sid, 2).removed == 1 and chat.saved_prompts(sid) == 2
    assert chat.clear(sid).sentence == "Cleared the chat (3 messages deleted); the graph is unchanged."
    assert chat.saved_prompts(sid) == 0


def test_retry_needs_an_unanswered_message_and_drops_the_saved_error(store: GraphStore, tmp_path: Path) -> None:
    sid = _chat(store, 1)
    chat = UseCases(store, Settings.load(tmp_path / "settings.json")).chat
    with pytest.raises(ChatEditRefused, match="nothing to retry"):
        chat.prepare_retry(sid)
    transcript = TranscriptStore.for_store(store)
    transcript.append(sid, [Message.user("once more")])
    transcript.append(sid, [Message("assistant", [])], mark=Mark.ERROR)
    chat.prepare_retry(sid)
    assert not any(row.is_error for row in transcript.history(sid))


def test_the_terminal_says_what_the_window_says(tmp_path: Path) -> None:
    data = tmp_path / "data"
    sid = json.loads(cks(data, "sessions", "create", "Chat", "--json").stdout)["id"]
    store = GraphStore.open(data / "cks.sqlite3")
    try:
        TranscriptStore.for_store(store).append(sid, [Message.user("drop me"), Message("assistant", [])])
    finally:
        store.close()
    proc = cks(data, "chat", "--session", sid, "--delete-turn", "1", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Deleted exchange 1 (2 messages); the graph is unchanged."
    retry = cks(data, "chat", "--session", sid, "--retry")
    assert retry.returncode != 0 and retry.stderr.strip() == f"cks-desktop: {NOTHING_TO_RETRY}", retry.stderr


def cks(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CKS_DESKTOP_HOME"}
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(data), *args],
                          capture_output=True, text=True, timeout=120, env=env)


def test_an_ask_answer_is_kept_as_one_marked_exchange_after_reopening(
        open_graph: Callable[[], GraphStore], tmp_path: Path) -> None:
    from cks_desktop.retrieval.citations import Citation, Unsupported
    from cks_desktop.runtime.answer import Answer

    store = open_graph()
    sid = _chat(store, 1)
    answer = Answer("Ada Lovelace designed it [1]. It was painted blue [2: unsupported].",
                    citations=[Citation(1, "report.txt", "d1", 3, 1200, 1236, "Ada Lovelace designed the bridge")],
                    unsupported=[Unsupported(2, "painted blue", "quote_not_found")])
    edit = UseCases(store, Settings.load(tmp_path / "settings.json")).chat.keep_ask(sid, " Who designed it? ", answer)
    assert edit.sentence == "The answer is kept in the chat."
    store.close()

    store = open_graph()  # as after a restart
    try:
        rows = TranscriptStore.for_store(store).history(sid)
        assert [(r.message.role, r.mark, r.turn) for r in rows[2:]] == [("user", Mark.ASK, 2), ("assistant", Mark.ASK, 2)]
        assert rows[2].message.text == "/ask Who designed it?" and not rows[2].unanswered
        text = rows[3].message.text
        assert text.startswith("Ada Lovelace designed it [1]. It was painted blue [2: unsupported].")
        assert ("- [1] report.txt (page 3, characters 1,200–1,236) — “Ada Lovelace designed the bridge”"
                in text)
        assert "**Not supported**" in text and "- [2] “painted blue”: the quoted words are not in this passage" in text
        assert len(TranscriptStore.for_store(store).load(sid)) == 4  # part of the conversation a turn continues
        from cks_desktop.agent.chat_export import to_markdown

        exported = to_markdown(store.get_session(sid), rows)
        assert "## You · exchange 2\n\n/ask Who designed it?" in exported
        assert "### Assistant (from Ask the documents)\n\nAda Lovelace designed it [1]." in exported
    finally:
        store.close()
