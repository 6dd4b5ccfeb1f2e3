"""Provider-neutral chat messages. Every provider adapter converts to and from these.

A ``tool`` message carries the results of the previous assistant turn's tool
calls, in the same order as the calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class Text:
    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class ToolCallPart:
    id: str
    name: str  # the internal tool name (e.g. "add_object", "mcp:files:read")
    arguments: dict[str, Any]
    kind: Literal["tool_call"] = "tool_call"
    # Provider data that must be sent back with the call (Gemini's thought signature). Optional.
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class ToolResultPart:
    call_id: str
    name: str
    content: str
    is_error: bool = False
    kind: Literal["tool_result"] = "tool_result"


Part = Text | ToolCallPart | ToolResultPart


@dataclass
class Message:
    role: Role
    parts: list[Part] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, Text))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if isinstance(p, ToolCallPart)]

    @property
    def tool_results(self) -> list[ToolResultPart]:
        return [p for p in self.parts if isinstance(p, ToolResultPart)]

    @classmethod
    def user(cls, text: str) -> "Message":
        return cls("user", [Text(text)])

    @classmethod
    def system(cls, text: str) -> "Message":
        return cls("system", [Text(text)])

    def to_json(self) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        for p in self.parts:
            if isinstance(p, Text):
                parts.append({"kind": "text", "text": p.text})
            elif isinstance(p, ToolCallPart):
                call: dict[str, Any] = {"kind": "tool_call", "id": p.id, "name": p.name, "arguments": p.arguments}
                if p.metadata:
                    call["metadata"] = p.metadata
                parts.append(call)
            else:
                parts.append(
                    {"kind": "tool_result", "call_id": p.call_id, "name": p.name,
                     "content": p.content, "is_error": p.is_error}
                )
        return {"role": self.role, "parts": parts}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Message":
        parts: list[Part] = []
        for p in data.get("parts", []):
            kind = p.get("kind")
            if kind == "text":
                parts.append(Text(p["text"]))
            elif kind == "tool_call":
                parts.append(ToolCallPart(p["id"], p["name"], dict(p.get("arguments") or {}),
                                          metadata=p.get("metadata") or None))
            elif kind == "tool_result":
                parts.append(ToolResultPart(p["call_id"], p.get("name", ""), p["content"], bool(p.get("is_error"))))
        return cls(data["role"], parts)


@dataclass(frozen=True)
class ToolDef:
    """A tool as offered to a model: wire-safe name, description, JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]
