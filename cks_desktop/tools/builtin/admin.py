"""Tools that manage the app rather than one graph: never offered to a model.

``llm_exposed=False``: only a person (GUI) or the CLI reaches them; a model
asking for one by any spelling hears "Unknown tool". The session tools take
the session to act on as an explicit argument (``pin_session=False``): pinning
would make ``delete_session`` delete the run's own session whatever was asked.
``import_graph`` writes into the run's session, so it keeps pinning. Their specs
give them no scope and no approval policy: the person who reaches
them is the one asking. ``import_graph`` is the exception: it writes the
graph and merges into existing objects, so it needs ``graph.mutate`` and asks like
the tools that do the same (``once``; a CLI caller answers with ``--yes``).
"""

from __future__ import annotations

from typing import Any

from cks_desktop.tools.builtin import schemas as S
from cks_desktop.tools.builtin.effects import import_effects
from cks_desktop.tools.builtin.refs import blocking, recorded, store_errors, write_result
from cks_desktop.tools.context import ToolContext
from cks_desktop.tools.types import Policy, ToolSpec

TITLE: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 300, "description": "The session title."}
EXPLICIT_SESSION: dict[str, Any] = {"type": "string", "minLength": 1, "description": "The session's id."}


def session_json(session: Any) -> dict[str, Any]:
    return {"id": session.id, "title": session.title, "created_at": session.created_at}


async def create_session(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    with store_errors():
        return {"session": session_json(ctx.store.create_session(args["title"].strip() or args["title"]))}


async def list_sessions(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    with store_errors():
        listed = []
        for session in ctx.store.list_sessions():
            counts = ctx.store.counts(session.id)
            listed.append({**session_json(session), "objects": counts.get("objects", 0),
                           "relations": counts.get("relations", 0)})
    return {"sessions": listed}


async def rename_session(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    with store_errors():
        return {"session": session_json(ctx.store.rename_session(args["session_id"], args["title"]))}


async def delete_session(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    with store_errors():
        session = ctx.store.get_session(args["session_id"])
        ctx.store.delete_session(session.id)
    return {"deleted": session_json(session)}


async def import_graph(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    result = recorded(ctx, await blocking(ctx.store.import_data, ctx.session_id, args["format"], args["data"],
                                          ctx.run.origin))
    return {"status": "imported", "counts": dict(result.counts), **write_result(result)}


async def preview_import(args: dict[str, Any], ctx: ToolContext) -> str:
    """No dry run exists for an import; say what it will do in words."""
    size = len(args.get("data") or "")
    return (f"Imports {size:,} characters of {args.get('format')} into this session as one change: new objects "
            "and relations are added, and objects with the same name get the imported properties merged in.")


def admin_tools() -> list[ToolSpec]:
    common: dict[str, Any] = {"scopes": S.NO_SCOPES, "policy": Policy.AUTO, "exposed": False}
    explicit = {**common, "pin_session": False}
    return [
        S.make_tool("create_session", title="Create session", handler=create_session,
                    summary_args=("title",),
                    properties={"title": TITLE}, required=("title",), annotations=S.ADDITIVE,
                    description="Creates a new, empty session and returns {session: {id, title, created_at}}.",
                    **explicit),
        S.make_tool("list_sessions", title="List sessions", handler=list_sessions, properties={},
                    annotations=S.READ_ONLY,
                    description="Every session with its id, title, creation time and object/relation counts.",
                    **explicit),
        S.make_tool("rename_session", title="Rename session", handler=rename_session,
                    summary_args=("title",),
                    properties={"session_id": EXPLICIT_SESSION, "title": TITLE},
                    required=("session_id", "title"), annotations=S.ADDITIVE,
                    description="Gives a session a new title; returns {session: {id, title, created_at}}.",
                    **explicit),
        S.make_tool("delete_session", title="Delete session", handler=delete_session,
                    properties={"session_id": EXPLICIT_SESSION}, required=("session_id",),
                    annotations=S.DESTRUCTIVE,
                    description="Deletes a session with its whole graph, history and chat. This cannot be "
                                "undone.", **explicit),
        S.make_tool("import_graph", title="Import graph", handler=import_graph,
                    summary_args=("format",),
                    properties={"session_id": S.SESSION_ID,
                                "format": {"type": "string", "enum": list(S.IMPORT_FORMATS),
                                           "description": "json (cks-graph), graphml or memory-jsonl."},
                                "data": {"type": "string", "description": "The file's text."}},
                    required=("session_id", "format", "data"), annotations=S.ADDITIVE,
                    description="Adds a graph from text in one change (revertable). Returns {status, counts, "
                                "change_id, summary}.",
                    scopes=S.MUTATE, policy=Policy.ONCE, exposed=False, effects=import_effects,
                    preview=preview_import),
    ]


TOOLS = admin_tools  # found by ``builtin_specs`` (tools/builtin/__init__.py)
PLACE = 60
