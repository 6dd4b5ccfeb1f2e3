"""The chat transcript, kept in the session's own SQLite file.

Two tables (added by the "chat transcript" step of the store's migration
list in ``graph/schema.py``): ``chat_messages`` holds the neutral messages as JSON
in order, ``chat_tool_calls`` the per-call facts the chat view needs to
restore a row exactly as it looked (state, duration, display name, the change
it recorded and whether that change was reverted since).

Each ``append`` is one transaction: a process killed mid-save leaves the
transcript as it was before that save, never half a turn. ``load`` also
repairs the one shape that could still break a provider (an assistant tool
call with no result, e.g. from a file written by a crashed older build) by
adding an "interrupted" error result, so the next request is always valid.

Exchanges: an exchange is one user message and
everything after it up to the next user message (the answer, its tool calls
and results, notices). ``history`` numbers them from 1 (messages before the
first user message, if any, are exchange 0) and marks a user message that got
no answer (the last message, or followed by another user message) as
``unanswered``. Deleting works on whole exchanges only, so a tool call and
its result are always deleted together and what remains is still a valid
conversation; the remaining rows are renumbered 1..n in the same transaction.

Typed rows: a call's ``state`` is a ``CallState`` whose values are the strings
every build has stored, and a notice's kind is stored in the ``notice`` column as a code
(``_NOTICE_CODES``; 0 is "not a notice"), so the chat knows a reopened chat ended at the
iteration limit without reading the notice's words. Builds before this one stored 1 for
every notice; ``_legacy_notice`` reads those rows once, by the two texts the loop ever wrote.
Every non-zero code is truthy, so an older build still reads a newer file's notices as notices.

Sign-in: a call an MCP server refused for want of a sign-in keeps that server's name
in its stored tool result (the part's ``sign_in`` key; ``CallRecord.sign_in``), so the row of a
reopened chat offers "Sign in" as it did live. The key is extra JSON in ``parts``: no schema
change, and ``Message.from_json`` (an older build too) ignores it; it is never sent to a model.

Citations: an ordinary answer whose turn called ``retrieve_passages`` keeps the verdict on its
citations (``agent/citations.py``) as extra JSON on its last text part (``citations.STORE_KEY``),
read back as ``SavedMessage.citations``: no schema change, ignored by ``Message.from_json`` and
never sent to a model.

Marks: the same column also marks a message that is not a notice.
``Mark.STOPPED`` is an answer that Stop cut short: it keeps what arrived and the chat shows
it as "stopped", after a restart too. ``Mark.ERROR`` is a row holding the sentence of a
provider failure, so the chat shows the error again after a restart beside Retry. An error
row is never part of the conversation: ``load`` (what a request continues from) leaves it
out, and ``history`` counts a prompt followed only by error rows as unanswered. Retry drops
the trailing error rows (``delete_trailing_errors``), Regenerate the whole answer of the last
exchange (``delete_answer``), so the transcript always reads as one consistent chat.
``Mark.ASK`` marks both messages of an exchange the Ask window answered from the documents
(``runtime/chat.py``'s ``keep_ask``): the question as ``/ask QUESTION`` and the answer with its
sources. It is part of the conversation (a later chat turn reads it), but the chat offers neither
Edit nor Regenerate on it: the chat's model did not write it.
"""

from __future__ import annotations

import enum
import json
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, TYPE_CHECKING

from cks_desktop.agent import citations as cites
from cks_desktop.agent.events import CallState, Notice
from cks_desktop.graph.sqlite_util import bare_connection_access
from cks_desktop.llm.messages import Message, ToolResultPart

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore

INTERRUPTED_TEXT = "interrupted: the app stopped before this call finished"
SIGN_IN_KEY = "sign_in"  # in a tool_result part's stored JSON: the MCP server its call needed a sign-in to

class Mark(str, enum.Enum):
    """What a saved message that is not a notice says about itself (stored in ``notice``)."""

    STOPPED = "stopped"  # an answer cut short by Stop; what arrived is kept
    ERROR = "error"  # the sentence of a failure (provider, internal); never sent to a model
    ASK = "ask"  # an exchange the Ask window answered from the documents (both of its messages)

    def __str__(self) -> str:
        return self.value


_LEGACY_NOTICE = 1  # what older builds stored for any notice
_NOTICE_CODES: dict[Notice, int] = {Notice.ITERATION_LIMIT: 2, Notice.REPEATED_FAILURE: 3, Notice.SUMMARY: 6,
                                   Notice.BUDGET: 7}
