"""The chat's edits, for the window and the commands alike: delete an exchange, clear the chat,
drop an answer to regenerate it, prepare a Retry.

A chat *turn* runs through the Assistant (``agent/assistant.py``), which both front ends already
share; these are the other things a person does to a chat. Each edit is one transaction of the
transcript and returns what it did in one sentence, or raises ``ChatEditRefused`` with one sentence
why nothing changed — the same words in the window and in the terminal.

``keep_ask`` saves an answer of the Ask window into the chat as one exchange marked ``Mark.ASK``:
the person's ``/ask QUESTION`` and the answer's text followed by its checked sources and the
citations that failed their check, as Markdown (shown with HTML off, like every answer), so the
chat shows it again after a restart and a later turn can build on it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cks_desktop.plural import counted

if TYPE_CHECKING:
    from cks_desktop.agent.transcript import TranscriptStore
    from cks_desktop.llm.messages import Message
    from cks_desktop.runtime.answer import Answer

log = logging.getLogger(__name__)

NOTHING_TO_RETRY = "The chat does not end with an unanswered message, so there is nothing to retry."


class ChatEditRefused(Exception):
    """One sentence why a chat edit did not happen; the chat is as it was."""


class StaleExchange(ChatEditRefused):
    """The exchange is not (or no longer) the one the caller showed: it changed since."""


@dataclass(frozen=True)
class ChatEdit:
    removed: int  # messages deleted
    sentence: str  # what was done, for the person


class ChatUseCase:
    """Edits of one data folder's chats (``TranscriptStore``)."""

    def __init__(self, transcripts: "TranscriptStore") -> None:
        self.transcripts = transcripts

    def delete_exchange(self, session_id: str, turn: int, *, expect_prompt: str | None = None) -> ChatEdit:
        """Delete exchange ``turn`` whole: the person's message, the answer, its calls (the graph stays)."""
        removed = _edit(lambda: self.transcripts.delete_turn(session_id, turn, expect_prompt=expect_prompt),
                        "The messages could not be deleted")
        return ChatEdit(removed, f"Deleted exchange {turn} ({counted(removed, 'message')}); the graph is unchanged.")

    def clear(self, session_id: str) -> ChatEdit:
        """Delete every message of the chat (the graph stays)."""
        removed = _edit(lambda: self.transcripts.clear(session_id), "The chat could not be cleared")
        return ChatEdit(removed, f"Cleared the chat ({counted(removed, 'message')} deleted); the graph is unchanged.")

    def drop_answer(self, session_id: str, turn: int, *, expect_prompt: str | None = None) -> ChatEdit:
        """Delete the answer of exchange ``turn`` and keep its message (Regenerate answers it again)."""
        removed = _edit(lambda: self.transcripts.delete_answer(session_id, turn, expect_prompt=expect_prompt),
                        "The answer could not be replaced")
        return ChatEdit(removed, f"Dropped the answer of exchange {turn} ({counted(removed, 'message')}).")

    def drop_trailing_errors(self, session_id: str) -> int:
        """Delete the saved error rows after the last message (Retry answers their prompt again);
        a failure is logged and deletes nothing (the retry still runs)."""
        try:
            return self.transcripts.delete_trailing_errors(session_id)
        except Exception:
            log.exception("dropping the saved error failed")
            return 0

    def prepare_retry(self, session_id: str) -> None:
        """Make the chat ready to answer its last, unanswered message again; refused when the chat
        does not end with one (a saved error is no answer)."""
        history = [row for row in self.transcripts.history(session_id) if not row.is_error]
        if not history or not history[-1].unanswered:
            raise ChatEditRefused(NOTHING_TO_RETRY)
        self.drop_trailing_errors(session_id)

    def keep_ask(self, session_id: str, question: str, answer: "Answer") -> ChatEdit:
        """Save an Ask answer as one exchange of the chat, marked as from Ask (see the module docstring)."""
        from cks_desktop.agent.transcript import Mark

        pair = ask_messages(question, answer)
        _edit(lambda: len(self.transcripts.append(session_id, pair, mark=Mark.ASK)),
              "The answer could not be kept in the chat")
        return ChatEdit(0, "The answer is kept in the chat.")

    def saved_prompts(self, session_id: str) -> int:
        """How many of the person's messages the chat has saved."""
        return sum(1 for m in self.transcripts.load(session_id) if m.role == "user")


def ask_messages(question: str, answer: "Answer") -> list["Message"]:
    """The person's ``/ask QUESTION`` and the answer with its sources and unsupported citations."""
    from cks_desktop.llm.messages import Message, Text

    lines = [answer.text.strip()]
    if answer.citations:
        lines += ["", "**Sources**", ""]
        for c in answer.citations:
            page = f"page {c.page}, " if c.page is not None else ""
            quote = f" — “{c.quote}”" if c.quote else ""
            lines.append(f"- [{c.n}] {c.document} ({page}characters {c.start:,}–{c.end:,}){quote}")
    if answer.unsupported:
        lines += ["", "**Not supported** — the model cited what its passages do not say", ""]
        for u in answer.unsupported:
            quote = f" “{u.quote}”" if u.quote else ""
            lines.append(f"- [{u.n}]{quote}: {u.to_json()['reason']}")
    return [Message.user(f"/ask {question.strip()}"), Message("assistant", [Text("\n".join(lines))])]


def _edit(action: Callable[[], int], failing: str) -> int:
    """Run one transcript edit: a stale exchange keeps its own sentence, any other failure (a
    locked or damaged file, a full disk) becomes ``failing: why``; nothing is half-done."""
    try:
        return action()
    except LookupError as exc:
        raise StaleExchange(str(exc)) from None
    except Exception as exc:
        log.exception("%s", failing.lower())
        raise ChatEditRefused(f"{failing}: {exc}") from None
