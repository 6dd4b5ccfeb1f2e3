"""What the review says about the items the extraction bounds left out of a plan (``Plan.skipped``).

The decision: a left-out item is shown, with why, and is never ticked back in from the review.

- Over a count bound (more objects or relations than a part's length allows, properties past the
  first 100 of an object): the answer claimed more than its text can plausibly hold, which is what
  a runaway or injected answer looks like; what it named past the bound was never resolved against
  the graph (no merge into what is there, no duplicate check) nor kept with its grounded quote, so
  ticking it in would write exactly the unreviewed bulk the bound is there to stop. If the part
  really holds that many (a long list, a table), the person adds them by hand or splits the
  document and extracts again.
- Malformed (a name or type longer than the store takes, no name, a repeated ref, a relation to an
  object the answer did not name, a property value over 10,000 characters): the store would refuse
  it as it is, so there is nothing to tick in.

The notes are sentences made by ``extraction/plan.py``; ``kind`` tells them apart by their words
(a test makes every note ``collect_chunk`` writes and checks that none is ``unknown``).
"""

from __future__ import annotations

from typing import Literal

Kind = Literal["over_bound", "malformed", "unknown"]

_OVER = ("more objects than part", "more relations than part", "past the first")
_MALFORMED = ("characters long", "without a name", "repeated ref", "is not an object of the answer",
              "longer than")

WHY: dict[Kind, str] = {
    "over_bound": ("Over a bound (a part may name at most 30 objects or one per 20 characters, 60 relations or "
                   "one per 10 characters, 100 properties per object): an answer that claims more than its text "
                   "can hold is how a runaway or injected answer looks, and what it named past the bound was "
                   "never checked against the graph, so it cannot be ticked back in. If the part really holds "
                   "that many (a long list or table), add them by hand, or split the document and extract again."),
    "malformed": ("Cannot be written as it is (a name or type too long, no name, a relation to an object the "
                  "answer did not name, a value over 10,000 characters): the store would refuse it."),
    "unknown": "Left out by the extraction's checks.",
}


def kind(note: str) -> Kind:
    """Which kind of left-out item a ``Plan.skipped`` note is about."""
    if any(p in note for p in _OVER):
        return "over_bound"
    if any(p in note for p in _MALFORMED):
        return "malformed"
    return "unknown"
