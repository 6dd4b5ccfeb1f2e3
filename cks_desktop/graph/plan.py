"""A validated batch: what the change records and what the writer writes.

``counts`` feed the summary line ("adds 2 objects, 1 relation; changes 1
property") and the tool results; ``inverses`` hold each op's undo ops in
forward order, reversed as a whole when read.
"""

from __future__ import annotations

from typing import Any

from cks_desktop.graph.evidence import EvidenceView
from cks_desktop.graph.overlay import Overlay

COUNT_KEYS = ("objects_added", "objects_updated", "objects_removed", "objects_reused", "objects_renamed",
              "objects_retyped", "relations_added", "relations_updated", "relations_removed",
              "properties_changed", "types_defined", "types_removed", "evidence_added", "evidence_removed",
              "evidence_moved", "evidence_reviewed")


class Plan:
    """The validated batch: what to record and what to write."""

    def __init__(self, overlay: Overlay) -> None:
        self.overlay = overlay
        self.evidence = EvidenceView(overlay.conn, overlay.session_id)  # sources (graph/evidence.py)
        self.resolved: list[dict[str, Any]] = []
        # per resolved op: its properties already encoded as JSON (add ops), or None
        self.props_json: list[str | None] = []
        self.inverses: list[list[dict[str, Any]]] = []  # per op, in forward order
        self.created: dict[str, str] = {}
        self.counts: dict[str, int] = dict.fromkeys(COUNT_KEYS, 0)

    @property
    def inverse_ops(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for inv in reversed(self.inverses):
            out.extend(inv)
        return out

    @property
    def is_noop(self) -> bool:
        c = self.counts
        return not any(v for k, v in c.items() if k != "objects_reused")
