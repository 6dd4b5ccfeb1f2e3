"""A fake chat model that reads: it retrieves, then answers only from the passages it was sent.

Plugged into the OpenAI or Anthropic fake server as its ``side_turn``. When the request's last message
is the person's, it calls ``retrieve_passages`` with the person's words. When it ends with that tool's
result, it reads the passages out of the result as the request carries it (never the store), picks
the one sharing most of the question's words and cites it by the number the tool gave it, quoting
its best sentence as it stands. ``mode`` plays the mistakes a real model makes: ``"mixed"`` adds a
citation of passage 99 (never given) and a misquote of the good passage to the good citation.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any, Literal

from tests.fakes.script import ScriptedCall, Turn

Mode = Literal["good", "mixed"]
_STOP = frozenset("what which who whom whose when where why how does did do the a an of in on at to for by "
                  "is was were are and or with from that this".split())


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 2}


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(_text(p.get("text", p.get("content", ""))) for p in content if isinstance(p, dict))
    return str(content or "")


def _last(messages: list[dict[str, Any]]) -> tuple[str, str]:
    """``("user", text)`` or ``("tool", result text)`` for the last message, on either wire."""
    last = messages[-1]
    content = last.get("content")
    if last.get("role") == "tool":
        return "tool", _text(content)
    if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") == "tool_result" for p in content):
        return "tool", "".join(_text(p.get("content")) for p in content if p.get("type") == "tool_result")
    return str(last.get("role")), _text(content)


class ChatReader:
    def __init__(self, mode: Mode = "good") -> None:
        self.mode = mode
        self.question = ""
        self.answers: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, body: Any) -> Turn | None:
        messages = body.get("messages") if isinstance(body, dict) else None
        if not messages:
            return None
        role, text = _last(messages)
        if role == "user":
            with self.lock:
                self.question = text
            return Turn(tool_calls=[ScriptedCall("retrieve_passages", {"question": text})])
        if role != "tool":
            return None
        try:
            passages = json.loads(text).get("passages") or []
        except ValueError:
            return None
        answer = self.answer(passages)
        with self.lock:
            self.answers.append(answer)
        third = max(1, len(answer) // 3)
        return Turn(text=[answer[:third], answer[third:2 * third], answer[2 * third:]])

    def answer(self, passages: list[dict[str, Any]]) -> str:
        asked = _words(self.question)
        best = max(passages, key=lambda p: len(asked & _words(str(p["text"]))), default=None)
        if best is None or not asked & _words(str(best["text"])):
            return "The passages do not say."
        sentences = re.split(r"(?<=[.!?])\s+", str(best["text"]).strip())
        quote = max(sentences, key=lambda s: len(asked & _words(s))).rstrip(".")
        n = int(best["n"])
        text = f'{quote} [{n} "{quote}"].'
        if self.mode == "mixed":
            wrong = " ".join(quote.split()[:-1] + ["certainly"])
            text += f' It was painted red [99 "painted red"], and it is said that {wrong} [{n} "{wrong}"].'
        return text
