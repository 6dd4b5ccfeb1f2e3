"""Extracting a document's knowledge, the use case both front ends call: estimate, run, apply.

What the settings decide about an extraction is read here once, for the window and the CLI alike:
the person's price overrides (``agent.prices``, so an estimate and the running cost check use the
prices set in Settings), the cap over which the window asks and the CLI refuses
(``extraction.max_calls`` / ``max_cost_usd``, unless a command line gives its own), the size over
which the plan is reviewed before writing, and whether a document is written part by part.

``start`` builds the ``extraction.runner.Extraction`` (it chunks the text: seconds for a long
document, so the window calls it on a worker thread); its ``estimate()``, ``run()`` (progress
through ``on_progress``) and ``apply`` are the rest of the flow. ``again`` plans once more from the
cache with the same choices (after the review split merged identities); ``apply_reviewed`` writes a
plan the person edited in a review file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cks_desktop.extraction.caps import Cap, cap_of, with_cap
from cks_desktop.extraction.runner import Extraction, ExtractionStopped, Progress
from cks_desktop.settings import Agent, Settings
from cks_desktop.settings import Extraction as ExtractionSettings

if TYPE_CHECKING:
    from cks_desktop.documents.model import Document
    from cks_desktop.extraction.plan import Plan
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.llm.provider import Provider


__all__ = ["Extraction", "ExtractionStopped", "ExtractionUseCase", "Progress"]


class ExtractionUseCase:
    """Extractions on one store, with the choices of one settings file (read at each call, so a
    change in Settings holds for the next extraction)."""

    def __init__(self, store: "GraphStore", settings: Settings) -> None:
        self.store = store
        self.settings = settings

    # -- what the settings decide ---------------------------------------------------------------
    def _section(self) -> ExtractionSettings:
        return self.settings.section(ExtractionSettings)

    def prices(self) -> dict[str, Any]:
        """The person's price overrides (``agent.prices``; entries that are not valid prices were
        dropped on reading, so the built-in price applies to them)."""
        return dict(self.settings.section(Agent).prices)

    def cap(self) -> Cap:
        return cap_of(self._section())

    def review_over_chars(self) -> int:
        """A document longer than this is reviewed before anything is written (0: always)."""
        return self._section().review_over_chars

    def needs_review(self, document: "Document", plan: "Plan") -> bool:
        return len(document.text) > self.review_over_chars() or bool(plan.needs_review())

    def writes_per_part(self, document: "Document", plan: "Plan") -> bool:
        """Whether an unreviewed document is written as one change per part (the setting)."""
        return self._section().write_per_chunk and not self.needs_review(document, plan)

    # -- the flow -------------------------------------------------------------------------------
    def document(self, session_id: str, ref: str) -> "Document":
        """The document ``ref`` names (its id, a prefix of it, or its file name); ``DocumentError``
        with one sentence when it names none or several."""
        from cks_desktop.documents.store import DocumentStore

        return DocumentStore(self.store).get(session_id, ref)

    def start(self, session_id: str, document: "Document", provider: "Provider | None", *,
              guidance: str = "", max_calls: int | None = None, max_cost_usd: float | None = None,
              use_cap: bool = True, on_progress: Callable[[Progress], None] | None = None) -> Extraction:
        """The extraction of ``document`` with the person's prices; the cap holds where the caller
        gives no limit of its own (``use_cap=False``: none, as the window does when the person
        confirmed an estimate over it)."""
        cap = self.cap() if use_cap else Cap()
        return Extraction(self.store, session_id, document, provider, guidance=guidance,
                          max_calls=max_calls if max_calls is not None else cap.max_calls,
                          max_cost_usd=max_cost_usd if max_cost_usd is not None else cap.max_cost_usd,
                          prices=self.prices(), on_progress=on_progress)

    def again(self, ex: Extraction) -> Extraction:
        """A new extraction of the same document with the same choices (it plans from the cache)."""
        return Extraction(self.store, ex.session_id, ex.document, ex.provider, guidance=ex.guidance,
                          max_calls=ex.max_calls, max_cost_usd=ex.max_cost_usd, prices=ex.prices,
                          on_progress=ex.on_progress)

    def apply(self, ex: Extraction, plan: "Plan", origin: str, *, per_part: bool = False,
              on_write: Callable[[int, int], None] | None = None) -> list[Any]:
        """Write the plan's included items in one change (or one per part); blocks: the window
        calls it on a worker thread. Returns the ``ApplyResult`` of each change."""
        from cks_desktop.extraction.runner import apply_plan

        if ex.context is None:
            raise RuntimeError("apply needs an extraction that has run")
        return apply_plan(self.store, plan, ex.context, origin, per_chunk=per_part, on_write=on_write)

    def apply_reviewed(self, plan: "Plan", origin: str) -> list[Any]:
        """Write a plan the person reviewed (a review file): asks the model nothing; blocks."""
        from cks_desktop.extraction.runner import apply_plan, load_context

        return apply_plan(self.store, plan, load_context(self.store, plan.session_id), origin)

    def mark_distinct(self, session_id: str, pairs: "list[tuple[str, str]]") -> None:
        """Record that each pair of identities are different things (the next plan keeps them apart)."""
        from cks_desktop.extraction.cache import ExtractionCache

        cache = ExtractionCache(self.store, session_id)
        for a, b in pairs:
            cache.mark_distinct(a, b)
