"""``merge_objects``: fold a duplicate into the object that stays, as one batch.

Rules (chosen so the merged graph says what both objects said, once):
- every relation of ``merge`` is re-pointed to ``keep`` (``update_relation``);
- a relation that would then duplicate one ``keep`` already has (same type,
  same direction, same other end) is removed instead, and so is a link between
  the two objects, which would become a meaningless self-link; a self-link of
  ``merge`` stays a self-link of ``keep``;
- properties ``keep`` lacks are copied; on a conflict ``keep`` wins and the
  result lists what was dropped;
- ``merge``'s name and aliases join ``keep``'s ``aliases`` list property;
- every source (evidence) of ``merge`` moves to ``keep`` (``move_evidence``), and the sources
  of a relation dropped as a duplicate move to the relation of ``keep`` it duplicated; a
  link between the two objects (dropped) takes its sources with it (the revert restores them);
- ``merge`` is removed last. One change, so one ``revert_change`` undoes it all.
"""

from __future__ import annotations

import asyncio

from typing import TYPE_CHECKING, Any

from cks_desktop.tools.builtin.refs import brief, full, resolve, store_errors, write_result
from cks_desktop.tools.context import ToolContext
from cks_desktop.tools.types import ToolError

if TYPE_CHECKING:
    from cks_desktop.graph.model import Object, Relation
    from cks_desktop.graph.store import ApplyResult

ALIASES = "aliases"


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def merged_aliases(keep: "Object", merge: "Object") -> list[Any] | None:
    """keep's aliases + merge's name and aliases, without repeats; None if unchanged."""
    current = _as_list(keep.properties.get(ALIASES))
    seen = {keep.name.casefold()} | {a.casefold() if isinstance(a, str) else repr(a) for a in current}
    result = list(current)
    for alias in [merge.name, *_as_list(merge.properties.get(ALIASES))]:
        key = alias.casefold() if isinstance(alias, str) else repr(alias)
        if key not in seen:
            seen.add(key)
            result.append(alias)
    return result if result != keep.properties.get(ALIASES) else None


def _relation_ops(keep: "Object", merge: "Object", keep_rels: list["Relation"],
                  merge_rels: list["Relation"],
                  sources: dict[str, list[str]] | None = None) -> tuple[list[dict[str, Any]], int, int]:
    """The relation ops of a merge; ``sources`` (relation id → its evidence ids) lets a
    dropped duplicate hand its sources to the relation it duplicates."""
    existing = {(r.type, r.source_id, r.target_id) for r in keep_rels}
    survivor = {(r.type, r.source_id, r.target_id): r.id for r in keep_rels}
    repoint: list[dict[str, Any]] = []
    drop: list[dict[str, Any]] = []
    for rel in merge_rels:
        self_link = rel.source_id == rel.target_id == merge.id
        between = {rel.source_id, rel.target_id} == {keep.id, merge.id}
        source = keep.id if rel.source_id == merge.id else rel.source_id
        target = keep.id if rel.target_id == merge.id else rel.target_id
        key = (rel.type, source, target)
        if (between and not self_link) or key in existing:
            into = survivor.get(key) if not (between and not self_link) else None
            if into is not None:
                drop.extend({"op": "move_evidence", "evidence_id": e, "relation": into}
                            for e in (sources or {}).get(rel.id, ()))
            drop.append({"op": "remove_relation", "relation_id": rel.id})
            continue
        existing.add(key)
        survivor[key] = rel.id
        op: dict[str, Any] = {"op": "update_relation", "relation_id": rel.id}
        if source != rel.source_id:
            op["source"] = source
        if target != rel.target_id:
            op["target"] = target
        repoint.append(op)
    return drop + repoint, len(repoint), sum(op["op"] == "remove_relation" for op in drop)


def _unique(*groups: list["Relation"]) -> list["Relation"]:
    seen: dict[str, "Relation"] = {}
    for group in groups:
        for rel in group:
            seen.setdefault(rel.id, rel)
    return list(seen.values())


async def build_merge(args: dict[str, Any], ctx: ToolContext) -> tuple[list[dict[str, Any]], Any]:
    keep = resolve(ctx, args["keep"])
    merge = resolve(ctx, args["merge"])
    if keep.id == merge.id:
        raise ToolError(f"keep and merge are the same object ({keep.id}, {keep.name!r}); nothing to merge.")

    def relation_ops() -> tuple[list[dict[str, Any]], Any, Any, list[str]]:
        from cks_desktop.provenance.queries import evidence_of

        keep_rels = _unique(*ctx.store.relations_of(ctx.session_id, keep.id))
        merge_rels = _unique(*ctx.store.relations_of(ctx.session_id, merge.id))
        sources = {r.id: [e.id for e in evidence_of(ctx.store, ctx.session_id, "relation", r.id)]
                   for r in merge_rels}
        own = [e.id for e in evidence_of(ctx.store, ctx.session_id, "object", merge.id)]
        return (*_relation_ops(keep, merge, keep_rels, merge_rels, sources), own)

    with store_errors():  # on a worker thread: an object may have thousands of relations
        rel_ops, repointed, dropped, own_sources = await asyncio.to_thread(relation_ops)

    to_set: dict[str, Any] = {}
    conflicts: list[dict[str, Any]] = []
    for key, value in merge.properties.items():
        if key == ALIASES:
            continue
        if key not in keep.properties:
            to_set[key] = value
        elif keep.properties[key] != value:
            conflicts.append({"property": key, "kept": keep.properties[key], "dropped": value})
    aliases = merged_aliases(keep, merge)
    if aliases is not None:
        to_set[ALIASES] = aliases

    ops = list(rel_ops)
    ops.extend({"op": "move_evidence", "evidence_id": e, "object": keep.id} for e in own_sources)
    if to_set:
        ops.append({"op": "update_object", "ref": keep.id, "set_properties": to_set})
    ops.append({"op": "remove_object", "ref": merge.id})
    return ops, (keep, merge, repointed, dropped, conflicts)


def finish_merge(args: dict[str, Any], ctx: ToolContext, result: "ApplyResult", state: Any) -> dict[str, Any]:
    keep, merge, repointed, dropped, conflicts = state
    return {
        "kept": full(ctx.store.get_object(ctx.session_id, keep.id)),
        "removed": brief(merge),
        "relations_repointed": repointed,
        "relations_dropped": dropped,
        "conflicts": conflicts,
        **write_result(result),
    }
