"""A streamed batch: plan and write a big batch chunk by chunk inside ONE transaction.

Why: planning a 100k-object import as one batch held every op, its overlay
state, the resolved ops and the inverses at once (~0.8 GB). Here each chunk of
``STREAM_CHUNK`` ops is planned against a fresh overlay over the rows the
earlier chunks already wrote (uncommitted, so invisible to other connections),
written, recorded, and dropped. Still all or nothing: the caller owns the
transaction; any error rolls everything back.

Validation is the same as a whole batch's: labels and "removed by operation i"
notes carry over between chunks (``Planner.start_chunk``); a failing op is left
out and the later ops are judged without it; every op error is collected, and
the chunks after an error are still planned AND written (so that they are
judged against the right state) before ``ValidationFailed`` rolls all back.
Property schemas are checked for the end state (a later chunk's write of an id
replaces an earlier chunk's pending schema error). Callers stream only batches
without ``define_type``/``undefine_type`` (imports, reverts of them).

What is recorded (``changes.ops`` / ``inverse_ops``, see ``compact_ops``):
- forward: the resolved ops in order, runs of new objects and of relations as
  ``add_objects`` / ``add_relations`` ops, pushed into the compressor as they
  are produced;
- inverse: each chunk's inverse (compressed on its own, kept until the end,
  then written in reverse chunk order), without the removal of the objects the
  batch created and of the relations that touch them, which become ONE
  ``remove_objects`` op at the very end. (Why that is exact: an op before
  "add X" cannot refer to X, so its inverse can run before X goes; a relation
  touching a new object goes with it.) A chunk whose inverse only re-adds
  (a revert's) records it as ``add_objects`` + ``add_relations``.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from json.encoder import encode_basestring as _str
from typing import Any

from cks_desktop.graph.errors import ValidationFailed
from cks_desktop.graph.batch import Planner
from cks_desktop.graph.events import GraphChanged
from cks_desktop.graph.history import PartSink
from cks_desktop.graph.model import Change, Object, Relation
from cks_desktop.graph.overlay import Overlay
from cks_desktop.graph.plan import COUNT_KEYS, Plan
from cks_desktop.graph.sqlite_util import dumps
from cks_desktop.graph.writer import NetWrites, index_change, inverse_parts, summarize, write_rows
from cks_desktop.ids import new_id

STREAM_CHUNK = 4000  # plain ops planned and written at a time
STREAM_OVER = 20000  # a revert of more plain ops than this streams


@dataclass
class StreamOutcome:
    """What a streamed batch did; ``change``/``event`` are None when it changed nothing."""

    counts: dict[str, int]
    summary: str
    change: Change | None = None
    event: GraphChanged | None = None


def chunks(items: Iterable[tuple[int, Any]], size: int) -> Iterator[list[tuple[int, Any]]]:
    chunk: list[tuple[int, Any]] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def stream_batch(conn: sqlite3.Connection, session_id: str, items: Iterable[tuple[int, Any]], origin: str,
                 now: str, reverts: str | None = None, chunk_size: int = STREAM_CHUNK) -> StreamOutcome:
    """Plan and write ``(op index, plain op)`` pairs chunk by chunk; the caller owns the
    (write) transaction and rolls it back on any exception, ``ValidationFailed`` included."""
    change_id = new_id("c_")
    counts = dict.fromkeys(COUNT_KEYS, 0)
    errors: list[dict[str, Any]] = []
    planner: Planner | None = None
    recorder = _Recorder()
    net = _NetEffect()
    for chunk in chunks(items, chunk_size):
        overlay = Overlay(conn, session_id)
        if planner is None:
            planner = Planner(overlay, now, keep_created=False)
        else:
            planner.start_chunk(overlay)
        errors += planner.run_chunk(chunk)
        del chunk
        plan = planner.plan
        for key, value in plan.counts.items():
            counts[key] += value
        written = write_rows(conn, session_id, plan, change_id, now)  # also after an error: later chunks see the right state
        index_change(conn, change_id, written.touched)
        net.add(written)
        if not errors:
            recorder.add(plan, planner.removed_by)
        del plan, overlay, written
    if planner is not None:
        errors += planner.take_schema_errors()
    if errors:
        raise ValidationFailed(sorted(errors, key=lambda e: e["index"]))
    summary = summarize(counts)
    outcome = StreamOutcome(counts, summary)
    if not any(v for k, v in counts.items() if k != "objects_reused"):
        return outcome
    ops_value, inverse_value = recorder.finish()
    conn.execute("INSERT INTO changes (id, session_id, at, origin, summary, ops, inverse_ops, reverts) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 (change_id, session_id, now, origin, summary, ops_value, inverse_value, reverts))
    del ops_value, inverse_value
    # The op lists are not held here (``get_change`` reads them): that is the point of streaming.
    outcome.change = Change(id=change_id, session_id=session_id, at=now, origin=origin, ops=[], inverse_ops=[],
                            summary=summary, reverts=reverts)
    outcome.event = net.event(session_id, change_id, origin, reverts)
    return outcome


class _Recorder:
    """Builds the change's forward and inverse op lists while the chunks go by."""

    def __init__(self) -> None:
        self.forward = PartSink()
        self.forward.push("[")
        self._top = 0  # top-level ops pushed
        self._seg: str | None = None  # "objects" / "relations" while inside a compact op
        self._seg_rows = 0
        self.new_ids: list[str] = []  # objects the batch created: ONE remove_objects in the inverse
        self._new: set[str] = set()
        self._inverse_chunks: list[bytes] = []  # each chunk's inverse, compressed, in forward order

    # -- forward ----------------------------------------------------------------------------

    def _top_op(self, text: str) -> None:
        self._close()
        self.forward.push("," + text if self._top else text)
        self._top += 1

    def _close(self) -> None:
        if self._seg is not None:
            self.forward.push("]}")
            self._seg = None

    def _row(self, seg: str, row: str) -> None:
        if self._seg != seg:
            self._close()
            self.forward.push(("," if self._top else "") + f'{{"op":"add_{seg}","{seg}":[')
            self._top += 1
            self._seg, self._seg_rows = seg, 0
        self.forward.push("," + row if self._seg_rows else row)
        self._seg_rows += 1

    def add(self, plan: Plan, removed_by: dict[str, int]) -> None:
        ov = plan.overlay
        kept: list[list[dict[str, Any]]] = []
        for resolved, props, inverse in zip(plan.resolved, plan.props_json, plan.inverses):
            kind = resolved["op"]
            if kind == "add_object" and "outcome" not in resolved:
                ident = resolved["id"]
                st = ov.objs[ident]
                self._row("objects", f'[{_str(ident)},{_str(resolved["type"])},{_str(resolved["name"])},'
                                     f'{props if props is not None else dumps(resolved["properties"])},'
                                     f'{_str(st.created_at)},{_str(st.updated_at)}]')
                if ident not in self._new and ident not in removed_by:
                    self._new.add(ident)
                    self.new_ids.append(ident)
                    inverse = []
            elif kind == "add_relation":
                r = ov.rels[resolved["id"]]
                self._row("relations", f'[{_str(resolved["id"])},{_str(resolved["type"])},'
                                       f'{_str(resolved["source"])},{_str(resolved["target"])},'
                                       f'{props if props is not None else dumps(resolved["properties"])},'
                                       f'{_str(r.created_at)}]')
                if resolved["source"] in self._new or resolved["target"] in self._new:
                    inverse = []  # goes with its new end object
            else:
                self._top_op(dumps(resolved))
            kept.append(inverse)
        ops = [op for inv in reversed(kept) for op in inv]
        if ops:
            self._inverse_chunks.append(zlib.compress(_inverse_text(ops).encode("utf-8"), 6))

    # -- the end ----------------------------------------------------------------------------

    def finish(self) -> tuple[str | bytes, str | bytes]:
        self._close()
        self.forward.push("]")
        ops_value = self.forward.finish()
        sink = PartSink()
        sink.push("[")
        first = True
        while self._inverse_chunks:
            text = zlib.decompress(self._inverse_chunks.pop()).decode("utf-8")  # last chunk first
            sink.push(text if first else "," + text)
            first = False
        if self.new_ids:
            sink.push(('{"op":"remove_objects","ids":[' if first else ',{"op":"remove_objects","ids":['))
            ids = self.new_ids
            for start in range(0, len(ids), 2048):
                sink.push(("," if start else "") + ",".join(_str(i) for i in ids[start:start + 2048]))
            sink.push("]}")
        sink.push("]")
        return ops_value, sink.finish()


