"""The read-only graph tools (scope graph.read, policy auto, offered to models).

Quick lookups run on the event loop (a thread hop would cost more than they
do); traversals, exports and anything that looks up one object per relation
(``get_object`` on a hub, ``list_relations``) run on a worker thread, because
their cost grows with the graph and the GUI shares the loop.
"""

from __future__ import annotations

from typing import Any

from cks_desktop.tools.builtin import schemas as S
from cks_desktop.tools.builtin.refs import Ends, blocking, brief, change_json, edge, full, resolve, store_errors
from cks_desktop.tools.context import ToolContext
from cks_desktop.tools.types import Policy, ToolOutput, ToolSpec

LATEST_CHANGES = 10


async def graph_summary(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    store, sid = ctx.store, ctx.session_id
    with store_errors():
        session = store.get_session(sid)
        counts = store.counts(sid)
        stats = store.type_stats(sid)
        changes = store.list_changes(sid, limit=LATEST_CHANGES, with_ops=False)
    return {
        "session": {"id": session.id, "title": session.title},
        "objects": counts.get("objects", 0),
        "relations": counts.get("relations", 0),
        "object_types": [{"name": t["name"], "count": t.get("count", 0)} for t in stats.get("object_types", [])],
        "relation_types": [{"name": t["name"], "count": t.get("count", 0)}
                           for t in stats.get("relation_types", [])],
        "latest_changes": [change_json(c) for c in changes],
    }


async def list_objects(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    with store_errors():
        objects, cursor = ctx.store.list_objects(ctx.session_id, type=args.get("type"),
                                                 limit=args.get("limit", 50), cursor=args.get("cursor"))
    return {"objects": [full(o) for o in objects], "next_cursor": cursor}


async def get_object(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    obj = resolve(ctx, args["ref"])

    def collect() -> dict[str, Any]:  # one lookup per relation end: a hub object may have thousands
        incoming, outgoing = ctx.store.relations_of(ctx.session_id, obj.id)
        ends = Ends(ctx.store, ctx.session_id)
        ends.remember(obj)
        out = [{"id": r.id, "type": r.type, "target": ends(r.target_id), **_props(r.properties)} for r in outgoing]
        inc = [{"id": r.id, "type": r.type, "source": ends(r.source_id), **_props(r.properties)} for r in incoming]
        shown = {**full(obj, times=True), "version": ctx.store.object_version(ctx.session_id, obj.id)}
        return {"object": shown, "outgoing": out, "incoming": inc}

    return await blocking(collect)


def _props(properties: dict[str, Any]) -> dict[str, Any]:
    return {"properties": properties} if properties else {}


async def search_objects(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    with store_errors():
        hits = ctx.store.search_objects(ctx.session_id, args["query"], type=args.get("type"),
                                        limit=args.get("limit", 20))
    return {"results": [{**full(o), "score": float(f"{score:.4g}") + 0.0} for o, score in hits], "count": len(hits)}


async def list_relations(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    def collect() -> dict[str, Any]:  # up to two object lookups per relation: off the loop
        relations, cursor = ctx.store.list_relations(
            ctx.session_id, ref=args.get("ref"), type=args.get("type"),
            direction=args.get("direction", "both"), limit=args.get("limit", 50), cursor=args.get("cursor"))
        ends = Ends(ctx.store, ctx.session_id)
        return {"relations": [ends.relation(r) for r in relations], "next_cursor": cursor}

    return await blocking(collect)


async def neighbors(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    center = resolve(ctx, args["ref"])
    limit = args.get("limit", 200)
    objects, relations = await blocking(ctx.store.neighbors, ctx.session_id, center.id,
                                        depth=args.get("depth", 1), limit=limit)
    others = [brief(o) for o in objects if o.id != center.id]
    return {
        "center": brief(center),
        "objects": others,
        "relations": [edge(r) for r in relations],
        "truncated": len(others) >= limit,
    }


async def find_path(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    source = resolve(ctx, args["source"])
    target = resolve(ctx, args["target"])
    max_depth = args.get("max_depth", 6)
    path = await blocking(ctx.store.find_path, ctx.session_id, source.id, target.id, max_depth=max_depth)
    if path is None:
        return {"found": False, "source": brief(source), "target": brief(target),
                "message": f"No path between {source.name!r} and {target.name!r} within {max_depth} hops "
                           "(relations are followed in both directions)."}
    objects, relations = path
    return {"found": True, "hops": len(relations), "objects": [brief(o) for o in objects],
            "relations": [edge(r) for r in relations]}


async def list_types(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    with store_errors():
        return dict(ctx.store.type_stats(ctx.session_id))


async def list_changes(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    with store_errors():
        changes = ctx.store.list_changes(ctx.session_id, limit=args.get("limit", 20), with_ops=False)
    return {"changes": [change_json(c) for c in changes]}


async def export_graph(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    fmt = args["format"]
    text = await blocking(ctx.store.export, ctx.session_id, fmt)
    return ToolOutput(content=text, structured={"format": fmt, "characters": len(text)})


async def get_sources(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Where an object or relation came from: each quote with its document, page and span,
    and the changes that wrote it (who: person, chat, another app) — so an answer can cite."""
    from cks_desktop.provenance.queries import authorship, sources_of

    ref = args["ref"]

    def collect() -> dict[str, Any]:
        from cks_desktop.graph.sqlite_util import is_id

        if isinstance(ref, str) and is_id(ref.strip(), "r_"):
            rel = ctx.store.get_relation(ctx.session_id, ref.strip())
            ends = Ends(ctx.store, ctx.session_id)
            target: dict[str, Any] = {"relation": ends.relation(rel)}
            sources = sources_of(ctx.store, ctx.session_id, "relation", rel.id)
            written = authorship(ctx.store, ctx.session_id, rel.source_id)
            written = [w for w in written if w.change_id in {c.id for c in ctx.store.changes_touching(
                ctx.session_id, rel.target_id)}] or written
        else:
            obj = resolve(ctx, ref)
            target = {"object": brief(obj)}
            sources = sources_of(ctx.store, ctx.session_id, "object", obj.id)
            written = authorship(ctx.store, ctx.session_id, obj.id)
        return {**target, "count": len(sources), "sources": [s.to_json() for s in sources],
                "written_by": [w.to_json() for w in written]}

    with store_errors():
        return await blocking(collect)


def read_tools() -> list[ToolSpec]:
    sid = {"session_id": S.SESSION_ID}
    req = ("session_id",)
    common: dict[str, Any] = {"scopes": S.READ, "policy": Policy.AUTO, "annotations": S.READ_ONLY}
    return [
        S.make_tool(
            "graph_summary", title="Graph summary", handler=graph_summary, properties=sid, required=req,
            result_keys=("session", "objects", "relations", "object_types", "relation_types", "latest_changes"),
            description="Overview of this session's knowledge graph: the session title, how many objects and "
                        "relations it holds, counts per object type and per relation type, and the "
                        f"{LATEST_CHANGES} latest changes (id, time, author, summary). Call it first to see "
                        "what is already there before adding anything.",
            **common),
        S.make_tool(
            "list_objects", title="List objects", handler=list_objects, required=req,
            result_keys=("objects", "next_cursor"), summary_args=("type",),
            properties={**sid, "type": {**S.TYPE_NAME, "description": "Only objects of this type (optional)."},
                        "limit": S.limit(50, 200, "objects"), "cursor": S.CURSOR},
            description="Lists objects (id, type, name, properties) in creation order, optionally of one "
                        "type. Returns {objects, next_cursor}; when next_cursor is not null, pass it as "
                        "cursor to get the next page. To find objects by words, use search_objects instead.",
            **common),
        S.make_tool(
            "get_object", title="Get object", handler=get_object, required=(*req, "ref"),
            result_keys=("object", "outgoing", "incoming"), summary_args=("ref",),
            properties={**sid, "ref": S.REF},
            description="Reads one object: its id, type, name, all properties, timestamps, and every relation "
                        "touching it — outgoing (with the target's id, name, type) and incoming (with the "
                        "source's), and its version (for update_object's if_unchanged_since). The ref is an "
                        "id or an exact name.",
            **common),
        S.make_tool(
            "search_objects", title="Search objects", handler=search_objects, required=(*req, "query"),
            result_keys=("count", "results"), summary_args=("query", "type"),
            properties={**sid,
                        "query": {"type": "string", "minLength": 1, "maxLength": 1000,
                                  "description": "Words to look for in object names and property text. "
                                                 "Matches whole words and word prefixes; best matches first."},
                        "type": {**S.TYPE_NAME, "description": "Only objects of this type (optional)."},
                        "limit": S.limit(20, 100, "results")},
            description="Full-text search over object names and property values, ranked by relevance. Returns "
                        "{results: [{id, type, name, properties, score}], count} (lower score = better "
                        "match). Use it to check whether something already exists before adding it.",
            **common),
        S.make_tool(
            "list_relations", title="List relations", handler=list_relations, required=req,
            result_keys=("relations", "next_cursor"), summary_args=("ref", "type", "direction"),
            properties={**sid,
                        "ref": {**S.REF, "description": "Only relations touching this object (id or exact "
                                                        "name; optional)."},
                        "type": {**S.TYPE_NAME, "description": "Only relations of this type (optional)."},
                        "direction": {"type": "string", "enum": ["both", "outgoing", "incoming"],
                                      "default": "both",
                                      "description": "With ref: which relations of that object (default "
                                                     "both)."},
                        "limit": S.limit(50, 200, "relations"), "cursor": S.CURSOR},
            description="Lists relations with both ends named: {relations: [{id, type, source: {id, name, "
                        "type}, target: {...}, properties}], next_cursor}. Filter by an object (ref + "
                        "direction) and/or a relation type; page with cursor.",
            **common),
        S.make_tool(
            "neighbors", title="Neighbors", handler=neighbors, required=(*req, "ref"),
            result_keys=("center", "objects", "relations", "truncated"), summary_args=("ref", "depth"),
            properties={**sid, "ref": S.REF,
                        "depth": {"type": "integer", "minimum": 1, "maximum": 3, "default": 1,
                                  "description": "How many hops to follow, in either direction (1–3, "
                                                 "default 1)."},
                        "limit": S.limit(200, 1000, "objects")},
            description="The neighbourhood of one object: every object within depth hops (relations followed "
                        "both ways) and the relations between them. Returns {center, objects: [{id, type, "
                        "name}], relations: [{id, type, source_id, target_id}], truncated}.",
            **common),
        S.make_tool(
            "find_path", title="Find path", handler=find_path, required=(*req, "source", "target"),
            result_keys=("found", "hops", "objects", "relations"), summary_args=("source", "target"),
            properties={**sid,
                        "source": {**S.REF, "description": "Where the path starts (id or exact name)."},
                        "target": {**S.REF, "description": "Where the path ends (id or exact name)."},
                        "max_depth": {"type": "integer", "minimum": 1, "maximum": 10, "default": 6,
                                      "description": "The longest path to look for, in hops (1–10, "
                                                     "default 6)."}},
            description="Finds a shortest chain of relations linking two objects, following relations in "
                        "either direction. Returns {found: true, hops, objects (in path order), relations} or "
                        "{found: false, message} when none exists within max_depth.",
            **common),
        S.make_tool(
            "list_types", title="List types", handler=list_types, properties=sid, required=req,
            result_keys=("object_types", "relation_types"),
            description="Every object type and relation type used or defined in this session, with counts, "
                        "descriptions and property schemas (if defined with define_type). Reuse these type "
                        "names instead of inventing near-duplicates.",
            **common),
        S.make_tool(
            "list_changes", title="List changes", handler=list_changes, required=req,
            result_keys=("changes",), summary_args=("limit",),
            properties={**sid, "limit": S.limit(20, 200, "changes")},
            description="The change history, newest first: {changes: [{id, at, origin, summary, reverts}]}. "
                        "A change id can be passed to revert_change.",
            **common),
        S.make_tool(
            "get_sources", title="Get sources", handler=get_sources, required=(*req, "ref"),
            result_keys=("object", "relation", "count", "sources", "written_by"), summary_args=("ref",),
            properties={**sid, "ref": {**S.REF, "description": "The object (id or exact name) or a relation "
                                                               "id (r_…) whose sources to read."}},
            description="Where an object or relation came from, so you can cite it: {sources: [{quote, "
                        "document, document_id, page, start, end, alignment, review, origin}], count, "
                        "written_by: [{change_id, at, author (person, chat, another app), summary}]}. Quote "
                        "the passage and name the document and page when you state a fact from the graph.",
            **common),
        S.make_tool(
            "export_graph", title="Export graph", handler=export_graph, required=(*req, "format"),
            result_keys=("format", "characters"), summary_args=("format",),
            properties={**sid,
                        "format": {"type": "string", "enum": list(S.EXPORT_FORMATS),
                                   "description": "json (the app's interchange format), graphml, markdown "
                                                  "(readable outline), mermaid (a flowchart), memory-jsonl "
                                                  "(the MCP memory server's file format)."}},
            description="The whole graph of this session as text in the chosen format. Large graphs are "
                        "truncated in the result; prefer graph_summary, search_objects and neighbors for "
                        "questions about the graph.",
            **common),
    ]


TOOLS = read_tools  # found by ``builtin_specs`` (tools/builtin/__init__.py)
PLACE = 10
