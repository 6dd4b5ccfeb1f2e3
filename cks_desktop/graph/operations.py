"""The graph's write operations, declared once: each operation's fields, and which ones a model may
send in an ``evolve_knowledge`` batch.

Read by the batch planner (``graph/batch.py``: the fields an operation may carry),
``evolve_knowledge`` (``tools/builtin/evolve.py``: the ``op`` enum and the per-operation checks of
its flat schema) and the documentation (``markdown_table``, the table in docs/architecture.md,
kept equal by tests/graph/test_operations_table.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from cks_desktop.graph import evidence as E


@dataclass(frozen=True)
class Operation:
    """``required`` and ``optional``: what a caller sends; ``guards``: keys that guard the operation
    without changing anything (``graph/edit_base.py``), taken off before it is planned; ``internal``:
    fields only the app itself writes (ids and timestamps of an import, evidence bookkeeping).
    ``batch``: offered to a model in ``evolve_knowledge``; ``what``: one line for the documentation."""

    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    guards: tuple[str, ...] = ()
    internal: tuple[str, ...] = ()
    batch: bool = False
    what: str = ""

    @property
    def fields(self) -> frozenset[str]:
        """Every field the planner accepts on this operation (``op`` included, guards not)."""
        return frozenset({"op", *self.required, *self.optional, *self.internal})


def _internal(fields: set[str]) -> tuple[str, ...]:
    return tuple(sorted(fields - {"op"}))


OPERATIONS: dict[str, Operation] = {
    "add_object": Operation(("type", "name"), ("properties", "label", "on_conflict"),
                            internal=("id", "created_at", "updated_at"), batch=True,
                            what="adds an object (or reuses/updates one of that name)"),
    "update_object": Operation(("ref",), ("name", "type", "set_properties", "remove_properties"),
                               guards=("if_unchanged_since",), internal=("updated_at",), batch=True,
                               what="renames, retypes, sets or removes properties of one object"),
    "remove_object": Operation(("ref",), batch=True, what="removes an object and every relation touching it"),
    "add_relation": Operation(("source", "target", "type"), ("properties", "label"),
                              internal=("id", "created_at"), batch=True,
                              what="links two objects with a directed, typed relation"),
    "update_relation": Operation(("relation_id",), ("source", "target", "type", "properties", "set_properties",
                                                    "remove_properties"),
                                 what="re-points or changes a relation (merges)"),
    "remove_relation": Operation(("relation_id",), batch=True, what="removes one relation"),
    "define_type": Operation(("kind", "name"), ("description", "properties_schema"),
                             what="describes a type, optionally with a JSON Schema for its properties"),
    "undefine_type": Operation(("kind", "name"), what="removes a type's description and schema"),
    "add_evidence": Operation((), internal=_internal(E.ADD_FIELDS), what="records a source passage"),
    "remove_evidence": Operation((), internal=_internal(E.REMOVE_FIELDS), what="removes a source"),
    "move_evidence": Operation((), internal=_internal(E.MOVE_FIELDS),
                               what="moves a source to the object that stays (merges)"),
    "set_evidence_review": Operation((), internal=_internal(E.REVIEW_FIELDS),
                                     what="records a person's review of a source"),
}
BATCH_OPS: tuple[str, ...] = tuple(name for name, op in OPERATIONS.items() if op.batch)


def markdown_table() -> str:
    """The operations a model may batch, for the documentation."""
    rows = ["| operation | required | optional | what it does |", "|---|---|---|---|"]
    for name in BATCH_OPS:
        op = OPERATIONS[name]
        optional = ", ".join(f"`{f}`" for f in (*op.optional, *op.guards)) or "—"
        rows.append(f"| `{name}` | {', '.join(f'`{f}`' for f in op.required)} | {optional} | {op.what} |")
    return "\n".join(rows)
