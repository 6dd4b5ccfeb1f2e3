"""``construct_knowledge``: a text from the chat becomes knowledge with sources, as one change.

It runs on the same stages as a document's extraction (``extraction/``), not on an engine of its
own: the text is stored as a note document of the session (``Chat note: …``, plain text; the same
text again is the same document), then ``extraction.runner.Extraction`` reads it part by part
(the cache first, the answer budget, the one retry policy), resolves names against the graph like
a careful reader, and lays out a plan; ``apply_plan`` writes the plan in ONE change, every object
and relation with its source passage in the note. So what the model adds from the chat can be
reverted in one step, is cited like anything read from a document, and reading the same text
again adds nothing and asks the model nothing (the parts' answers are cached).

The model is told nothing it could use to widen what it may do: the text is quoted to it as data
(``extraction/prompt.py``) and its answer only names things; this module and the extraction
stages, not the model, turn the answer into store operations. The person's ``instructions`` are
the extraction's guidance.

Not done here, on purpose: the extraction's review of doubtful items (a chat turn has no review
panel; the items it would show are not written and the result lists them as left out) and
the extraction caps of Settings (the chat's own limits hold for a turn).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TYPE_CHECKING

from cks_desktop.tools.builtin.effects import note_own_additions
from cks_desktop.tools.builtin.refs import blocking, recorded, store_errors
from cks_desktop.tools.context import ToolContext
from cks_desktop.tools.types import Policy, Scope, ToolError, ToolSpec

if TYPE_CHECKING:
    from cks_desktop.documents.model import Document
    from cks_desktop.extraction.plan import Plan
    from cks_desktop.extraction.runner import Extraction, Progress
    from cks_desktop.tools.registry import ToolRegistry

MAX_TEXT_CHARS = 200_000
NOTE_PREFIX = "Chat note: "
NOTE_NAME_CHARS = 48

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "session_id": {"type": "string", "description": "The session. Filled in automatically."},
        "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS,
                 "description": "The text to read: notes, an article, a transcript."},
        "instructions": {"type": "string", "maxLength": 4000,
                         "description": "Optional guidance, e.g. \"only people and organisations\"."},
    },
    "required": ["session_id", "text"],
    "additionalProperties": False,
}

RESULT_KEYS = ("change_id", "summary", "counts", "document", "parts", "model_calls", "left_out", "failed_parts")


def note_name(text: str) -> str:
    """``Chat note: <the first words>``: how the note reads in the documents list and as a source."""
    first = " ".join(text.split())
    if len(first) > NOTE_NAME_CHARS:
        first = first[:NOTE_NAME_CHARS].rsplit(" ", 1)[0].rstrip(" ,;:.") + "…"
    return NOTE_PREFIX + first


def _store_note(ctx: ToolContext, text: str) -> "Document":
    """The note document of ``text`` (added now, or the one the session already has), with its text."""
    from cks_desktop.documents.errors import DocumentError
    from cks_desktop.documents.readers import TEXT, read_bytes
    from cks_desktop.documents.store import DocumentStore

    documents = DocumentStore(ctx.store)
    try:
        read = read_bytes(text.encode("utf-8"), note_name(text), source="chat", media_type=TEXT)
        added = documents.add(ctx.session_id, [read])
    except DocumentError as exc:
        raise ToolError(str(exc)) from None
    stored = (added.added or added.already)[0]
    return documents.get(ctx.session_id, stored.id)


def _reporter(ctx: ToolContext) -> "Callable[[Progress], None] | None":
    """The extraction's progress as the tool row's progress (parts read of parts)."""
    report = ctx.run.on_progress
    if report is None:
        return None

    def on_progress(progress: "Progress") -> None:
        waiting = f" ({progress.waiting})" if progress.waiting else ""
        report(ctx.call_id, float(progress.chunks_done), float(progress.chunks_total),
               f"read {progress.chunks_done} of {progress.chunks_total} parts{waiting}")

    return on_progress


async def _plan(ctx: ToolContext, document: "Document", instructions: str) -> "tuple[Extraction, Plan]":
    from cks_desktop.extraction.runner import Extraction, ExtractionStopped

    extraction = await asyncio.to_thread(Extraction, ctx.store, ctx.session_id, document, ctx.run.llm,
                                         guidance=instructions, on_progress=_reporter(ctx))
    try:
        with store_errors():
            plan = await extraction.run()
    except ExtractionStopped as exc:
        raise ToolError(str(exc)) from None
    failed = extraction.progress.failed_chunks
    if failed and len(failed) >= len(extraction.chunks):  # no part could be read: nothing to write
        raise ToolError(f"The text could not be read: {failed[0]}.")
    return extraction, plan


def _hold_doubtful(plan: "Plan") -> list[str]:
    """Leave out what a document's extraction would show for review (a quote not found in the
    text, an item the stages already left out): a chat turn has no review panel, so these are not
    written and the result names them."""
    held = []
    for item in plan.needs_review():
        item.include = False
        why = "; ".join(item.reasons) or "to review"
        held.append(f"{item.name or item.type or item.key} ({why})")
    return held


async def construct_knowledge(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if ctx.run.llm is None:
        raise ToolError("No AI provider is set up for this chat, so the text cannot be read; "
                        "choose a provider in Settings → Providers.")
    text = str(args["text"])
    if not text.strip():
        raise ToolError("The text is empty; there is nothing to read.")
    document = await blocking(_store_note, ctx, text)
    extraction, plan = await _plan(ctx, document, str(args.get("instructions", "")))
    from cks_desktop.extraction.runner import apply_plan

    assert extraction.context is not None  # set by run()
    left_out = _hold_doubtful(plan)
    base: dict[str, Any] = {
        "document": {"id": document.id, "name": document.name},
        "parts": len(extraction.chunks), "model_calls": extraction.progress.calls,
        "left_out": [*plan.skipped, *left_out], "failed_parts": list(extraction.progress.failed_chunks),
    }
    results = await blocking(apply_plan, ctx.store, plan, extraction.context, ctx.run.origin)
    written = [r for r in results if r.change is not None]
    if not written:
        return {"change_id": None, "summary": "Found nothing new to add; the graph already says it.", **base}
    result = written[0]  # one change: apply_plan writes a plan that is not split by part in one
    note_own_additions(ctx, result)
    recorded(ctx, result)
    return {"change_id": result.change.id, "summary": result.summary or "changes nothing",
            "counts": result.counts, **base}


async def construct_effects(args: dict[str, Any], ctx: ToolContext) -> dict[str, int]:
    """Adds objects and relations, and merges into existing objects (aliases, properties, sources),
    so it asks at least like add_object, update_object and add_relation."""
    return {"add_object": 1, "update_object": 1, "add_relation": 1}


CONSTRUCT_KNOWLEDGE = ToolSpec(
    name="construct_knowledge",
    title="Construct knowledge",
    description=("Read a text (notes, an article, a transcript) and add the objects and relations it "
                 "describes to the graph as one change, each with its source passage (the text is kept "
                 "as a note document of the session), reusing existing objects by name. Use it for "
                 "anything longer than a few facts. Returns the change id and a summary."),
    input_schema=INPUT_SCHEMA,
    scopes=frozenset({Scope.PROVIDER_CALL, Scope.GRAPH_MUTATE}),
    default_policy=Policy.AUTO,
    llm_exposed=True,
    handler=construct_knowledge,
    effects=construct_effects,
    result_keys=RESULT_KEYS,
    summary_args=("text",),
)


def register_agent_tools(registry: "ToolRegistry") -> None:
    """Add the tools that need a model (they live above ``tools``, beside the loop)."""
    registry.register(CONSTRUCT_KNOWLEDGE, replace=True, checked_schema=True)  # a test checks it