_SNAPSHOT_KEYS = {"add_object": 7, "add_relation": 7}


def _inverse_text(ops: list[dict[str, Any]]) -> str:
    """One chunk's inverse ops as comma-separated JSON; a chunk that only re-adds what it
    removed (snapshots) as one ``add_objects`` and one ``add_relations`` op."""
    if all(_SNAPSHOT_KEYS.get(op["op"]) == len(op) and "created_at" in op for op in ops):
        objs = [f'[{_str(o["id"])},{_str(o["type"])},{_str(o["name"])},{dumps(o["properties"])},'
                f'{_str(o["created_at"])},{_str(o["updated_at"])}]' for o in ops if o["op"] == "add_object"]
        rels = [f'[{_str(r["id"])},{_str(r["type"])},{_str(r["source"])},{_str(r["target"])},'
                f'{dumps(r["properties"])},{_str(r["created_at"])}]' for r in ops if r["op"] == "add_relation"]
        parts = []
        if objs:
            parts.append('{"op":"add_objects","objects":[' + ",".join(objs) + "]}")
        if rels:
            parts.append('{"op":"add_relations","relations":[' + ",".join(rels) + "]}")
        return ",".join(parts)
    pieces = list(inverse_parts(ops))
    return "".join(pieces[1:-1])


