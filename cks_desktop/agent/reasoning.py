"""How the model's thinking reads to a person, for every front end.

The chat's collapsed line above an answer, the Markdown export and the CLI say the same
words: "Thinking…" while it streams, then "Thought for 12 s". A message's thinking blocks are
shown as one text (blank lines between blocks; a redacted block has no words) and their
times are added up.
"""

from __future__ import annotations

from collections.abc import Sequence

from cks_desktop.llm.messages import Reasoning


def headline(seconds: float | None, thinking: bool = False) -> str:
    """The collapsed line: "Thinking…" while it streams, then how long it took."""
    if thinking:
        return "Thinking…"
    if seconds is None:
        return "Thoughts"
    if seconds < 1:
        return "Thought for less than a second"
    return f"Thought for {round(seconds)} s"


def shown(parts: Sequence[Reasoning]) -> tuple[str, float | None]:
    """(the thinking's words, seconds thought) of a message's reasoning parts."""
    text = "\n\n".join(p.text.strip() for p in parts if p.text.strip())
    times = [p.seconds for p in parts if p.seconds is not None]
    return text, (sum(times) if times else None)
