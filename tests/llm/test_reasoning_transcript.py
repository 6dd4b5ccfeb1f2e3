"""thinking is stored with the transcript and exported with the chat.

Real SQLite transcript (the app's migrations), real export functions: a message's reasoning
parts (text, signature, redacted data, origin, wire field, seconds) round-trip exactly; rows
written before reasoning existed still load; the Markdown export folds the thinking above the
answer and never into it; the JSON export keeps every field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cks_desktop.agent.chat_export import export_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.assembler import StreamAssembler
from cks_desktop.llm.events import Finish, ReasoningDelta, TextDelta, ToolCallDone, ToolCallStart
from cks_desktop.llm.messages import Message, Reasoning, Text

THOUGHT = Reasoning("Check the graph <b>first</b>.\n```\nnot a fence end", "EqQBsig==", origin="anthropic",
                    seconds=12.4)
REDACTED = Reasoning(redacted="EmwKAhgB", origin="anthropic", seconds=0.0)
SERVER = Reasoning("hm", origin="openai@127.0.0.1:8000", wire_field="reasoning", seconds=1.5)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GraphStore]:
    s = GraphStore.open(tmp_path / "cks.sqlite3")
    try:
        yield s
    finally:
        s.close()


def test_reasoning_round_trips_through_the_transcript(store: GraphStore) -> None:
    sid = store.create_session("s").id
    transcript = TranscriptStore.for_store(store)
    answer = Message("assistant", [THOUGHT, REDACTED, SERVER, Text("The answer.")])
    transcript.append(sid, [Message.user("q"), answer])
    loaded = transcript.load(sid)[1]
    assert loaded.parts == answer.parts
    assert loaded.text == "The answer." and loaded.reasoning == [THOUGHT, REDACTED, SERVER]


def test_rows_written_before_reasoning_existed_still_load(store: GraphStore) -> None:
    sid = store.create_session("s").id
    with store.transaction() as conn:  # what an older build stored: no reasoning parts
        conn.execute("INSERT INTO chat_messages (session_id, seq, role, parts, notice, created_at) VALUES "
                     "(?, 1, 'user', ?, 0, 'now'), (?, 2, 'assistant', ?, 0, 'now')",
                     (sid, json.dumps([{"kind": "text", "text": "q"}]), sid,
                      json.dumps([{"kind": "text", "text": "a"}, {"kind": "future_kind", "x": 1}])))
    loaded = TranscriptStore.for_store(store).load(sid)
    assert [m.text for m in loaded] == ["q", "a"] and loaded[1].reasoning == []
    # a reasoning part with only some fields (hand-edited, or a later build's extra keys) loads too
    assert Reasoning.from_json({"kind": "reasoning", "text": "t", "seconds": "x", "more": 1}) == Reasoning("t")


def test_export_folds_the_thinking_above_the_answer(store: GraphStore) -> None:
    sid = store.create_session("Thinking").id
    TranscriptStore.for_store(store).append(sid, [Message.user("q"),
                                                  Message("assistant", [THOUGHT, Text("The answer.")])])
    markdown = export_chat(store, sid, "markdown")
    head = markdown.index("<details><summary>Thought for 12 s</summary>")
    assert head < markdown.index("### Assistant") < markdown.index("The answer.")
    block = markdown[head:markdown.index("</details>")]
    assert "````text\nCheck the graph <b>first</b>." in block  # fenced: the model's words, verbatim
    data = json.loads(export_chat(store, sid, "json"))
    parts = data["messages"][1]["parts"]
    assert parts[0] == {"kind": "reasoning", "text": THOUGHT.text, "signature": "EqQBsig==", "seconds": 12.4,
                        "origin": "anthropic"}


def test_assembler_blocks_signatures_and_timing() -> None:
    ticks = iter([0.0, 1.0, 2.0, 3.5, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    assembler = StreamAssembler(strict=True, clock=lambda: next(ticks))  # 0.0: the turn starts
    assembler.feed_all([ReasoningDelta("a", origin="x"), ReasoningDelta("b", origin="x"),  # 1.0, 2.0
                        ReasoningDelta(signature="S1", origin="x"),  # 3.5: closes the first block
                        TextDelta("Hi "),  # 4.0
                        ReasoningDelta("c", origin="x"),  # 6.0: a second block, thought since 4.0
                        ToolCallStart(0, "id1", "t"), ToolCallDone(0, "id1", "t", {}, "{}"),
                        Finish("tool_calls")])
    message = assembler.message()
    assert [type(p).__name__ for p in message.parts] == ["Reasoning", "Text", "Reasoning", "ToolCallPart"]
    first, second = message.reasoning
    assert (first.text, first.signature, first.seconds) == ("ab", "S1", 3.5)
    assert (second.text, second.signature, second.seconds) == ("c", None, 2.0)
    assert assembler.text == "Hi " and message.text == "Hi "


def test_cli_history_says_the_model_thought_but_not_what(store: GraphStore) -> None:
    from cks_desktop.commands.chat_cmd import _history_text

    sid = store.create_session("s").id
    transcript = TranscriptStore.for_store(store)
    transcript.append(sid, [Message.user("q"), Message("assistant", [THOUGHT, Text("The answer.")])])
    text = "".join(_history_text(row) for row in transcript.history(sid))
    assert "(thought for 12 s)\nassistant: The answer.\n" in text and "graph" not in text
