"""Validating a batch: every op checked against the graph as modified by the
ops before it, every error collected, nothing written.

Each op handler validates completely before it touches the overlay, so a
failing op leaves no trace and the ops after it are judged against the
batch's state without it (their own errors are still reported). The handlers
also produce the op's resolved form (explicit ids, recorded in the change)
and its inverse (ops that undo it, used by ``revert``).

Decisions:
- Names and types are stripped of surrounding whitespace; an object's identity
  for conflicts is (type, name) compared case-insensitively.
- A ``ref`` starting with "$" is always a label; other refs are tried as an
  object id first, then as an exact name.
- ``define_type`` replaces the whole definition; the inverse restores it or
  removes it (the internal ``undefine_type`` op).
- ``update_relation`` accepts ``properties`` (replace all) or
  ``set_properties``/``remove_properties`` (merge).
- Property schemas hold for the batch's END state: every object and relation
  the batch writes must fit the schema its type has when the batch is done
  (the error names the last op that wrote it). Objects the batch does not
  touch are not re-checked when a schema is defined.
- ``add_object`` with ``on_conflict: update`` that changes nothing counts as a
  reuse; relations are not deduplicated (two "knows" edges may be wanted).
"""

from __future__ import annotations

from typing import Any

from cks_desktop.graph.compact_ops import COMPACT_OPS, expand_indexed, shape_error
from cks_desktop.graph.errors import AmbiguousRef, StoreError, ValidationFailed
from cks_desktop.graph import evidence as E
from cks_desktop.graph.model import TypeDef
from cks_desktop.graph.overlay import ObjState, Overlay, RelState
from cks_desktop.graph.operations import OPERATIONS
from cks_desktop.graph.plan import Plan
from cks_desktop.graph.sqlite_util import dumps, is_id
from cks_desktop.graph.validation import (
    OpError, SchemaCache, check_fields, check_label, check_name, check_props, check_timestamp,
)
from cks_desktop.ids import new_id

_FIELDS = {name: op.fields for name, op in OPERATIONS.items()}  # graph/operations.py declares them
OP_NAMES = tuple(_FIELDS)


