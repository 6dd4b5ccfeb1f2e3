"""What one model request is allowed to carry from the conversation.

The transcript keeps every message whole; this module builds the *view* of it
that a request sends, so a single huge message can never make every later
turn huge, and the conversation a provider sees always has a valid shape:

- Each part contributes at most ``PART_LIMIT`` characters and one message at
  most ``MESSAGE_LIMIT`` (shared among its parts, small parts first). A longer
  text, tool result or tool-call argument string is cut in the middle (the
  start and the end are kept, as both tend to matter: a heading, a final
  error line) with a visible notice saying it was shortened and that the full
  text is in the chat transcript. Limits count characters, not tokens: the
  point is a hard bound, not a budget (full context management is the
  assistant issue's job).
- A user message directly followed by another user message was never answered
  (the app crashed, the provider failed, Stop came first). It is left out, so
  the next prompt is never sent merged with it; the chat shows it as
  unanswered with Retry, which re-sends it on its own.

Unchanged messages are passed through as the same objects, so the common case
costs one length check per part.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Sequence
from typing import Any

from cks_desktop.llm.messages import ImagePart, Message, Part, Reasoning, Text, ToolCallPart, ToolResultPart

PART_LIMIT = 100_000
MESSAGE_LIMIT = 200_000
MIN_PART = 1_000  # a part always keeps room for its notice and a little of its text


def shortened_notice(total: int, dropped: int) -> str:
    return (f"\n\n[… shortened for the model: {dropped:,} of {total:,} characters were left out here. "
            "The full text is kept in the chat transcript. …]\n\n")


def shorten(text: str, limit: int) -> str:
    """``text`` itself when it fits; otherwise its start and end around a notice, about ``limit`` long."""
    if len(text) <= limit:
        return text
    probe = shortened_notice(len(text), len(text))
    keep = max(0, limit - len(probe))
    head = keep * 3 // 4
    tail = keep - head
    return text[:head] + shortened_notice(len(text), len(text) - keep) + (text[len(text) - tail:] if tail else "")


def _shorten_value(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return shorten(value, limit)
    if isinstance(value, dict):
        return {k: _shorten_value(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten_value(v, limit) for v in value]
    return value


def _arguments_size(arguments: dict[str, Any]) -> int:
    return len(json.dumps(arguments, ensure_ascii=False, default=str))


def _size(part: Part) -> int:
    if isinstance(part, Text):
        return len(part.text)
    if isinstance(part, ToolResultPart):
        return len(part.content)
    if isinstance(part, (Reasoning, ImagePart)):  # never cut (a signature covers it whole; an image is whole)
        return 0
    return _arguments_size(part.arguments)


def _bounded_part(part: Part, size: int, limit: int) -> Part:
    if size <= limit or isinstance(part, (Reasoning, ImagePart)):
        return part
    if isinstance(part, Text):
        return Text(shorten(part.text, limit))
    if isinstance(part, ToolResultPart):
        return ToolResultPart(part.call_id, part.name, shorten(part.content, limit), part.is_error,
                              images=part.images)
    arguments = _shorten_value(part.arguments, limit)
    if _arguments_size(arguments) > limit:  # many medium strings: keep a summary the model can read
        flat = json.dumps(part.arguments, ensure_ascii=False, default=str)
        arguments = {"shortened_arguments": shorten(flat, limit)}
    return ToolCallPart(part.id, part.name, arguments, metadata=part.metadata)


def _limits(sizes: list[int]) -> list[int]:
    """Per-part limits: small parts keep their size, the rest share what is left of the budget."""
    limits = [0] * len(sizes)
    budget = MESSAGE_LIMIT
    order = sorted(range(len(sizes)), key=sizes.__getitem__)
    for rank, i in enumerate(order):
        share = max(MIN_PART, budget // (len(sizes) - rank))
        limits[i] = min(sizes[i], PART_LIMIT, share)
        budget = max(0, budget - limits[i])
    return limits


_BOUNDED: dict[int, tuple[Any, Message]] = {}  # id(message) -> (weak reference, its bounded form)
_BOUNDED_LIMIT = 50_000


def bounded_message(message: Message) -> Message:
    """The message with every part within its limit (the same object when nothing is cut).

    Kept per message object (messages in a chat are never changed in place; a changed copy is a
    new object), so fitting a long chat each turn does not measure every old message again."""
    key = id(message)
    hit = _BOUNDED.get(key)
    if hit is not None and hit[0]() is message:
        return hit[1]
    bounded = _bounded_message(message)
    if len(_BOUNDED) >= _BOUNDED_LIMIT:
        _BOUNDED.clear()
    _BOUNDED[key] = (weakref.ref(message), bounded)
    return bounded


def _bounded_message(message: Message) -> Message:
    sizes = [_size(p) for p in message.parts]
    if sum(sizes) <= MESSAGE_LIMIT and max(sizes, default=0) <= PART_LIMIT:
        return message
    limits = _limits(sizes)
    return Message(message.role, [_bounded_part(p, s, lim) for p, s, lim in zip(message.parts, sizes, limits)])


def unanswered(messages: Sequence[Message], index: int) -> bool:
    """A user message that the next message does not answer (another user message follows it)."""
    return (messages[index].role == "user" and index + 1 < len(messages)
            and messages[index + 1].role == "user")


def request_messages(messages: Sequence[Message]) -> list[Message]:
    """The conversation as one request sends it: unanswered prompts left out, every part bounded."""
    return [bounded_message(m) for i, m in enumerate(messages) if not unanswered(messages, i)]
