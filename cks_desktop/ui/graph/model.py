"""The graph the view draws: nodes, edges and positions, kept Qt-free.

Why flat arrays instead of one object per node: the issue caps the view at
1 KB per node and asks for 20k-node graphs, and a Python object per node
(plus per edge) would spend most of that budget on headers. Nodes and edges
live in slots (``array``/``bytearray`` columns indexed by an int); a removed
node's slot is marked dead, so the indices other structures hold (render
buffers, the spatial grid) stay valid until ``compact`` renumbers them.

The store's change events are applied with ``apply_event``, which returns a
``Delta`` saying exactly which slots changed, so the widget can update its
buffers incrementally instead of rebuilding 20k nodes for one new object.
View state that must survive renumbering (selection, highlights, focus) is
kept by object id in ``viewstate.py``, not here.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from cks_desktop.graph.events import GraphChanged
from cks_desktop.graph.model import Object, Relation
from cks_desktop.ui.graph.adjacency import Adjacency

Position = tuple[float, float, bool]  # x, y, pinned


@dataclass
class Delta:
    """What one store event changed, in slot indices of the model *after* it."""

    added_nodes: list[int] = field(default_factory=list)
    updated_nodes: list[int] = field(default_factory=list)  # name or type changed
    removed_nodes: list[int] = field(default_factory=list)
    added_edges: list[int] = field(default_factory=list)
    updated_edges: list[int] = field(default_factory=list)
    removed_edges: list[int] = field(default_factory=list)
    retyped: bool = False  # a node changed type: per-type buffers need a rebuild
    rewired: bool = False  # an edge changed its ends: the edge path needs a rebuild
    touched_ids: list[str] = field(default_factory=list)  # objects to flash (added/updated/edge ends)
    removed_positions: dict[str, tuple[float, float, bool]] = field(default_factory=dict)  # id -> x, y, pinned

    @property
    def empty(self) -> bool:
        return not (self.added_nodes or self.updated_nodes or self.removed_nodes or self.added_edges
                    or self.updated_edges or self.removed_edges)

    @property
    def structural(self) -> bool:
        return bool(self.added_nodes or self.removed_nodes or self.added_edges or self.removed_edges
                    or self.rewired or self.retyped)


class GraphModel(Adjacency):
    """Nodes and edges of one session, with positions in world units."""

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.reset(None)

    # -- building ---------------------------------------------------------
    def reset(self, session_id: str | None) -> None:
        self.session_id = session_id
        self.ids: list[str | None] = []  # None: a removed object's slot
        self.names: list[str] = []
        self.ntype = array("H")
        self.xs = array("d")
        self.ys = array("d")
        self.alive = bytearray()
        self.placed = bytearray()  # 1 once the node has a position
        self.pinned: set[int] = set()
        self.index: dict[str, int] = {}
        self.type_names: list[str] = []
        self._type_index: dict[str, int] = {}
        self.type_counts: list[int] = []
        self.rel_ids: list[str | None] = []
        self.src = array("i")
        self.dst = array("i")
        self.etype = array("H")
        self.ealive = bytearray()
        self.rel_index: dict[str, int] = {}
        self.rel_type_names: list[str] = []
        self._rel_type_index: dict[str, int] = {}
        self._live_nodes = 0
        self._live_edges = 0
        self.structure_version = 0  # bumped on any change to which slots exist or their types
        self.position_version = 0  # bumped whenever any position moves
        self._adj_start: array | None = None
        self._adj_edges = array("i")
        self._adj_extra: dict[int, list[int]] = {}
        self._adj_extra_count = 0

    def load(self, session_id: str, objects: Iterable[Object], relations: Iterable[Relation],
             positions: Mapping[str, Position] | None = None) -> None:
        """Replace everything with a session's graph (and its saved positions, if any)."""
        self.reset(session_id)
        positions = positions or {}
        for obj in objects:
            i = self._new_node(obj.id, obj.name, obj.type)
            saved = positions.get(obj.id)
            if saved is not None:
                self.xs[i], self.ys[i] = saved[0], saved[1]
                self.placed[i] = 1
                if saved[2]:
                    self.pinned.add(i)
        for rel in relations:
            self._new_edge(rel.id, rel.type, rel.source_id, rel.target_id)
        self._touch_structure()
        self.position_version += 1

    def load_heads(self, session_id: str, objects: Sequence[tuple[str, str, str]],
                   relations: Sequence[tuple[str, str, str, str]],
                   positions: Mapping[str, Position] | None = None) -> None:
        """``load`` from bare rows (``store.object_heads``/``relation_heads``), in bulk.

        The same result as ``load``, built with comprehensions and ``zip``
        instead of one method call per row: opening 20k objects is dominated
        by this, and it runs while the person waits for the picture.
        """
        self.reset(session_id)
        n = len(objects)
        self.ids = [o[0] for o in objects]
        self.names = [o[2] for o in objects]
        types = [o[1] for o in objects]
        slot_of = {t: self._type_slot(t) for t in dict.fromkeys(types)}
        self.ntype = array("H", [slot_of[t] for t in types])
        for t in types:
            self.type_counts[slot_of[t]] += 1
        self.index = {oid: i for i, oid in enumerate(self.ids) if oid is not None}
        self.alive = bytearray(b"\x01") * n
        self.placed = bytearray(n)
        self.xs = array("d", bytes(8 * n))
        self.ys = array("d", bytes(8 * n))
        self._live_nodes = n
        index, xs, ys, placed = self.index, self.xs, self.ys, self.placed
        for oid, (x, y, pinned) in (positions or {}).items():
            i = index.get(oid)
            if i is not None:
                xs[i], ys[i], placed[i] = x, y, 1
                if pinned:
                    self.pinned.add(i)
        rels = [r for r in relations if r[2] in index and r[3] in index]
        rslot = {t: self._rel_type_slot(t) for t in dict.fromkeys(r[1] for r in rels)}
        self.rel_ids = [r[0] for r in rels]
        self.etype = array("H", [rslot[r[1]] for r in rels])
        self.src = array("i", [index[r[2]] for r in rels])
        self.dst = array("i", [index[r[3]] for r in rels])
        self.ealive = bytearray(b"\x01") * len(rels)
        self.rel_index = {rid: j for j, rid in enumerate(self.rel_ids) if rid is not None}
        self._live_edges = len(rels)
        self._touch_structure()
        self.position_version += 1

    def adopt(self, other: "GraphModel") -> None:
        """Become ``other`` (built in a worker thread) while keeping this object's identity,
        which the canvas, renderer and overlay hold on to."""
        struct, pos = self.structure_version, self.position_version
        self.__dict__.update(other.__dict__)
        self.structure_version = max(struct, other.structure_version) + 1
        self.position_version = max(pos, other.position_version) + 1

    def _type_slot(self, name: str) -> int:
        slot = self._type_index.get(name)
        if slot is None:
            slot = len(self.type_names)
            self.type_names.append(name)
            self.type_counts.append(0)
            self._type_index[name] = slot
        return slot

    def _rel_type_slot(self, name: str) -> int:
        slot = self._rel_type_index.get(name)
        if slot is None:
            slot = len(self.rel_type_names)
            self.rel_type_names.append(name)
            self._rel_type_index[name] = slot
        return slot

    def _new_node(self, obj_id: str, name: str, type_name: str) -> int:
        i = len(self.ids)
        t = self._type_slot(type_name)
        self.ids.append(obj_id)
        self.names.append(name)
        self.ntype.append(t)
        self.xs.append(0.0)
        self.ys.append(0.0)
        self.alive.append(1)
        self.placed.append(0)
        self.index[obj_id] = i
        self.type_counts[t] += 1
        self._live_nodes += 1
        return i

    def _new_edge(self, rel_id: str, type_name: str, source_id: str, target_id: str) -> int | None:
        a = self.index.get(source_id)
        b = self.index.get(target_id)
        if a is None or b is None:
            return None  # an edge to an object we do not have (should not happen; never crash on it)
        j = len(self.rel_ids)
        self.rel_ids.append(rel_id)
        self.src.append(a)
        self.dst.append(b)
        self.etype.append(self._rel_type_slot(type_name))
        self.ealive.append(1)
        self.rel_index[rel_id] = j
        self._live_edges += 1
        if self._adj_start is not None:
            self._adj_extra.setdefault(a, []).append(j)
            if b != a:
                self._adj_extra.setdefault(b, []).append(j)
            self._adj_extra_count += 1
        return j

    def _kill_edge(self, j: int) -> None:
        if not self.ealive[j]:
            return
        self.ealive[j] = 0
        rid = self.rel_ids[j]
        if rid is not None:
            self.rel_index.pop(rid, None)
        self.rel_ids[j] = None
        self._live_edges -= 1

    def _kill_node(self, i: int) -> list[int]:
        """Mark node ``i`` dead; returns the edges that died with it."""
        if not self.alive[i]:
            return []
        dead_edges = self.incident_edges(i)
        for j in dead_edges:
            self._kill_edge(j)
        self.alive[i] = 0
        oid = self.ids[i]
        if oid is not None:
            self.index.pop(oid, None)
        self.ids[i] = None
        self.names[i] = ""
        self.type_counts[self.ntype[i]] -= 1
        self.pinned.discard(i)
        self._live_nodes -= 1
        return dead_edges

    def _touch_structure(self) -> None:
        self.structure_version += 1

    # -- store events -----------------------------------------------------
    def apply_event(self, ev: GraphChanged) -> Delta:
        """Apply one committed batch; return what changed (indices after the change)."""
        delta = Delta()
        if ev.session_id != self.session_id:
            return delta
        touched: dict[str, None] = {}
        for rid in ev.removed_relations:
            j = self.rel_index.get(rid)
            if j is not None:
                self._kill_edge(j)
                delta.removed_edges.append(j)
        for oid in ev.removed_objects:
            i = self.index.get(oid)
            if i is not None:
                if self.placed[i]:
                    delta.removed_positions[oid] = (self.xs[i], self.ys[i], i in self.pinned)
                delta.removed_edges.extend(self._kill_node(i))
                delta.removed_nodes.append(i)
        for obj in ev.added_objects:
            if obj.id in self.index:  # already known (a replayed event): treat as an update
                self._update_node(self.index[obj.id], obj, delta)
            else:
                delta.added_nodes.append(self._new_node(obj.id, obj.name, obj.type))
            touched[obj.id] = None
        for obj in ev.updated_objects:
            i = self.index.get(obj.id)
            if i is None:
                delta.added_nodes.append(self._new_node(obj.id, obj.name, obj.type))
            else:
                self._update_node(i, obj, delta)
            touched[obj.id] = None
        for rel in ev.added_relations:
            if rel.id in self.rel_index:
                self._update_edge(self.rel_index[rel.id], rel, delta)
            else:
                j = self._new_edge(rel.id, rel.type, rel.source_id, rel.target_id)
                if j is not None:
                    delta.added_edges.append(j)
            touched[rel.source_id] = None
            touched[rel.target_id] = None
        for rel in ev.updated_relations:
            j = self.rel_index.get(rel.id)
            if j is None:
                j = self._new_edge(rel.id, rel.type, rel.source_id, rel.target_id)
                if j is not None:
                    delta.added_edges.append(j)
            else:
                self._update_edge(j, rel, delta)
            touched[rel.source_id] = None
            touched[rel.target_id] = None
        delta.touched_ids = [oid for oid in touched if oid in self.index]
        if delta.structural:
            self._touch_structure()
        return delta

    def _update_node(self, i: int, obj: Object, delta: Delta) -> None:
        changed = False
        if self.names[i] != obj.name:
            self.names[i] = obj.name
            changed = True
        t = self._type_slot(obj.type)
        if t != self.ntype[i]:
            self.type_counts[self.ntype[i]] -= 1
            self.type_counts[t] += 1
            self.ntype[i] = t
            delta.retyped = True
            changed = True
        if changed:
            delta.updated_nodes.append(i)

    def _update_edge(self, j: int, rel: Relation, delta: Delta) -> None:
        a = self.index.get(rel.source_id)
        b = self.index.get(rel.target_id)
        if a is None or b is None:
            self._kill_edge(j)
            delta.removed_edges.append(j)
            return
        t = self._rel_type_slot(rel.type)
        changed = t != self.etype[j]
        self.etype[j] = t
        if (a, b) != (self.src[j], self.dst[j]):
            self.src[j], self.dst[j] = a, b
            self._adj_start = None  # endpoints moved: rebuild adjacency lazily
            delta.rewired = True
            changed = True
        if changed:
            delta.updated_edges.append(j)

    # -- reading ----------------------------------------------------------
    @property
    def node_count(self) -> int:
        return self._live_nodes

    @property
    def edge_count(self) -> int:
        return self._live_edges

    @property
    def slot_count(self) -> int:
        return len(self.ids)

    def nodes(self) -> Iterator[int]:
        alive = self.alive
        return (i for i in range(len(alive)) if alive[i])

    def edges(self) -> Iterator[int]:
        ealive = self.ealive
        return (j for j in range(len(ealive)) if ealive[j])

    def type_of(self, i: int) -> str:
        return self.type_names[self.ntype[i]]

    def rel_type_of(self, j: int) -> str:
        return self.rel_type_names[self.etype[j]]

    def live_types(self) -> list[tuple[str, int]]:
        """(type, count) for types that have nodes, most common first."""
        pairs = [(name, n) for name, n in zip(self.type_names, self.type_counts) if n > 0]
        pairs.sort(key=lambda p: (-p[1], p[0].casefold()))
        return pairs

    def live_rel_types(self) -> list[str]:
        """Relation types in use, most common first (what a person most likely wants next)."""
        counts = [0] * len(self.rel_type_names)
        etype, ealive = self.etype, self.ealive
        for j in range(len(ealive)):
            if ealive[j]:
                counts[etype[j]] += 1
        order = sorted(range(len(counts)), key=lambda t: (-counts[t], self.rel_type_names[t].casefold()))
        return [self.rel_type_names[t] for t in order if counts[t]]

    def node_id(self, i: int) -> str:
        oid = self.ids[i]
        if oid is None:
            raise KeyError(i)
        return oid

    def indices_of(self, ids: Iterable[str]) -> list[int]:
        index = self.index
        return [index[o] for o in ids if o in index]

    # -- positions --------------------------------------------------------
    def set_position(self, i: int, x: float, y: float) -> None:
        self.xs[i] = x
        self.ys[i] = y
        self.placed[i] = 1
        self.position_version += 1

    def unplaced(self) -> list[int]:
        alive, placed = self.alive, self.placed
        return [i for i in range(len(alive)) if alive[i] and not placed[i]]

    def bounds(self, indices: Iterable[int] | None = None) -> tuple[float, float, float, float] | None:
        """(x0, y0, x1, y1) of the placed nodes given (default: all)."""
        xs, ys, alive, placed = self.xs, self.ys, self.alive, self.placed
        it = range(len(alive)) if indices is None else indices
        x0 = y0 = float("inf")
        x1 = y1 = float("-inf")
        for i in it:
            if alive[i] and placed[i]:
                x, y = xs[i], ys[i]
                if x < x0:
                    x0 = x
                if x > x1:
                    x1 = x
                if y < y0:
                    y0 = y
                if y > y1:
                    y1 = y
        if x0 > x1:
            return None
        return x0, y0, x1, y1

    def positions_snapshot(self) -> list[tuple[str, float, float, bool]]:
        """Every placed node as (object id, x, y, pinned), for saving."""
        out = []
        ids, xs, ys, alive, placed, pinned = self.ids, self.xs, self.ys, self.alive, self.placed, self.pinned
        for i in range(len(alive)):
            if alive[i] and placed[i]:
                oid = ids[i]
                assert oid is not None
                out.append((oid, xs[i], ys[i], i in pinned))
        return out

    # -- housekeeping -----------------------------------------------------
    def needs_compaction(self) -> bool:
        dead_nodes = len(self.alive) - self._live_nodes
        dead_edges = len(self.ealive) - self._live_edges
        return dead_nodes > 256 + self._live_nodes // 4 or dead_edges > 512 + self._live_edges // 4

    def compact(self) -> None:
        """Drop dead slots (renumbers every index; view state is by id, so it survives)."""
        old_ids, old_names, old_types = self.ids, self.names, self.ntype
        xs, ys, placed, pinned_ids = self.xs, self.ys, self.placed, {self.ids[i] for i in self.pinned}
        rels = [(self.rel_ids[j], self.etype[j], self.src[j], self.dst[j]) for j in self.edges()]
        type_names, rel_type_names = self.type_names, self.rel_type_names
        session, pos_version, struct_version = self.session_id, self.position_version, self.structure_version
        self.reset(session)
        for i in range(len(old_ids)):
            oid = old_ids[i]
            if oid is None:
                continue
            k = self._new_node(oid, old_names[i], type_names[old_types[i]])
            self.xs[k], self.ys[k], self.placed[k] = xs[i], ys[i], placed[i]
            if oid in pinned_ids:
                self.pinned.add(k)
        for rid, t, a, b in rels:
            sid, tid = old_ids[a], old_ids[b]
            if rid is not None and sid is not None and tid is not None:
                self._new_edge(rid, rel_type_names[t], sid, tid)
        self.position_version = pos_version + 1
        self.structure_version = struct_version + 1
