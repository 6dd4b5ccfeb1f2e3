"""What an import does with objects that are already there: skip, merge, rename or refuse.

One place (Qt-free) decides, for the CLI's ``--on-conflict`` and the window's
import dialog alike. A *conflict* is an imported object whose type and name
(case-insensitive, trimmed — the store's own rule) equal those of an object
already in the session, or of an earlier object of the same file.

- ``error``  — nothing is imported; the refusal names every conflict.
- ``skip``   — the existing object is left as it is; the imported one is not
  added, and the file's relations that touch it are re-pointed at the existing one.
- ``merge``  — the imported properties go into the existing object: keys it
  lacks are added, lists are joined (existing items first, no repeats), other
  differing values take the imported value; relations are re-pointed.
- ``rename`` — both are kept: the imported object gets the first free name
  "Name (2)", "Name (3)", … of its type; relations point at the new object.

With ``skip`` and ``merge`` a re-pointed relation that would repeat one that is
already there (same type, same ends) is not added twice.

``preview`` says what an import would add before anything is written: counts,
types, a sample and the conflicts (with the properties a merge would change).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cks_desktop.graph.formats.common import ImportRefused, ParsedGraph, ParsedObject
from cks_desktop.graph.sqlite_util import json_list

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore

ON_CONFLICT = ("skip", "merge", "rename", "error")
SAMPLE = 12  # objects listed in a preview


@dataclass(frozen=True)
class Existing:
    id: str
    type: str
    name: str
    properties: dict[str, Any]


@dataclass(frozen=True)
class Conflict:
    """One imported object that matches an object already there (or an earlier one of the file)."""

    index: int  # the imported object's position in the file's objects
    where: str  # "object 3 (o_…)", "line 4", "node 'n0'"
    type: str
    name: str
    existing_id: str | None  # None: it repeats an earlier object of the same file
    earlier_where: str | None  # that earlier object, when existing_id is None
    changes: tuple[str, ...] = ()  # property names a merge would add or change

    def sentence(self) -> str:
        """One problem sentence, as a refused import names it."""
        if self.existing_id is not None:
            return (f"{self.where}: {self.type} {self.name!r} is already in the session ({self.existing_id})")
        return f"{self.where}: {self.type} {self.name!r} repeats {self.earlier_where}"


@dataclass
class ImportPreview:
    """What an import would add; nothing is written to make it."""

    objects: int
    relations: int
    object_types: dict[str, int]
    relation_types: dict[str, int]
    new_types: list[str]  # object types the session has no object of yet
    sample: list[tuple[str, str]]  # (type, name) of the first objects
    conflicts: list[Conflict] = field(default_factory=list)

    def summary(self) -> str:
        from cks_desktop.plural import counted

        return (f"{counted(self.objects, 'object')}, {counted(self.relations, 'relation')}, "
                f"{counted(len(self.object_types), 'object type')}; "
                f"{counted(len(self.conflicts), 'conflict')}")


def where_of(graph: ParsedGraph, i: int) -> str:
    o = graph.objects[i]
    return o.where if o.where is not None else f"object {i} ({o.key})"


def _type_key(type_: str) -> str:
    return type_.strip().casefold()


def _key(o: ParsedObject) -> tuple[str, str]:
    return (_type_key(o.type), o.name.strip().casefold())


def existing_objects(store: "GraphStore", session_id: str, graph: ParsedGraph) -> dict[tuple[str, str], Existing]:
    """The session's objects whose (type, name) an imported object has: ONE query by name key."""
    if not graph.objects:
        return {}
    found: dict[tuple[str, str], Existing] = {}
    with store.connection_lock() as conn:
        for ident, type_, name, props in conn.execute(
                "SELECT id, type, name, properties FROM objects WHERE session_id = ? "
                "AND name_key IN (SELECT value FROM json_each(?))",
                (session_id, json_list(sorted({o.name.strip().casefold() for o in graph.objects})))):
            found.setdefault((_type_key(type_), name.strip().casefold()),
                             Existing(ident, type_, name, json.loads(props)))
    return found


