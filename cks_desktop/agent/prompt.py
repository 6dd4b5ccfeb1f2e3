"""The system prompt: what the session graph holds and how to work with the tools.

Kept short on purpose: the tool descriptions already explain each tool, so the
prompt only gives the model what it cannot see from them (the graph's size and
vocabulary, so it reuses existing types and objects instead of inventing
near-duplicates) and a few working rules. It is built once per ``ai_chat``
call, not per model turn, so a provider's prompt cache stays warm across the
turns of one answer. The person's own per-session instructions come last, so
they win where they disagree.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

log = logging.getLogger(__name__)

MAX_TYPES_LISTED = 15

_RULES = """\
How to work:
- Look before you write: search or list the graph to find objects that already exist, and reuse them \
by name instead of creating duplicates. Reuse existing object and relation types where they fit.
- Prefer one batch of operations over many single writes. Every write is recorded as a change the \
person can see and revert.
- You work in this session only; session ids are filled in for you.
- A tool that fails returns an error message: read it and correct the call. Never repeat an identical \
call that failed.
- If the person declines a tool call, do not retry it; say what you wanted to do and ask how to go on.
- Answer in the person's language, concisely; say what you changed in the graph."""


def _type_lines(types: Iterable[dict[str, Any]]) -> str:
    ranked = sorted(types, key=lambda t: (-int(t.get("count") or 0), str(t.get("name"))))
    shown = [f"{t.get('name')} ({int(t.get('count') or 0)})" for t in ranked[:MAX_TYPES_LISTED]]
    more = len(ranked) - len(shown)
    return ", ".join(shown) + (f", and {more} more" if more > 0 else "") if shown else "none yet"


def graph_summary(store: Any, session_id: str) -> str:
    """One paragraph about the session's graph; a store failure degrades to a neutral line."""
    try:
        counts = store.counts(session_id)
        stats = store.type_stats(session_id)
    except Exception as exc:  # the prompt is advice; a read failure must not stop the chat
        log.warning("could not summarise session %s for the prompt: %s", session_id, exc)
        return "The size of the session graph could not be read; look it up with the tools."
    objects, relations = int(counts.get("objects", 0)), int(counts.get("relations", 0))
    if objects == 0 and relations == 0:
        return "The session graph is empty so far."
    return (
        f"The session graph holds {objects} object{'s' if objects != 1 else ''} and "
        f"{relations} relation{'s' if relations != 1 else ''}.\n"
        f"Object types: {_type_lines(stats.get('object_types') or [])}.\n"
        f"Relation types: {_type_lines(stats.get('relation_types') or [])}."
    )


def build_system_prompt(store: Any, session_id: str, *, title: str = "", instructions: str = "",
                        tool_names: Iterable[str] = ()) -> str:
    names = set(tool_names)
    head = ("You are the assistant of CKS Desktop. You help a person build and explore a knowledge "
            "graph of typed objects joined by typed relations")
    head += f", in the session \"{title}\"." if title else "."
    parts = [head, graph_summary(store, session_id), _RULES]
    if "construct_knowledge" in names:
        parts.append("To turn a longer text (notes, an article) into objects and relations, pass it to "
                     "construct_knowledge rather than writing each object yourself.")
    if not names:
        parts.append("No tools are available in this chat; answer from the conversation alone.")
    if instructions.strip():
        parts.append("The person's instructions for this session:\n" + instructions.strip())
    return "\n\n".join(parts)
