"""The graph's write operations are declared once (graph/operations.py): the batch planner accepts
exactly their fields, evolve_knowledge's schema offers exactly the batchable ones, and the
documentation's table is rendered from them."""

from __future__ import annotations

from pathlib import Path

from cks_desktop.graph.batch import OP_NAMES
from cks_desktop.graph.operations import BATCH_OPS, OPERATIONS, markdown_table
from cks_desktop.tools.builtin.evolve import OPERATION

DOCS = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def test_the_documentation_shows_the_table_of_operations() -> None:
    assert markdown_table() in DOCS.read_text(encoding="utf-8")


def test_the_planner_and_evolve_knowledge_read_the_table() -> None:
    assert OP_NAMES == tuple(OPERATIONS)
    assert OPERATION["properties"]["op"]["enum"] == list(BATCH_OPS)
    offered = set(OPERATION["properties"]) - {"op"}
    for name in BATCH_OPS:
        op = OPERATIONS[name]
        assert set(op.required) | set(op.optional) | set(op.guards) <= offered, name
        assert not set(op.internal) & offered, name  # ids and timestamps are never a model's to send