def merged_properties(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` merged into ``old``: keys kept, lists joined without repeats, else the new value."""
    out = dict(old)
    for k, v in new.items():
        if k in out and isinstance(out[k], list) and isinstance(v, list):
            joined = list(out[k])
            joined += [x for x in v if x not in joined]
            out[k] = joined
        else:
            out[k] = v
    return out


def _changed(old: dict[str, Any], new: dict[str, Any]) -> tuple[str, ...]:
    merged = merged_properties(old, new)
    return tuple(sorted(k for k in merged if k not in old or old[k] != merged[k]))


def find_conflicts(graph: ParsedGraph, existing: dict[tuple[str, str], Existing]) -> list[Conflict]:
    """Every conflict of the file, in file order (ALL of them, never the first few)."""
    out: list[Conflict] = []
    first: dict[tuple[str, str], int] = {}
    for i, o in enumerate(graph.objects):
        key = _key(o)
        there = existing.get(key)
        if there is not None:
            out.append(Conflict(i, where_of(graph, i), o.type, o.name, there.id, None,
                                _changed(there.properties, o.properties)))
        elif key in first:
            j = first[key]
            out.append(Conflict(i, where_of(graph, i), o.type, o.name, None, where_of(graph, j),
                                _changed(graph.objects[j].properties, o.properties)))
        else:
            first[key] = i
    return out


def preview(graph: ParsedGraph, existing: dict[tuple[str, str], Existing], session_types: set[str]) -> ImportPreview:
    object_types = Counter(o.type for o in graph.objects)
    relation_types = Counter(r.type for r in graph.relations)
    known = {_type_key(t) for t in session_types}
    new_types = sorted({t for t in object_types if _type_key(t) not in known}, key=str.casefold)
    return ImportPreview(len(graph.objects), len(graph.relations), dict(object_types.most_common()),
                         dict(relation_types.most_common()), new_types,
                         [(o.type, o.name) for o in graph.objects[:SAMPLE]], find_conflicts(graph, existing))


@dataclass
class Resolution:
    """How each imported object is written, decided before any op is made.

    ``ops[i]`` is the object's op (None: it is not added: skipped, or merged into an
    earlier object of the file); ``ref[i]`` is what the file's relations use for it:
    the label of an op of this import, or the id of an existing object."""

    ops: list[dict[str, Any] | None]
    ref: list[str]
    counts: dict[str, int]
    dedupe_relations: bool  # skip/merge: a relation repeating one already there is not added


def resolve(graph: ParsedGraph, existing: dict[tuple[str, str], Existing], mode: str,
            keep_ids: bool, name_taken: Callable[[str, str], bool] = lambda _t, _n: False) -> Resolution:
    """The per-object plan for ``mode``; ``error`` with conflicts raises ``ImportRefused``
    naming every one. ``name_taken(type, name)`` says whether the session has such an object
    (asked only for the suffixed names ``rename`` tries)."""
    if mode not in ON_CONFLICT:
        raise ImportRefused([f"unknown conflict choice {mode!r}; use one of: {', '.join(ON_CONFLICT)}"])
    conflicts = find_conflicts(graph, existing)
    if mode == "error" and conflicts:
        hint = "choose what to do with them: skip, merge or rename (--on-conflict)"
        raise ImportRefused([c.sentence() for c in conflicts], hint=hint)
    n = len(graph.objects)
    ops: list[dict[str, Any] | None] = [None] * n
    ref = [f"$import{i}" for i in range(n)]
    counts = {"duplicates_skipped": 0, "objects_merged": 0, "objects_suffixed": 0}
    first: dict[tuple[str, str], int] = {}
    used_names: dict[str, set[str]] = {}  # type key -> name keys taken (session and file)
    for (tkey, nkey) in existing:
        used_names.setdefault(tkey, set()).add(nkey)
    for o in graph.objects:
        used_names.setdefault(_type_key(o.type), set()).add(o.name.strip().casefold())
    for i, o in enumerate(graph.objects):
        key = _key(o)
        there = existing.get(key)
        earlier = first.get(key)
        base: dict[str, Any] = {"op": "add_object", "type": o.type, "name": o.name, "properties": o.properties,
                                "label": ref[i]}
        if there is None and earlier is None:
            first[key] = i
            if keep_ids:
                base["id"] = o.key
            ops[i] = base
            continue
        if mode == "skip":
            ref[i] = there.id if there is not None else ref[earlier]  # type: ignore[index]
            counts["duplicates_skipped"] += 1
        elif mode == "merge":
            counts["objects_merged"] += 1
            if there is not None and earlier is None:
                first[key] = i
                base["on_conflict"] = "update"
                base["properties"] = merged_properties(there.properties, o.properties)
                ops[i] = base
                ref[i] = there.id  # relations name it by id, so repeats of its relations are seen
            else:  # into the file's earlier object (which may itself merge into an existing one)
                j = earlier if earlier is not None else first[key]
                target = ops[j]
                if target is not None:
                    target["properties"] = merged_properties(target["properties"], o.properties)
                ref[i] = ref[j]
        else:  # rename
            taken = used_names[_type_key(o.type)]
            stem = o.name.strip()
            k = 2
            while f"{stem} ({k})".casefold() in taken or name_taken(o.type, f"{stem} ({k})"):
                k += 1
            new_name = f"{stem} ({k})"
            taken.add(new_name.casefold())
            base["name"] = new_name
            first[(key[0], new_name.casefold())] = i
            ops[i] = base
            counts["objects_suffixed"] += 1
    return Resolution(ops, ref, counts, dedupe_relations=mode in ("skip", "merge"))


def outcome_words(counts: dict[str, int]) -> str:
    """"skips 2 duplicates, merges 1 object" — appended to the import's summary."""
    from cks_desktop.plural import counted

    parts = []
    if counts.get("duplicates_skipped"):
        parts.append(f"skips {counted(counts['duplicates_skipped'], 'duplicate')}")
    if counts.get("objects_merged"):
        parts.append(f"merges {counted(counts['objects_merged'], 'object')}")
    if counts.get("objects_suffixed"):
        parts.append(f"keeps {counted(counts['objects_suffixed'], 'object')} under a suffixed name")
    if counts.get("relations_skipped"):
        parts.append(f"leaves out {counted(counts['relations_skipped'], 'repeated relation')}")
    if counts.get("sources_skipped"):  # cks-graph v2 evidence whose document or relation is not there
        parts.append(f"leaves out {counted(counts['sources_skipped'], 'source')} whose document is not in the session")
    return ", ".join(parts)


def name_taken_in(store: "GraphStore", session_id: str) -> Callable[[str, str], bool]:
    """``name_taken`` for ``resolve``: one indexed lookup by name key per name tried."""

    def taken(type_: str, name: str) -> bool:
        with store.connection_lock() as conn:
            rows = conn.execute("SELECT type FROM objects WHERE session_id = ? AND name_key = ?",
                                (session_id, name.strip().casefold())).fetchall()
        return any(_type_key(t) == _type_key(type_) for (t,) in rows)

    return taken
