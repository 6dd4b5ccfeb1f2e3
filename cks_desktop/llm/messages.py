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
    # Images the tool returned: sent as images to a model that takes them;
    # ``content`` keeps the note a model without images reads instead.
    images: tuple["ImagePart", ...] = ()


@dataclass(frozen=True)
class ImagePart:
    """An image in the chat (a tool's or the person's), stored once per session (``agent/images.py``).

    The transcript keeps only the reference (``image_id``: the sha256 of the bytes, with type and
    size); ``data`` is filled from the session's image store before a request is built, and is
    empty in a message read straight from JSON. An adapter whose model takes no images sends
    ``note`` instead.
    """

    image_id: str
    media_type: str
    width: int = 0
    height: int = 0
    size: int = 0
    data: bytes = field(default=b"", repr=False, compare=False)
    kind: Literal["image"] = "image"

    @property
    def note(self) -> str:
        return f"[image: {self.media_type}, {self.width}×{self.height}, {self.size:,} bytes]"

    def to_json(self) -> dict[str, Any]:
        return {"kind": "image", "id": self.image_id, "media_type": self.media_type, "width": self.width,
                "height": self.height, "size": self.size}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ImagePart":
        def number(key: str) -> int:
            value = data.get(key)
            return int(value) if isinstance(value, int) else 0

        return cls(str(data.get("id") or ""), str(data.get("media_type") or ""), number("width"),
                   number("height"), number("size"))


@dataclass(frozen=True)
class Reasoning:
    """The model's thinking in an assistant turn: shown collapsed above the
    answer, never part of its text, stored with the transcript.

    ``text``: what the provider showed of the thinking (Anthropic's thinking, Ollama's
    ``thinking``, OpenAI-compatible ``reasoning_content``, Gemini's thought summary); may be
    empty. ``signature``: opaque data the vendor wants back unchanged with the turn
    (Anthropic's thinking-block signature, Gemini's thought signature). ``redacted``:
    an Anthropic ``redacted_thinking`` block's encrypted ``data`` (no visible text).
    ``origin``: the adapter that produced it (``ProviderProfile.name``, plus the server
    for OpenAI-compatible ones); an adapter sends a part back only to its own origin,
    so switching providers mid-chat never sends one vendor's signature to another.
    ``wire_field``: the wire field it came in where servers differ (``reasoning_content`` or
    ``reasoning``), so it goes back under the same name. ``seconds``: how long the model
    thought (the chat's "Thought for 12 s").
    """

    text: str = ""
    signature: str | None = None
    redacted: str | None = None
    origin: str = ""
    wire_field: str = ""
    seconds: float | None = None
    kind: Literal["reasoning"] = "reasoning"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": "reasoning", "text": self.text}
        for name in ("signature", "redacted", "seconds"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        for name in ("origin", "wire_field"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Reasoning":
        seconds = data.get("seconds")
        return cls(str(data.get("text") or ""), data.get("signature") or None, data.get("redacted") or None,
                   str(data.get("origin") or ""), str(data.get("wire_field") or ""),
                   float(seconds) if isinstance(seconds, (int, float)) else None)


Part = Text | ToolCallPart | ToolResultPart | Reasoning | ImagePart


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

    @property
    def images(self) -> list[ImagePart]:
        """The message's own images (the person's), not those inside tool results."""
        return [p for p in self.parts if isinstance(p, ImagePart)]

    @property
    def reasoning(self) -> list[Reasoning]:
        """The thinking parts (never in ``text``)."""
        return [p for p in self.parts if isinstance(p, Reasoning)]

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
            elif isinstance(p, Reasoning):
                parts.append(p.to_json())
            elif isinstance(p, ImagePart):
                parts.append(p.to_json())
            else:
                result: dict[str, Any] = {"kind": "tool_result", "call_id": p.call_id, "name": p.name,
                                          "content": p.content, "is_error": p.is_error}
                if p.images:
                    result["images"] = [image.to_json() for image in p.images]
                parts.append(result)
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
                images = tuple(ImagePart.from_json(i) for i in p.get("images") or () if isinstance(i, dict))
                parts.append(ToolResultPart(p["call_id"], p.get("name", ""), p["content"], bool(p.get("is_error")),
                                            images=images))
            elif kind == "image":
                parts.append(ImagePart.from_json(p))
            elif kind == "reasoning":
                parts.append(Reasoning.from_json(p))
        return cls(data["role"], parts)


@dataclass(frozen=True)
class ToolDef:
    """A tool as offered to a model: wire-safe name, description, JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]
