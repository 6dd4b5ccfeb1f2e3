"""Crash consistency of the chat transcript: SIGKILL a process in the middle of
chat turns (streaming, running graph-writing tools, saving), reopen, and the chat
must load whole — no half-written message, every tool call answered, every row a
view would restore pointing at a real message and a real change — and the next
turn must run on it. The graph written by the same turns passes the store checks.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.messages import Message
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from tests.agent.helpers import turn_options
from tests.fakes.script import text_turn
from tests.fakes.scripted import ScriptedProvider
from tests.reliability.crash_batches import replay

ROOT = Path(__file__).resolve().parents[2]


def kill_during_chat(db: Path, session_id: str, delay: float) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "tests.reliability.chat_child", str(db), session_id], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, f"the chat child ended by itself ({proc.returncode}):\n{err[-3000:]}"
    return out.count("round "), err


def check_chat(db: Path, session_id: str) -> int:
    """Everything a reopened session relies on; returns the number of saved messages."""
    with GraphStore.open(db) as store:
        transcript = TranscriptStore.for_store(store)
        history = transcript.history(session_id)  # must not raise
        messages = transcript.load(session_id)
        with store.connection_lock() as conn:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
            rows = conn.execute("SELECT seq, role, parts FROM chat_messages WHERE session_id = ? ORDER BY seq",
                                (session_id,)).fetchall()
            calls = conn.execute("SELECT m.parts, c.call_id, c.change_id FROM chat_tool_calls c "
                                 "JOIN chat_messages m ON m.id = c.message_id WHERE c.session_id = ?",
                                 (session_id,)).fetchall()
            (orphan_calls,) = conn.execute("SELECT count(*) FROM chat_tool_calls c WHERE NOT EXISTS "
                                           "(SELECT 1 FROM chat_messages m WHERE m.id = c.message_id)").fetchone()
            change_ids = {r[0] for r in conn.execute("SELECT id FROM changes WHERE session_id = ?", (session_id,))}
            changes = conn.execute("SELECT id, ops FROM changes WHERE session_id = ? ORDER BY id",
                                   (session_id,)).fetchall()
            objs = {r[0] for r in conn.execute("SELECT id FROM objects WHERE session_id = ?", (session_id,))}
            rels = {r[0] for r in conn.execute("SELECT id FROM relations WHERE session_id = ?", (session_id,))}
            conn.execute("INSERT INTO objects_fts(objects_fts) VALUES ('integrity-check')")
    # Rows: numbered 1..n without gaps, each a whole message.
    assert [r[0] for r in rows] == list(range(1, len(rows) + 1))
    for _, role, parts in rows:
        Message.from_json({"role": role, "parts": json.loads(parts)})
    assert orphan_calls == 0
    for parts, call_id, change_id in calls:
        assert call_id in {p.get("id") for p in json.loads(parts) if p.get("kind") == "tool_call"}
        assert change_id is None or change_id in change_ids, "a chat row points at a change that never committed"
    # The loaded chat is one a provider accepts: every tool call answered in the next message.
    for i, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls:
            answered = {p.call_id for p in messages[i + 1].tool_results} if i + 1 < len(messages) else set()
            assert {c.id for c in message.tool_calls} <= answered
    assert len(history) >= len(rows)  # repair may add answers, never drop messages
    # The graph is its history, replayed.
    r_objs, r_rels = replay([(c[0], c[1]) for c in changes])
    assert set(r_objs) == objs and set(r_rels) == rels
    return len(rows)


def next_turn_works(db: Path, session_id: str) -> None:
    async def go() -> list[Message]:
        with GraphStore.open(db) as store:
            transcript = TranscriptStore.for_store(store)
            provider = ScriptedProvider([text_turn("Still here.")])
            return await ai_chat(session_id, transcript.load(session_id), "Are you there?",
                                 ChatDeps(provider, build_registry(store), store, transcript),
                                 turn_options(system_prompt="test"), approver=StaticApprover(Decision.DENY))

    messages = asyncio.run(go())
    assert messages[-1].text == "Still here."


def run_chain(tmp_path: Path, trials: int, seed: int) -> tuple[int, int]:
    rng = random.Random(seed)
    db = tmp_path / "chat.sqlite3"
    with GraphStore.open(db) as store:
        session_id = store.create_session("chat crash").id
    saved = rounds = 0
    for t in range(trials):
        delay = rng.uniform(0.3, 2.5)
        done, _ = kill_during_chat(db, session_id, delay)
        rounds += done
        now = check_chat(db, session_id)
        assert now >= saved, f"seed {seed} trial {t}: saved messages disappeared ({saved} -> {now})"
        saved = now
    next_turn_works(db, session_id)
    assert check_chat(db, session_id) == saved + 2
    return saved, rounds


@pytest.mark.slow
def test_killed_chat_turns_leave_a_chat_that_reopens(tmp_path: Path) -> None:
    seed = int(os.environ.get("CKS_CRASH_SEED", random.randrange(1 << 30)))
    saved, rounds = run_chain(tmp_path, trials=4, seed=seed)
    assert saved > 0, f"seed {seed}: no message was ever saved"


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_killed_chat_turns_30_trials(tmp_path: Path) -> None:
    seed = int(os.environ.get("CKS_CRASH_SEED", random.randrange(1 << 30)))
    saved, rounds = run_chain(tmp_path, trials=30, seed=seed)
    print(f"\ntranscript: 30 kills, {rounds} whole rounds, {saved} messages saved; seed {seed}")