_NOTICES_BY_CODE = {code: kind for kind, code in _NOTICE_CODES.items()}
_MARK_CODES: dict[Mark, int] = {Mark.STOPPED: 4, Mark.ERROR: 5, Mark.ASK: 8}
_MARKS_BY_CODE = {code: mark for mark, code in _MARK_CODES.items()}
_LEGACY_LIMIT_PREFIX = "Reached the iteration limit"  # the start of every limit notice ever written


def _notice_code(notice: Notice | None, mark: Mark | None = None) -> int:
    if notice is not None:
        return _NOTICE_CODES[notice]
    return 0 if mark is None else _MARK_CODES[mark]


def _notice_of(code: int, message: Message) -> Notice | None:
    if not code or code in _MARKS_BY_CODE:
        return None
    if code == _LEGACY_NOTICE:
        return _legacy_notice(message)
    return _NOTICES_BY_CODE.get(code, Notice.REPEATED_FAILURE)


def _legacy_notice(message: Message) -> Notice:
    """A notice row written before notices had kinds: the loop wrote only two kinds of notice."""
    if message.text.startswith(_LEGACY_LIMIT_PREFIX):
        return Notice.ITERATION_LIMIT
    return Notice.REPEATED_FAILURE

@dataclass(frozen=True)
class CallRecord:
    """What the chat row of one tool call showed when it finished."""

    call_id: str
    name: str
    display_name: str
    source: str
    state: CallState
    duration_ms: float | None = None
    change_id: str | None = None
    reverted: bool = False
    sign_in: str | None = None  # the MCP server the call needed a sign-in to (its row offers "Sign in")

    def to_json(self) -> dict[str, Any]:
        out = {"call_id": self.call_id, "name": self.name, "display_name": self.display_name,
               "source": self.source, "state": self.state.value, "duration_ms": self.duration_ms,
               "change_id": self.change_id, "reverted": self.reverted}
        if self.sign_in:
            out["sign_in"] = self.sign_in
        return out