@dataclass
class _NetEffect:
    """The net effect of all chunks, for the one event (an object added by one chunk and
    updated by a later one is "added"; added then removed is nothing)."""

    added_objects: dict[str, Object] = field(default_factory=dict)
    updated_objects: dict[str, Object] = field(default_factory=dict)
    removed_objects: dict[str, None] = field(default_factory=dict)
    added_relations: dict[str, Relation] = field(default_factory=dict)
    updated_relations: dict[str, Relation] = field(default_factory=dict)
    removed_relations: dict[str, None] = field(default_factory=dict)
    types_changed: bool = False
    evidence_changed: bool = False

    def add(self, w: NetWrites) -> None:
        _merge(w.added_objects, w.updated_objects, w.removed_objects,
               self.added_objects, self.updated_objects, self.removed_objects)
        _merge(w.added_relations, w.updated_relations, w.removed_relations,
               self.added_relations, self.updated_relations, self.removed_relations)
        self.types_changed = self.types_changed or w.types_changed
        self.evidence_changed = self.evidence_changed or w.evidence_changed

    def event(self, session_id: str, change_id: str, origin: str, reverts: str | None) -> GraphChanged:
        return GraphChanged(
            session_id=session_id, change_id=change_id, origin=origin,
            added_objects=tuple(self.added_objects.values()), updated_objects=tuple(self.updated_objects.values()),
            removed_objects=tuple(self.removed_objects), added_relations=tuple(self.added_relations.values()),
            updated_relations=tuple(self.updated_relations.values()),
            removed_relations=tuple(self.removed_relations), types_changed=self.types_changed, reverts=reverts,
            evidence_changed=self.evidence_changed)


def _merge(added: list[Any], updated: list[Any], removed: list[str], all_added: dict[str, Any],
           all_updated: dict[str, Any], all_removed: dict[str, None]) -> None:
    for item in added:
        if item.id in all_removed:  # it existed before the batch, went, and came back
            del all_removed[item.id]
            all_updated[item.id] = item
        else:
            all_added[item.id] = item
    for item in updated:
        if item.id in all_added:
            all_added[item.id] = item
        else:
            all_updated[item.id] = item
    for ident in removed:
        if all_added.pop(ident, None) is None:
            all_updated.pop(ident, None)
            all_removed[ident] = None
