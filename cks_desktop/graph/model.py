"""The knowledge-graph types (Qt-free, immutable)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Session:
    id: str
    title: str
    created_at: str  # ISO 8601 UTC
    instructions: str = ""  # the person's own instructions for the assistant in this session


@dataclass(frozen=True)
class Object:
    id: str
    session_id: str
    type: str
    name: str
    properties: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "name": self.name, "properties": self.properties}


@dataclass(frozen=True)
class Relation:
    id: str
    session_id: str
    type: str
    source_id: str
    target_id: str
    properties: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "source_id": self.source_id,
                "target_id": self.target_id, "properties": self.properties}


@dataclass(frozen=True)
class TypeDef:
    session_id: str
    kind: str  # "object" or "relation"
    name: str
    description: str = ""
    properties_schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class Change:
    """One applied batch. ``ops`` are the resolved operations (explicit ids);
    ``inverse_ops`` undo them when applied in order."""

    id: str
    session_id: str
    at: str
    origin: str
    ops: list[dict[str, Any]]
    inverse_ops: list[dict[str, Any]]
    summary: str = ""
    reverts: str | None = None  # the change this one reverted, if any

    def to_json(self, *, with_ops: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "at": self.at, "origin": self.origin,
                                "summary": self.summary, "reverts": self.reverts}
        if with_ops:
            data["ops"] = self.ops
        return data