@dataclass
class SavedMessage:
    """One transcript row: the message plus what the chat view needs to show it."""

    seq: int
    message: Message
    created_at: str
    notice: Notice | None = None  # written by the loop (iteration limit, repeated failure)
    calls: list[CallRecord] = field(default_factory=list)  # for an assistant message's tool calls
    turn: int = 0  # the exchange it belongs to (1 = the first user message and its answer)
    unanswered: bool = False  # a user message with no answer after it (crash, failure, Stop)
    mark: Mark | None = None  # a stopped answer, or an error row (not part of the conversation)
    citations: "cites.AnswerCitations | None" = None  # the verdict on an answer's citations of its passages

    @property
    def is_error(self) -> bool:
        return self.mark is Mark.ERROR

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "created_at": self.created_at, "notice": self.notice is not None,
                "notice_kind": self.notice.value if self.notice else None, "turn": self.turn,
                "unanswered": self.unanswered, "mark": self.mark.value if self.mark else None,
                **self.message.to_json(), "calls": [c.to_json() for c in self.calls],
                **({"citations": self.citations.to_json()} if self.citations is not None else {})}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TranscriptStore:
    """Reads and appends sessions' chats on the graph store's one connection.

    ``read``/``write`` are context-manager factories yielding the connection:
    the store's ``connection_lock`` and ``transaction`` in the app (so chat
    writes and graph writes never interleave on the connection), or a plain
    connection's own in tests and tools.
    """

    def __init__(self, read: Callable[[], AbstractContextManager[sqlite3.Connection]],
                 write: Callable[[], AbstractContextManager[sqlite3.Connection]]) -> None:
        self._read = read
        self._transaction = write

    @classmethod
    def for_store(cls, store: "GraphStore") -> "TranscriptStore":
        return cls(store.connection_lock, store.transaction)

    @classmethod
    def for_connection(cls, conn: sqlite3.Connection) -> "TranscriptStore":
        """On a bare connection opened with ``isolation_level=None`` (explicit transactions)."""
        return cls(*bare_connection_access(conn))

    # -- writes -----------------------------------------------------------
    def append(self, session_id: str, messages: Sequence[Message], *, calls: Sequence[CallRecord] = (),
               notice: Notice | None = None, mark: Mark | None = None,
               citations: "cites.AnswerCitations | None" = None) -> list[int]:
        """Append messages (and the records of their tool calls) in one transaction; return their seqs.

        ``mark`` applies to the assistant messages among ``messages`` (a stopped answer's tool
        results are not marked); ``Mark.ASK`` to the person's message too. ``citations``: the
        verdict on the citations of the (last) assistant message among them."""
        by_call = {c.call_id: c for c in calls}
        seqs: list[int] = []
        at = _now()
        with self._transaction() as conn:
            row = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM chat_messages WHERE session_id = ?",
                               (session_id,)).fetchone()
            seq = int(row[0])
            for message in messages:
                seq += 1
                stored = _with_sign_in(message.to_json()["parts"], by_call)
                if citations is not None and message.role == "assistant":
                    _with_citations(stored, citations)
                parts = json.dumps(stored, ensure_ascii=False, default=str)
                cur = conn.execute(
                    "INSERT INTO chat_messages (session_id, seq, role, parts, notice, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (session_id, seq, message.role, parts,
                     _notice_code(notice, mark if message.role == "assistant" or mark is Mark.ASK else None), at))
                seqs.append(seq)
                for position, part in enumerate(message.tool_calls):
                    record = by_call.get(part.id)
                    if record is not None:
                        self._insert_call(conn, int(cur.lastrowid or 0), position, session_id, record)
        return seqs

    @staticmethod
    def _insert_call(conn: sqlite3.Connection, message_id: int, position: int, session_id: str,
                     r: CallRecord) -> None:
        conn.execute(
            "INSERT INTO chat_tool_calls (message_id, position, session_id, call_id, name, display_name, "
            "source, state, duration_ms, change_id, reverted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (message_id, position, session_id, r.call_id, r.name, r.display_name, r.source, r.state.value,
             r.duration_ms, r.change_id, int(r.reverted)))

    def messages_for_changes(self, session_id: str, change_ids: Sequence[str]) -> dict[str, int]:
        """change id → the id of the chat message whose tool call wrote it (provenance: which
        chat turn made a fact). Changes no chat call wrote are left out."""
        if not change_ids:
            return {}
        with self._read() as conn:
            return {str(c): int(m) for c, m in conn.execute(
                "SELECT change_id, message_id FROM chat_tool_calls WHERE session_id = ? AND change_id IN "
                "(SELECT value FROM json_each(?))", (session_id, json.dumps(list(change_ids))))}

    def mark_reverted(self, session_id: str, change_id: str, reverted: bool = True) -> int:
        """Flag the calls that recorded ``change_id`` (after Revert, or back after Redo)."""
        with self._transaction() as conn:
            cur = conn.execute("UPDATE chat_tool_calls SET reverted = ? WHERE session_id = ? AND change_id = ?",
                               (int(reverted), session_id, change_id))
            return cur.rowcount

    def clear(self, session_id: str) -> int:
        """Forget the session's chat (the graph stays); return how many messages were removed."""
        with self._transaction() as conn:
            conn.execute("DELETE FROM chat_tool_calls WHERE session_id = ?", (session_id,))
            cur = conn.execute("DELETE FROM chat_messages WHERE session_id = ?", (session_id,))
            _drop_orphan_images(conn, session_id)
            return int(cur.rowcount)

    def delete_turn(self, session_id: str, turn: int, *, expect_prompt: str | None = None) -> int:
        """Delete exchange ``turn`` whole (its user message, answer, calls, results, notices).

        ``expect_prompt``: the text of the exchange's user message as the caller showed it; when
        the saved one differs, nothing is deleted (the caller's view was out of date). Returns the
        number of messages removed; raises ``LookupError`` with a sentence when there is no such
        exchange. One transaction: the rest is renumbered 1..n, so ``append`` and readers see a
        chat that never had the exchange.
        """
        return self._delete(session_id, turn, expect_prompt, keep_prompt=False)

    def delete_answer(self, session_id: str, turn: int, *, expect_prompt: str | None = None) -> int:
        """Delete the answer of exchange ``turn`` (everything after its user message), keep the
        message itself: Regenerate then answers it again. Same checks and transaction as
        ``delete_turn``; returns the number of messages removed (0: it had no answer)."""
        return self._delete(session_id, turn, expect_prompt, keep_prompt=True)

    def delete_trailing_errors(self, session_id: str) -> int:
        """Delete the error rows at the end of the chat (Retry is answering their prompt again)."""
        with self._transaction() as conn:
            rows = conn.execute("SELECT id, notice FROM chat_messages WHERE session_id = ? ORDER BY seq DESC",
                                (session_id,)).fetchall()
            ids: list[int] = []
            for mid, code in rows:
                if int(code or 0) != _MARK_CODES[Mark.ERROR]:
                    break
                ids.append(mid)
            if ids:
                marks = ",".join("?" * len(ids))
                conn.execute(f"DELETE FROM chat_messages WHERE id IN ({marks})", ids)
            return len(ids)

    def _delete(self, session_id: str, turn: int, expect_prompt: str | None, *, keep_prompt: bool) -> int:
        with self._transaction() as conn:
            rows = conn.execute("SELECT id, seq, role, parts FROM chat_messages WHERE session_id = ? "
                                "ORDER BY seq", (session_id,)).fetchall()
            number, prompt = 0, None
            ids: list[int] = []
            for mid, _seq, role, parts in rows:
                is_prompt = role == "user"
                if is_prompt:
                    number += 1
                    if number == turn:
                        prompt = Message.from_json({"role": role, "parts": json.loads(parts)}).text
                if number == turn and not (keep_prompt and is_prompt):
                    ids.append(mid)
            missing = (turn < 1 or turn > number) if keep_prompt else (not ids or turn < 0)
            if missing:
                raise LookupError(f"There is no exchange {turn} in this chat; it has "
                                  f"{number} exchange{'s' if number != 1 else ''} (numbered from 1).")
            if expect_prompt is not None and prompt is not None and prompt.strip() != expect_prompt.strip():
                raise LookupError("The chat changed since it was shown; reload it and try again.")
            if not ids:
                return 0
            marks = ",".join("?" * len(ids))
            conn.execute(f"DELETE FROM chat_tool_calls WHERE message_id IN ({marks})", ids)
            conn.execute(f"DELETE FROM chat_messages WHERE id IN ({marks})", ids)
            # Renumber in two steps: UNIQUE(session_id, seq) is checked row by row.
            conn.execute("UPDATE chat_messages SET seq = -seq WHERE session_id = ?", (session_id,))
            gone = set(ids)
            kept = [mid for mid, *_ in rows if mid not in gone]
            conn.executemany("UPDATE chat_messages SET seq = ? WHERE id = ?",
                             [(n, mid) for n, mid in enumerate(kept, start=1)])
            _drop_orphan_images(conn, session_id)
            return len(ids)

    def sweep_images(self, session_id: str) -> int:
        """Drop the session's stored images no saved message refers to (an image stored for a
        message the turn then refused); returns how many went."""
        with self._transaction() as conn:
            return _drop_orphan_images(conn, session_id)

    # -- reads ------------------------------------------------------------
    def history(self, session_id: str) -> list[SavedMessage]:
        """Every saved message with its row metadata, oldest first (already repaired)."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT id, seq, role, parts, notice, created_at FROM chat_messages WHERE session_id = ? "
                "ORDER BY seq", (session_id,)).fetchall()
            call_rows = conn.execute(
                "SELECT message_id, call_id, name, display_name, source, state, duration_ms, change_id, reverted "
                "FROM chat_tool_calls WHERE session_id = ? ORDER BY message_id, position", (session_id,)).fetchall()
        calls: dict[int, list[CallRecord]] = {}
        for r in call_rows:
            calls.setdefault(r[0], []).append(CallRecord(r[1], r[2], r[3], r[4], CallState.parse(r[5]), r[6], r[7],
                                                         bool(r[8])))
        saved = []
        sign_ins: dict[str, str] = {}
        for mid, seq, role, parts, notice, at in rows:
            raw = json.loads(parts)
            message = Message.from_json({"role": role, "parts": raw})
            code = int(notice or 0)
            saved.append(SavedMessage(seq, message, at, _notice_of(code, message), calls.get(mid, []),
                                      mark=_MARKS_BY_CODE.get(code),
                                      citations=_citations_of(raw) if role == "assistant" else None))
            if role == "tool":
                sign_ins.update((p["call_id"], p[SIGN_IN_KEY]) for p in raw
                                if isinstance(p, dict) and isinstance(p.get(SIGN_IN_KEY), str) and "call_id" in p)
        if sign_ins:
            for item in saved:
                item.calls = [replace(c, sign_in=sign_ins[c.call_id]) if c.call_id in sign_ins else c
                              for c in item.calls]
        return _number(_repair(saved))

    def load(self, session_id: str) -> list[Message]:
        """The messages to hand to ``ai_chat`` (every tool call has its result; no error rows)."""
        return [s.message for s in self.history(session_id) if not s.is_error]

    def count(self, session_id: str) -> int:
        with self._read() as conn:
            row = conn.execute("SELECT COUNT(*) FROM chat_messages WHERE session_id = ?", (session_id,)).fetchone()
        return int(row[0])


def sign_in_of(structured: Any) -> str | None:
    """The MCP server a call's result says it needed a sign-in to (``mcp/connection.py`` puts
    ``{"needs_sign_in": server}`` in the structured value), else None."""
    needs = structured.get("needs_sign_in") if isinstance(structured, dict) else None
    return needs if isinstance(needs, str) and needs else None


def _with_sign_in(parts: list[dict[str, Any]], by_call: dict[str, CallRecord]) -> list[dict[str, Any]]:
    """A tool result whose call needed a sign-in keeps the server's name beside it (``SIGN_IN_KEY``)."""
    for part in parts:
        record = by_call.get(part.get("call_id", "")) if part.get("kind") == "tool_result" else None
        if record is not None and record.sign_in:
            part[SIGN_IN_KEY] = record.sign_in
    return parts


