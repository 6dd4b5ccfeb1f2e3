"""A fake answering model that reads: it answers only from the request it is sent.

Plugged into any fake server of tests/fakes as its ``side_turn``. It reads the question and the
numbered passages out of the request's data block (never the gold, never the store), picks the passage
sharing most of the question's words, and cites it with the sentence of it that shares most, quoted
as it stands. With no shared word it replies ``NOT_IN_DOCUMENTS``, as it was told to.

``mode`` plays the mistakes a real model makes: ``"cite_missing"`` cites passage 99 (never given),
``"misquote"`` changes a word of its quote, ``"mixed"`` adds a bad citation to a good one, and
``"memory"`` answers from "memory" with no citation at all.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any, Literal

from tests.fakes.script import Turn

Mode = Literal["good", "cite_missing", "misquote", "mixed", "memory"]
DATA_RE = re.compile(r"<<<PASSAGES \(JSON\)\n(.*?)\nPASSAGES>>>", re.DOTALL)
QUESTION_RE = re.compile(r"^Question: (.*)$", re.MULTILINE)
_STOP = frozenset("what which who whom whose when where why how does did do the a an of in on at to for by "
                  "is was were are and or with from that this".split())


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 2}


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


class AskReader:
    def __init__(self, mode: Mode = "good") -> None:
        self.mode = mode
        self.calls = 0
        self.prompts: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, body: Any) -> Turn | None:
        messages = body.get("messages") if isinstance(body, dict) else None
        users = [_content(m) for m in messages or [] if m.get("role") == "user"]
        data = DATA_RE.search(users[0]) if users else None
        question = QUESTION_RE.search(users[0]) if users else None
        if data is None or question is None:
            return None
        with self.lock:
            self.calls += 1
            self.prompts.append(users[0])
        return Turn(text=self.answer(question.group(1), json.loads(data.group(1))))

    def answer(self, question: str, passages: list[dict[str, Any]]) -> list[str]:
        asked = _words(question)
        if self.mode == "memory":
            return ["It was Isambard Kingdom Brunel, ", "as everyone knows."]
        best = max(passages, key=lambda p: len(asked & _words(str(p["text"]))), default=None)
        if best is None or not asked & _words(str(best["text"])):
            return ["NOT_IN_DOCUMENTS"]
        sentences = re.split(r"(?<=[.!?])\s+", str(best["text"]).strip())
        quote = max(sentences, key=lambda s: len(asked & _words(s))).rstrip(".")
        n = int(best["n"])
        if self.mode == "cite_missing":
            n = 99
        if self.mode == "misquote":
            words = quote.split()
            quote = " ".join(words[:-1] + ["certainly"])
        text = f'{quote} [{n} "{quote}"].'
        if self.mode == "mixed":
            text += ' The bridge was also painted red [99 "painted red"].'
        third = max(1, len(text) // 3)
        return [text[:third], text[third:2 * third], text[2 * third:]]
