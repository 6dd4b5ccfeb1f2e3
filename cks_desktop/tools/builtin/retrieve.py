"""``retrieve_passages``: the passages of the session's documents that answer a question.

Read-only (scope graph.read, policy auto, offered to models and through ``mcp serve``), like
``search_objects``. It calls the core's one retrieval function (hybrid BM25 + local embeddings +
graph expansion) on a worker thread, so the chat's event loop never waits on it.

Each passage carries its number ``n``, counted on across the calls of one run (the second call's
first passage follows the first call's last), so a citation ``[n "exact words"]`` names one passage
of the whole turn; the chat checks every such citation of its answer (``agent/citations.py``).
"""

from __future__ import annotations

from typing import Any

from cks_desktop.tools.builtin import schemas as S
from cks_desktop.tools.builtin.refs import blocking
from cks_desktop.tools.context import ToolContext
from cks_desktop.tools.types import Policy, ToolError, ToolSpec

MAX_QUESTION_CHARS = 4000


async def retrieve_passages(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    from cks_desktop.retrieval.service import RetrievalError, retrieve

    try:
        found = await blocking(retrieve, ctx.store, ctx.session_id, args["question"], k=args.get("k", 5))
    except RetrievalError as exc:  # a question it cannot search for: an error result the model can read
        raise ToolError(str(exc)) from None
    out = found.to_json()
    first = ctx.run.passages_given + 1
    out["passages"] = [{"n": n, **p} for n, p in enumerate(out["passages"], first)]
    ctx.run.passages_given += len(out["passages"])
    notes = [*found.notes, *(["This session has no documents to search."] if not found.documents else [])]
    if notes:
        out["note"] = " ".join(notes)
    return out


def retrieve_tools() -> list[ToolSpec]:
    return [S.make_tool(
        "retrieve_passages", title="Retrieve passages", handler=retrieve_passages,
        required=("session_id", "question"),
        properties={"session_id": S.SESSION_ID,
                    "question": {"type": "string", "minLength": 1, "maxLength": MAX_QUESTION_CHARS,
                                 "description": "The question, in any wording: passages are found by words, "
                                                "by meaning and through the objects the question names."},
                    "k": S.limit(5, 50, "passages")},
        description="Finds the passages of this session's documents that answer a question (exact document, "
                    "page and character span; text is the document's own), plus the objects and relations "
                    "the question leads to in the graph or names, and earlier messages of this chat that "
                    "match it. Returns {passages: [{n, document, document_id, page, start, end, text, score}], "
                    "objects: [{id, type, name}], relations: [{id, type, source, target}], messages: [{id, "
                    "seq, role, text, score}]}. Cite a passage you answer from right after the claim as "
                    "[n \"exact words\"]: its number n, and words copied character for character from its "
                    "text; every citation is checked.",
        scopes=S.READ, policy=Policy.AUTO, annotations=S.READ_ONLY)]


TOOLS = retrieve_tools  # found by ``builtin_specs`` (tools/builtin/__init__.py)
PLACE = 20