def _with_citations(parts: list[dict[str, Any]], verdict: "cites.AnswerCitations") -> None:
    """Keep ``verdict`` on the last text part of an answer's stored parts (none: not kept)."""
    text = [p for p in parts if p.get("kind") == "text"]
    if text:
        text[-1][cites.STORE_KEY] = verdict.to_json()


def _citations_of(raw: Any) -> "cites.AnswerCitations | None":
    """The verdict kept on a stored answer's parts, if any."""
    for part in reversed(raw if isinstance(raw, list) else []):
        if isinstance(part, dict) and cites.STORE_KEY in part:
            return cites.AnswerCitations.from_json(part[cites.STORE_KEY])
    return None


def _number(saved: list[SavedMessage]) -> list[SavedMessage]:
    """Set each row's exchange number and mark user messages that were never answered."""
    turn = 0
    for i, item in enumerate(saved):
        if item.message.role == "user":
            turn += 1
            nxt = next((s for s in saved[i + 1:] if not s.is_error), None)  # an error row is no answer
            item.unanswered = nxt is None or nxt.message.role == "user"
        item.turn = turn
    return saved


def _repair(saved: list[SavedMessage]) -> list[SavedMessage]:
    """Give every assistant tool call a result in the message after it."""
    out: list[SavedMessage] = []
    for i, item in enumerate(saved):
        out.append(item)
        calls = item.message.tool_calls
        if item.message.role != "assistant" or not calls:
            continue
        nxt = saved[i + 1] if i + 1 < len(saved) else None
        have = {p.call_id for p in nxt.message.tool_results} if nxt and nxt.message.role == "tool" else set()
        missing = [c for c in calls if c.id not in have]
        if not missing:
            continue
        parts = [ToolResultPart(c.id, c.name, INTERRUPTED_TEXT, True) for c in missing]
        if nxt is not None and nxt.message.role == "tool":
            nxt.message.parts.extend(parts)
        else:
            out.append(SavedMessage(item.seq, Message("tool", list(parts)), item.created_at))
        known = {c.call_id for c in item.calls}
        item.calls.extend(CallRecord(c.id, c.name, c.name, "unknown", CallState.INTERRUPTED)
                          for c in missing if c.id not in known)
    return out


def _drop_orphan_images(conn: sqlite3.Connection, session_id: str) -> int:
    """Delete the session's ``chat_images`` rows that no remaining message refers to,
    inside the caller's transaction: a deleted exchange or a cleared chat takes its
    images with it, an image another message still shows stays. A reference is the image's id
    (the sha256 hex of its bytes) in a message's saved parts; 64 hex characters do not occur
    there by chance; "contains" is ``replace(parts, id, '') <> parts``, which SQLite and PostgreSQL
    both run (``instr`` is SQLite's only). A database without the table (older than step 9) has nothing to drop."""
    try:
        cur = conn.execute(
            "DELETE FROM chat_images WHERE session_id = ? AND NOT EXISTS (SELECT 1 FROM chat_messages m "
            "WHERE m.session_id = chat_images.session_id AND replace(m.parts, chat_images.id, '') <> m.parts)", (session_id,))
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return 0
        raise
    return int(cur.rowcount)


def last_seq(conn: sqlite3.Connection, session_id: str) -> int:
    """The number of the session's last chat row (0 for an empty chat): what usage rows hang after."""
    row = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM chat_messages WHERE session_id = ?",
                       (session_id,)).fetchone()
    return int(row[0])