class Planner:
    """Validates a batch. ``run`` plans a whole batch against one overlay; a streamed
    batch (``graph/stream.py``) calls ``start_chunk``/``run_chunk`` per chunk, each chunk
    against a fresh overlay over the rows the earlier chunks already wrote, while labels,
    "removed by operation i" notes and the pending schema errors carry over."""

    def __init__(self, overlay: Overlay, now: str, keep_created: bool = True) -> None:
        self.ov = overlay
        self.keep_created = keep_created  # a streamed import does not report its labels
        self.now = now
        self.plan = Plan(overlay)
        self.schemas = SchemaCache(overlay.typedefs)
        self.labels: dict[str, tuple[str, str]] = {}  # label -> ("object"|"relation", id)
        self.failed_labels: dict[str, int] = {}
        self.removed_by: dict[str, int] = {}  # object/relation id -> op index that removed it
        self.removed_names: dict[str, int] = {}  # name key -> op index that removed such an object
        self.foreign_ids: set[str] = set()  # explicit ids of this batch already used in other sessions
        # id -> index of the last op that wrote it; checked against the type schemas at the end
        self.written_objs: dict[str, int] = {}
        self.written_rels: dict[str, int] = {}
        self._props_hint: str | None = None  # the current add op's properties as JSON (for the writer)
        # id -> (op index, message) of objects/relations whose END state breaks a schema so
        # far (streamed batches: a later chunk may still fix them)
        self.schema_pending: dict[str, tuple[int, str]] = {}
        # ids of objects earlier chunks of a streamed batch created and did not remove: a
        # relation's end among them needs no row loaded (300k relations of an import)
        self.batch_alive: set[str] = set()

    # -- driver -----------------------------------------------------------------------------

    def run(self, ops: list[Any]) -> Plan:
        """Plan the whole batch (compact ops expanded, errors naming the op they came from)."""
        errors = self.run_chunk(list(expand_indexed(ops)))
        errors += self.take_schema_errors()
        if errors:
            raise ValidationFailed(sorted(errors, key=lambda e: e["index"]))
        return self.plan

    def start_chunk(self, overlay: Overlay) -> None:
        """The next chunk of a streamed batch: a fresh overlay (the rows written so far are in
        the database) and a fresh plan; labels and "removed by" notes carry over."""
        for st in self.ov.objs.values():
            if not st.alive:
                self.batch_alive.discard(st.id)
            elif not st.existed:
                self.batch_alive.add(st.id)
        self.ov = overlay
        self.plan = Plan(overlay)
        self.schemas = SchemaCache(overlay.typedefs)
        self.written_objs = {}
        self.written_rels = {}

    def run_chunk(self, items: list[tuple[int, Any]]) -> list[dict[str, Any]]:
        """Plan ``(op index, op)`` pairs into ``self.plan``; returns the op errors (the
        failing ops are left out, as in a whole batch). Schema errors of the chunk's end
        state go to ``schema_pending``."""
        self._prefetch([op for _, op in items])
        errors: list[dict[str, Any]] = []
        handlers = {name: getattr(self, "_" + name) for name in _FIELDS}
        for i, op in items:
            try:
                if not isinstance(op, dict):
                    raise OpError("each operation must be an object with an 'op' field")
                kind = op.get("op")
                if kind in COMPACT_OPS:  # well-formed ones were expanded before
                    raise OpError(shape_error(op) or f"malformed {kind!r}")
                if kind not in handlers:
                    raise OpError(f"unknown op {kind!r}; expected one of {', '.join(OP_NAMES)}")
                check_fields(op, _FIELDS[kind])
                resolved, inverse = handlers[kind](op, i)
            except (OpError, StoreError) as exc:
                errors.append({"index": i, "message": str(exc)})
                label = op.get("label") if isinstance(op, dict) else None
                if isinstance(label, str) and label not in self.labels:
                    self.failed_labels.setdefault(label, i)
                continue
            self.plan.resolved.append(resolved)
            self.plan.inverses.append(inverse)
            self.plan.props_json.append(self._props_hint)
            self._props_hint = None
        self._check_schemas()
        return errors

    def take_schema_errors(self) -> list[dict[str, Any]]:
        """The schema errors of the batch's end state (one per op), once all ops are planned."""
        errors: dict[int, str] = {}
        for index, message in self.schema_pending.values():
            errors.setdefault(index, message)
        self.schema_pending = {}
        return [{"index": i, "message": m} for i, m in errors.items()]

    def _check_schemas(self) -> None:
        """Property schemas hold for the batch's END state: every object and relation it
        wrote must match the schema its type has when the batch is done. (Checking op by
        op would reject batches whose end state is fine — e.g. the revert of "define a
        schema, remove an object that does not fit it".) Checked per chunk: what a chunk
        wrote replaces what an earlier chunk left pending for the same id."""
        pending = self.schema_pending
        for written in (self.written_objs, self.written_rels):
            for ident in written:
                pending.pop(ident, None)
        if not self.schemas.active:
            return
        failed: set[int] = {index for index, _ in pending.values()}
        for kind, written, states in (("object", self.written_objs, self.ov.objs),
                                      ("relation", self.written_rels, self.ov.rels)):
            for ident, index in written.items():
                st = states[ident]
                if not st.alive or index in failed:
                    continue
                try:
                    self.schemas.check(kind, st.type, st.properties)
                except OpError as exc:
                    pending[ident] = (index, str(exc))
                    failed.add(index)

    def _prefetch(self, ops: list[Any]) -> None:
        """Collect every id and name the batch mentions and load them in a few queries."""
        obj_ids: list[str] = []
        rel_ids: list[str] = []
        keys: list[str] = []
        removed: list[str] = []  # ids of objects removed by id: their relations are loaded in bulk
        evidence_ids: list[str] = []  # sources removed or moved by id (a revert's), loaded in bulk
        explicit: dict[str, list[str]] = {"object": [], "relation": []}
        labels = self.labels
        alive = self.batch_alive

        def ref(value: Any, end: bool = False) -> None:
            if type(value) is str:
                if value[:1] == "$":  # a label of an earlier chunk of a streamed batch
                    entry = labels.get(value)
                    if entry is not None and entry[0] == "object" and not (end and entry[1] in alive):
                        obj_ids.append(entry[1])
                elif len(value) == 28 and value[:2] == "o_":
                    if not (end and value in alive):
                        obj_ids.append(value)
                else:
                    keys.append(value.strip().casefold())

        for op in ops:
            if type(op) is not dict:
                continue
            kind = op.get("op")
            if kind == "add_relation":
                ref(op.get("source"), True)
                ref(op.get("target"), True)
            elif kind == "add_object":
                name = op.get("name")
                if type(name) is str:
                    keys.append(name.strip().casefold())
                ref(op.get("id"))
            else:
                for field in ("ref", "source", "target", "object"):
                    ref(op.get(field))
                if kind == "remove_object" and type(op.get("ref")) is str and is_id(op["ref"], "o_"):
                    removed.append(op["ref"])
                name = op.get("name")
                if kind == "update_object" and type(name) is str:
                    keys.append(name.strip().casefold())
            for field in ("relation_id", "id", "relation"):
                value = op.get(field)
                if type(value) is str and value[:2] == "r_":
                    rel_ids.append(value)
            if kind in ("remove_evidence", "move_evidence", "set_evidence_review") \
                    and type(op.get("evidence_id")) is str:
                evidence_ids.append(op["evidence_id"])
            if kind in ("add_object", "add_relation") and type(op.get("id")) is str:
                explicit["object" if kind == "add_object" else "relation"].append(op["id"])
        self.ov.prefetch(obj_ids, rel_ids, keys)
        if len(removed) > 1:
            self.ov.prefetch_relations_of(removed)
            if self.plan.evidence.has_any:  # their sources (and their relations') go with them: one query each
                self.plan.evidence.prefetch("object", removed)
                self.plan.evidence.prefetch("relation", list(self.ov.rels))
        if len(evidence_ids) > 1:
            self.plan.evidence.prefetch_ids(evidence_ids)
        if explicit["object"] or explicit["relation"]:  # ids are global: one query, only for imports/reverts
            self.foreign_ids = self.ov.foreign_ids(explicit["object"], explicit["relation"])

    # -- references -------------------------------------------------------------------------

    def resolve(self, ref: Any, field: str = "ref") -> ObjState:
        known = self.ov.objs.get(ref) if type(ref) is str else None
        if known is not None and known.alive:  # the common case of bulk batches: a loaded id
            return known
        if not isinstance(ref, str) or not ref.strip():
            raise OpError(f"'{field}' must be a non-empty string (an object id, an exact name or a $label)")
        if ref.startswith("$"):
            entry = self.labels.get(ref)
            if entry is None:
                if ref in self.failed_labels:
                    raise OpError(f"label {ref} comes from operation {self.failed_labels[ref]}, which failed")
                raise OpError(f"unknown label {ref}: no earlier operation in this batch defines it")
            if entry[0] != "object":
                raise OpError(f"label {ref} names a relation, not an object")
            st = self.ov.obj(entry[1])  # a label of an earlier chunk: the row is in the database
            if st is None or not st.alive:
                raise OpError(f"object {ref} was removed by operation {self.removed_by.get(entry[1], '?')}")
            return st
        st = self.ov.obj(ref) if len(ref) == 28 and ref[:2] == "o_" else None
        if st is not None and st.alive:
            return st
        if ref in self.removed_by:  # (removed by an earlier chunk of a streamed batch: no row at all)
            raise OpError(f"object {ref} was removed by operation {self.removed_by[ref]} of this batch")
        key = ref.strip().casefold()
        found = self.ov.named(key)
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise AmbiguousRef(ref, [{"id": s.id, "type": s.type, "name": s.name} for s in found[:20]])
        if key in self.removed_names:
            raise OpError(f"object {ref!r} was removed by operation {self.removed_names[key]} of this batch")
        raise OpError(f"No object {ref!r} in this session.")

    def _relation(self, relation_id: Any) -> RelState:
        if not isinstance(relation_id, str) or not relation_id:
            raise OpError("'relation_id' must be a relation id (r_…)")
        st = self.ov.rel(relation_id)
        if st is None or not st.alive:
            if relation_id in self.removed_by:
                raise OpError(f"relation {relation_id} was removed by operation "
                              f"{self.removed_by[relation_id]} of this batch")
            raise OpError(f"No relation {relation_id!r} in this session.")
        return st

    def _conflict(self, type_: str, name: str, exclude: str | None = None) -> ObjState | None:
        tkey = type_.casefold()
        for st in self.ov.named(name.casefold()):
            if st.type.casefold() == tkey and st.id != exclude:
                return st
        return None

    def _set_label(self, label: str | None, kind: str, ident: str) -> None:
        if label is not None:
            self.labels[label] = (kind, ident)
            if self.keep_created:
                self.plan.created[label] = ident

    def _check_label(self, op: dict[str, Any]) -> str | None:
        label = check_label(op.get("label"))
        if label is not None and label in self.labels:
            raise OpError(f"label {label} is already used by an earlier operation of this batch")
        return label

    def _new_id(self, op: dict[str, Any], prefix: str) -> str:
        ident = op.get("id")
        if ident is None:
            return new_id(prefix)
        if not isinstance(ident, str) or not is_id(ident, prefix):
            raise OpError(f"'id' must be an id made by CKS Desktop ({prefix}…), got {ident!r}")
        if ident in self.foreign_ids:
            raise OpError(f"the id {ident} is already used in another session")
        return ident

    # -- object ops -------------------------------------------------------------------------

    def _add_object(self, op: dict[str, Any], i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        type_ = check_name(op.get("type"), "type")
        name = check_name(op.get("name"), "name")
        props, props_json = check_props(op.get("properties", {}), "properties")
        label = self._check_label(op) if "label" in op else None
        on_conflict = op.get("on_conflict", "error")
        if on_conflict not in ("error", "reuse", "update"):
            raise OpError("'on_conflict' must be 'error', 'reuse' or 'update'")
        existing = self._conflict(type_, name)
        if existing is not None and "id" not in op:
            if on_conflict == "error":
                raise OpError(f"an object {existing.type} {existing.name!r} already exists ({existing.id}); "
                              "refer to it by name or id, or pass on_conflict 'reuse' or 'update'")
            if on_conflict == "reuse":
                self._set_label(label, "object", existing.id)
                self.plan.counts["objects_reused"] += 1
                return ({"op": "add_object", "id": existing.id, "type": existing.type, "name": existing.name,
                         "outcome": "reused"}, [])
            inverse = self._merge_props(existing, props, None, i)
            self._set_label(label, "object", existing.id)
            # Nothing new in the properties: the same as a reuse (no write, nothing to undo).
            self.plan.counts["objects_updated" if inverse else "objects_reused"] += 1
            return ({"op": "add_object", "id": existing.id, "type": existing.type, "name": existing.name,
                     "properties": props, "outcome": "updated" if inverse else "reused"}, inverse)
        if existing is not None:
            raise OpError(f"an object {existing.type} {existing.name!r} already exists ({existing.id})")
        ident = self._new_id(op, "o_") if "id" in op else new_id("o_")
        created = (check_timestamp(op["created_at"], "created_at") if "created_at" in op else None) or self.now
        updated = (check_timestamp(op["updated_at"], "updated_at") if "updated_at" in op else None) or created
        prior = self.ov.obj(ident) if "id" in op else None
        if prior is not None:
            if prior.alive:
                raise OpError(f"an object with id {ident} already exists")
            prior.type, prior.created_at, prior.updated_at = type_, created, updated
            prior.set_properties(props, props_json)
            self.ov.rename(prior, name)
            self.ov.revive(prior)
            prior.dirty = True
        else:
            self.ov.add_obj(ObjState(ident, type_, name, props, props_json, created, updated, existed=False))
        self.written_objs[ident] = i
        self._set_label(label, "object", ident)
        self.plan.counts["objects_added"] += 1
        resolved = {"op": "add_object", "id": ident, "type": type_, "name": name, "properties": props}
        if label is not None:
            resolved["label"] = label
        self._props_hint = props_json
        return resolved, [{"op": "remove_object", "ref": ident}]

    def _merge_props(self, st: ObjState, set_props: dict[str, Any], remove: list[str] | None,
                     i: int) -> list[dict[str, Any]]:
        """Merge into an existing object's properties; returns the inverse ops."""
        old = st.properties
        new = dict(old)
        new.update(set_props)
        for key in remove or ():
            new.pop(key, None)
        changed = [k for k in set(old) | set(new) if _differs(old.get(k, _MISSING), new.get(k, _MISSING))]
        if not changed:
            return []
        self.written_objs[st.id] = i
        inverse = {"op": "update_object", "ref": st.id, "updated_at": st.updated_at,
                   "set_properties": {k: old[k] for k in sorted(changed) if k in old},
                   "remove_properties": sorted(k for k in changed if k not in old)}
        st.set_properties(new)
        st.updated_at = self.now
        st.dirty = True
        self.plan.counts["properties_changed"] += len(changed)
        return [inverse]

    def _update_object(self, op: dict[str, Any], i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        st = self.resolve(op.get("ref"))
        name = check_name(op["name"], "name") if "name" in op else st.name
        type_ = check_name(op["type"], "type") if "type" in op else st.type
        set_props, _ = check_props(op.get("set_properties", {}), "set_properties")
        remove = op.get("remove_properties", [])
        if not isinstance(remove, list) or not all(isinstance(k, str) for k in remove):
            raise OpError("'remove_properties' must be a list of property names")
        both = sorted(set(set_props) & set(remove))
        if both:
            raise OpError(f"property {both[0]!r} is both set and removed")
        if not any(f in op for f in ("name", "type", "set_properties", "remove_properties", "updated_at")):
            raise OpError("update_object needs at least one of name, type, set_properties, remove_properties")
        updated_at = check_timestamp(op.get("updated_at"), "updated_at")
        if (type_.casefold(), name.casefold()) != st.conflict_key:
            other = self._conflict(type_, name, exclude=st.id)
            if other is not None:
                raise OpError(f"an object {other.type} {other.name!r} already exists ({other.id})")
        new_props = dict(st.properties)
        new_props.update(set_props)
        for key in remove:
            new_props.pop(key, None)
        # validated: now mutate
        self.written_objs[st.id] = i
        old_name, old_type, old_updated = st.name, st.type, st.updated_at
        inverse: dict[str, Any] = {"op": "update_object", "ref": st.id, "updated_at": old_updated}
        if name != old_name:
            inverse["name"] = old_name
            self.ov.rename(st, name)
            self.plan.counts["objects_renamed"] += 1
        if type_ != old_type:
            inverse["type"] = old_type
            st.type = type_
            self.plan.counts["objects_retyped"] += 1
        prop_inverse = self._merge_props(st, set_props, remove, i)
        if prop_inverse:
            inverse["set_properties"] = prop_inverse[0]["set_properties"]
            inverse["remove_properties"] = prop_inverse[0]["remove_properties"]
        st.updated_at = updated_at or self.now
        st.dirty = True
        self.plan.counts["objects_updated"] += 1
        resolved: dict[str, Any] = {"op": "update_object", "ref": st.id}
        for field in ("name", "type"):
            if field in op:
                resolved[field] = name if field == "name" else type_
        if set_props:
            resolved["set_properties"] = set_props
        if remove:
            resolved["remove_properties"] = list(remove)
        return resolved, [inverse]

    def _remove_object(self, op: dict[str, Any], i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        st = self.resolve(op.get("ref"))
        rels = self.ov.rels_of(st.id)
        inverse = [st.snapshot()] + [r.snapshot() for r in rels]
        for r in rels:
            self.ov.kill_rel(r)
            self.removed_by[r.id] = i
        self.ov.kill_obj(st)
        self.removed_by[st.id] = i
        self.removed_names[st.key] = i
        self.plan.counts["objects_removed"] += 1
        self.plan.counts["relations_removed"] += len(rels)
        resolved = {"op": "remove_object", "ref": st.id, "type": st.type, "name": st.name,
                    "removed_relations": [r.id for r in rels]}
        gone = self._drop_evidence([("object", st.id)] + [("relation", r.id) for r in rels], [st.id], i)
        if gone:
            resolved["removed_evidence"] = [e["id"] for e in gone]
        return resolved, inverse + gone

    # -- relation ops -----------------------------------------------------------------------

    def _ends(self, op: dict[str, Any]) -> tuple[ObjState, ObjState]:
        """Both ends of a relation op, reporting both if both are wrong."""
        errors = []
        src = tgt = None
        try:
            src = self.resolve(op.get("source"), "source")
        except (OpError, StoreError) as exc:
            errors.append(f"source: {exc}")
        try:
            tgt = self.resolve(op.get("target"), "target")
        except (OpError, StoreError) as exc:
            errors.append(f"target: {exc}")
        if errors or src is None or tgt is None:
            raise OpError("; ".join(errors))
        return src, tgt

    def _add_relation(self, op: dict[str, Any], i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        s_id, t_id = self._end_id(op.get("source")), self._end_id(op.get("target"))
        if s_id is None or t_id is None:
            src, tgt = self._ends(op)
            s_id, t_id = src.id, tgt.id
        type_ = check_name(op.get("type"), "type")
        props, props_json = check_props(op.get("properties", {}), "properties")
        label = self._check_label(op) if "label" in op else None
        ident = self._new_id(op, "r_") if "id" in op else new_id("r_")
        created = (check_timestamp(op["created_at"], "created_at") if "created_at" in op else None) or self.now
        prior = self.ov.rel(ident) if "id" in op else None
        if prior is not None and prior.alive:
            raise OpError(f"a relation with id {ident} already exists")
        if prior is not None:  # removed earlier in this batch, now re-added
            prior.type, prior.created_at = type_, created
            prior.set_properties(props, props_json)
            prior.alive = True
            prior.dirty = True
            self.ov.repoint(prior, s_id, t_id)
        else:
            self.ov.add_rel(RelState(ident, type_, s_id, t_id, props, props_json, created, existed=False))
        self.written_rels[ident] = i
        if label is not None:
            self._set_label(label, "relation", ident)
        self.plan.counts["relations_added"] += 1
        resolved = {"op": "add_relation", "id": ident, "type": type_, "source": s_id, "target": t_id,
                    "properties": props}
        if label is not None:
            resolved["label"] = label
        self._props_hint = props_json
        return resolved, [{"op": "remove_relation", "relation_id": ident}]

    def _end_id(self, ref: Any) -> str | None:
        """The id of an alive object ``ref`` names, found without a query (a loaded id or
        label, or one an earlier chunk created), or None: ask ``_ends``."""
        if type(ref) is not str:
            return None
        ident = ref
        if ref[:1] == "$":
            entry = self.labels.get(ref)
            if entry is None or entry[0] != "object":
                return None
            ident = entry[1]
        st = self.ov.objs.get(ident)
        if st is not None:
            return ident if st.alive else None
        return ident if ident in self.batch_alive else None

    def _update_relation(self, op: dict[str, Any], i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        st = self._relation(op.get("relation_id"))
        src = self.resolve(op["source"], "source") if "source" in op else None
        tgt = self.resolve(op["target"], "target") if "target" in op else None
        type_ = check_name(op["type"], "type") if "type" in op else st.type
        if "properties" in op and ("set_properties" in op or "remove_properties" in op):
            raise OpError("pass either 'properties' or 'set_properties'/'remove_properties', not both")
        if "properties" in op:
            new_props, _ = check_props(op["properties"], "properties")
        else:
            new_props = dict(st.properties)
            new_props.update(check_props(op.get("set_properties", {}), "set_properties")[0])
            remove = op.get("remove_properties", [])
            if not isinstance(remove, list) or not all(isinstance(k, str) for k in remove):
                raise OpError("'remove_properties' must be a list of property names")
            for key in remove:
                new_props.pop(key, None)
        self.written_rels[st.id] = i
        inverse = {"op": "update_relation", "relation_id": st.id, "source": st.source_id,
                   "target": st.target_id, "type": st.type, "properties": dict(st.properties)}
        resolved: dict[str, Any] = {"op": "update_relation", "relation_id": st.id}
        if src is not None or tgt is not None:
            self.ov.repoint(st, src.id if src else st.source_id, tgt.id if tgt else st.target_id)
            resolved.update(source=st.source_id, target=st.target_id)
        if "type" in op:
            resolved["type"] = type_
        st.type = type_
        if dumps(new_props) != dumps(st.properties):
            resolved["properties"] = new_props
        st.set_properties(new_props)
        st.dirty = True
        self.plan.counts["relations_updated"] += 1
        return resolved, [inverse]

    def _remove_relation(self, op: dict[str, Any], i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        st = self._relation(op.get("relation_id"))
        inverse = [st.snapshot()]
        self.ov.kill_rel(st)
        self.removed_by[st.id] = i
        self.plan.counts["relations_removed"] += 1
        resolved: dict[str, Any] = {"op": "remove_relation", "relation_id": st.id}
        gone = self._drop_evidence([("relation", st.id)], [st.source_id, st.target_id], i)
        if gone:
            resolved["removed_evidence"] = [e["id"] for e in gone]
        return resolved, inverse + gone

    # -- evidence ops (graph/evidence.py) ---------------------------------------------------

    def _drop_evidence(self, targets: list[tuple[str, str]], ends: list[str], i: int) -> list[dict[str, Any]]:
        """Remove the sources of things an op removes; returns their snapshots (the inverse
        re-adds them after the things themselves)."""
        ev = self.plan.evidence
        if not ev.has_any and not ev.items:
            return []
        gone: list[dict[str, Any]] = []
        for kind, ident in targets:
            for e in ev.of(kind, ident):
                gone.append(e.snapshot())
                ev.kill(e)
                self.removed_by[e.id] = i
        if gone:
            ev.touched.update(ends)
            self.plan.counts["evidence_removed"] += len(gone)
        return gone

    def _evidence_target(self, op: dict[str, Any]) -> tuple[str, str, list[str], bool]:
        """``(kind, id, object ids it touches, created by this batch)`` of the op's target."""
        has_obj, has_rel = op.get("object") is not None, op.get("relation") is not None
        if has_obj == has_rel:
            raise OpError("name exactly one target: 'object' (a ref or $label) or 'relation' (an id or $label)")
        if has_obj:
            obj = self.resolve(op["object"], "object")
            return "object", obj.id, [obj.id], not obj.existed
        ref = op["relation"]
        if isinstance(ref, str) and ref.startswith("$"):
            entry = self.labels.get(ref)
            if entry is None:
                if ref in self.failed_labels:
                    raise OpError(f"label {ref} comes from operation {self.failed_labels[ref]}, which failed")
                raise OpError(f"unknown label {ref}: no earlier operation in this batch defines it")
            if entry[0] != "relation":
                raise OpError(f"label {ref} names an object, not a relation")
            ref = entry[1]
        rel = self._relation(ref)
        return "relation", rel.id, [rel.source_id, rel.target_id], not rel.existed

    def _add_evidence(self, op: dict[str, Any], i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        kind, target, ends, fresh = self._evidence_target(op)
        ev = self.plan.evidence
        document_id, chunk, start, end, page, quote, alignment = E.check_passage(op, ev)
        review = E.choice(op, "review", E.REVIEWS, "auto")
        origin = E.choice(op, "origin", E.ORIGINS, "extraction")
        created, change_id = E.check_internal(op)
        prior: E.EvState | None = None
        if op.get("id") is not None:
            ident = E.check_evidence_id(op["id"], "id")
            prior = ev.get(ident)
            if prior is not None and prior.alive:
                raise OpError(f"evidence {ident} already exists")
            if prior is None and ev.used_elsewhere(ident):
                raise OpError(f"the id {ident} is already used in another session")
        else:
            key = (document_id, start, end, quote)
            for other in ev.of(kind, target, fresh):
                if other.key == key:  # the same source again (a re-import, a re-extraction)
                    return {"op": "add_evidence", "id": other.id, kind: target, "outcome": "reused"}, []
            ident = new_id("e_")
        fields = (document_id, chunk, start, end, page, quote, alignment, review, origin, change_id, created)
        if prior is not None:  # removed earlier in this batch (or by the change a revert undoes)
            (prior.document_id, prior.chunk_index, prior.start, prior.end, prior.page, prior.quote, prior.alignment,
             prior.review, prior.origin, prior.change_id, prior.created_at) = fields
            prior.target_kind, prior.target_id, prior.alive = kind, target, True
            ev.add(prior)
        else:
            ev.add(E.EvState(ident, kind, target, *fields, existed=False))
        ev.touched.update(ends)
        self.plan.counts["evidence_added"] += 1
        resolved = {"op": "add_evidence", "id": ident, kind: target, "document_id": document_id,
                    "chunk_index": chunk, "start": start, "end": end, "page": page, "quote": quote,
                    "alignment": alignment, "review": review, "origin": origin}
        return resolved, [{"op": "remove_evidence", "evidence_id": ident}]

    def _live_evidence(self, op: dict[str, Any]) -> E.EvState:
        ident = E.check_evidence_id(op.get("evidence_id"))
        st = self.plan.evidence.get(ident)
        if st is None or not st.alive:
            if ident in self.removed_by:
                raise OpError(f"evidence {ident} was removed by operation {self.removed_by[ident]} of this batch")
            raise OpError(f"No evidence {ident!r} in this session.")
        return st

    def _remove_evidence(self, op: dict[str, Any], i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        st = self._live_evidence(op)
        inverse = [st.snapshot()]
        ends = self._ends_of(st.target_kind, st.target_id)
        ev = self.plan.evidence
        ev.kill(st)
        ev.touched.update(ends)
        self.removed_by[st.id] = i
        self.plan.counts["evidence_removed"] += 1
        return {"op": "remove_evidence", "evidence_id": st.id}, inverse

    def _move_evidence(self, op: dict[str, Any], i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        st = self._live_evidence(op)
        kind, target, ends, _ = self._evidence_target(op)
        old_kind, old_target = st.target_kind, st.target_id
        old_ends = self._ends_of(old_kind, old_target)
        ev = self.plan.evidence
        ev.move(st, kind, target)
        ev.touched.update(ends + old_ends)
        self.plan.counts["evidence_moved"] += 1
        return ({"op": "move_evidence", "evidence_id": st.id, kind: target},
                [{"op": "move_evidence", "evidence_id": st.id, old_kind: old_target}])

    def _set_evidence_review(self, op: dict[str, Any], i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Record a source's review state (a person's check); the inverse sets the old one."""
        st = self._live_evidence(op)
        review = E.check_review(op)
        resolved: dict[str, Any] = {"op": "set_evidence_review", "evidence_id": st.id, "review": review}
        if review == st.review:
            return {**resolved, "outcome": "unchanged"}, []
        old, st.review, st.dirty = st.review, review, True
        self.plan.evidence.touched.update(self._ends_of(st.target_kind, st.target_id))
        self.plan.counts["evidence_reviewed"] += 1
        return resolved, [{"op": "set_evidence_review", "evidence_id": st.id, "review": old}]

    def _ends_of(self, kind: str, target: str) -> list[str]:
        if kind == "object":
            return [target]
        rel = self.ov.rel(target)
        return [rel.source_id, rel.target_id] if rel is not None else []

    # -- types ------------------------------------------------------------------------------

    def _define_type(self, op: dict[str, Any], i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        kind = op.get("kind")
        if kind not in ("object", "relation"):
            raise OpError("'kind' must be 'object' or 'relation'")
        name = check_name(op.get("name"), "name")
        description = op.get("description", "")
        if not isinstance(description, str):
            raise OpError("'description' must be a string")
        schema = op.get("properties_schema")
        if schema is not None:
            self.schemas.check_schema(schema)
        key = (kind, name.casefold())
        old = self.ov.typedefs.get(key)
        self.ov.typedefs[key] = TypeDef(self.ov.session_id, kind, name, description, schema)
        self.schemas.invalidate(kind, name)
        self.plan.counts["types_defined"] += 1
        resolved = {"op": "define_type", "kind": kind, "name": name, "description": description,
                    "properties_schema": schema}
        return resolved, [_typedef_op(old) if old else {"op": "undefine_type", "kind": kind, "name": name}]

    def _undefine_type(self, op: dict[str, Any], i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        kind = op.get("kind")
        name = check_name(op.get("name"), "name")
        key = (str(kind), name.casefold())
        old = self.ov.typedefs.get(key)
        if old is None:
            raise OpError(f"no {kind} type {name!r} is defined")
        self.ov.typedefs[key] = None
        self.schemas.invalidate(str(kind), name)
        self.plan.counts["types_removed"] += 1
        return {"op": "undefine_type", "kind": kind, "name": old.name}, [_typedef_op(old)]


_MISSING = object()


def _differs(a: Any, b: Any) -> bool:
    """JSON inequality: unlike ``!=``, tells 1 from 1.0 and from true, also inside lists."""
    if a is _MISSING or b is _MISSING:
        return a is not b
    if a != b:
        return True
    if type(a) is type(b) and type(a) in (str, int, float, bool, type(None)):
        return False
    return dumps(a) != dumps(b)


def _typedef_op(td: TypeDef) -> dict[str, Any]:
    return {"op": "define_type", "kind": td.kind, "name": td.name, "description": td.description,
            "properties_schema": td.properties_schema}
