"""The transcript store: round trips, per-call metadata, atomic saves, repair."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cks_desktop.agent.events import CallState, Notice
from cks_desktop.agent.transcript import INTERRUPTED_TEXT, CallRecord, TranscriptStore
from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolResultPart


def turn(call_id: str = "c1") -> tuple[list[Message], list[CallRecord]]:
    assistant = Message("assistant", [Text("Adding Ada."),
                                      ToolCallPart(call_id, "add_object", {"name": "Ada", "props": {"x": [1, 2]}})])
    tool = Message("tool", [ToolResultPart(call_id, "add_object", '{"change_id": "K1"}')])
    record = CallRecord(call_id, "add_object", "Add object", "builtin", CallState.DONE, 12.5, "K1")
    return [assistant, tool], [record]


def test_round_trip_with_metadata(transcript: TranscriptStore) -> None:
    user = Message.user("Add Ada, ünïcode ✓")
    transcript.append("S1", [user])
    msgs, calls = turn()
    transcript.append("S1", msgs, calls=calls)
    transcript.append("S1", [Message("assistant", [Text("Reached the iteration limit")])],
                      notice=Notice.ITERATION_LIMIT)
    assert transcript.load("S1") == [user, *msgs, Message("assistant", [Text("Reached the iteration limit")])]
    rows = transcript.history("S1")
    assert [r.seq for r in rows] == [1, 2, 3, 4]
    assert rows[1].calls == calls and rows[2].calls == [] and rows[3].notice and not rows[0].notice
    assert rows[0].created_at.endswith("Z")
    data = rows[1].to_json()
    assert data["role"] == "assistant" and data["calls"][0]["change_id"] == "K1"
    assert transcript.count("S1") == 4 and transcript.load("S2") == []


def test_mark_reverted_and_back(transcript: TranscriptStore) -> None:
    msgs, calls = turn()
    transcript.append("S1", msgs, calls=calls)
    assert transcript.mark_reverted("S1", "K1") == 1
    assert transcript.history("S1")[0].calls[0].reverted
    assert transcript.mark_reverted("S1", "K1", reverted=False) == 1
    assert not transcript.history("S1")[0].calls[0].reverted
    assert transcript.mark_reverted("S2", "K1") == 0


def test_clear_and_session_delete_cascade(transcript: TranscriptStore, conn: sqlite3.Connection) -> None:
    msgs, calls = turn()
    transcript.append("S1", msgs, calls=calls)
    transcript.append("S2", [Message.user("other")])
    transcript.clear("S1")
    assert transcript.load("S1") == [] and len(transcript.load("S2")) == 1
    transcript.append("S1", msgs, calls=calls)
    conn.execute("DELETE FROM sessions WHERE id = 'S1'")
    assert conn.execute("SELECT COUNT(*) FROM chat_tool_calls").fetchone()[0] == 0
    assert transcript.load("S1") == []


def test_failed_save_leaves_nothing_behind(transcript: TranscriptStore) -> None:
    transcript.append("S1", [Message.user("hi")])
    msgs, calls = turn()
    bad = Message("robot", [Text("x")])  # type: ignore[arg-type]  # the CHECK constraint refuses it
    with pytest.raises(sqlite3.IntegrityError):
        transcript.append("S1", [*msgs, bad], calls=calls)
    assert transcript.load("S1") == [Message.user("hi")]
    assert transcript.history("S1")[0].calls == []


def test_killed_process_mid_save_keeps_the_previous_state(tmp_path: Path, conn: sqlite3.Connection,
                                                           transcript: TranscriptStore) -> None:
    transcript.append("S1", [Message.user("before")])
    db = tmp_path / "t.sqlite3"
    script = textwrap.dedent(f"""
        import os, sqlite3
        from cks_desktop.agent.events import CallState
        from cks_desktop.agent.transcript import CallRecord, TranscriptStore
        from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolResultPart

        def die(*args, **kwargs):
            os._exit(7)  # the message row is written, its call row is not: a crash mid-turn

        conn = sqlite3.connect({str(db)!r}, isolation_level=None)
        store = TranscriptStore.for_connection(conn)
        TranscriptStore._insert_call = staticmethod(die)
        store.append("S1", [Message("assistant", [Text("half"), ToolCallPart("c9", "echo", {{}})]),
                            Message("tool", [ToolResultPart("c9", "echo", "ok")])],
                     calls=[CallRecord("c9", "echo", "echo", "builtin", CallState.DONE)])
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert proc.returncode == 7, proc.stderr.decode()
    assert transcript.load("S1") == [Message.user("before")]
    transcript.append("S1", [Message("assistant", [Text("after")])])
    assert [m.text for m in transcript.load("S1")] == ["before", "after"]


def test_load_repairs_a_dangling_tool_call(transcript: TranscriptStore) -> None:
    # A transcript written without its results (an older build, a hand-edited file).
    transcript.append("S1", [Message.user("hi"),
                             Message("assistant", [ToolCallPart("a", "echo", {}), ToolCallPart("b", "echo", {})]),
                             Message("tool", [ToolResultPart("a", "echo", "ok")])])
    transcript.append("S1", [Message("assistant", [ToolCallPart("c", "echo", {})])])
    msgs = transcript.load("S1")
    assert [m.role for m in msgs] == ["user", "assistant", "tool", "assistant", "tool"]
    assert [(r.call_id, r.is_error) for r in msgs[2].tool_results] == [("a", False), ("b", True)]
    assert msgs[4].tool_results[0].content == INTERRUPTED_TEXT
    rows = transcript.history("S1")
    assert [c.state for c in rows[3].calls] == ["interrupted"]
