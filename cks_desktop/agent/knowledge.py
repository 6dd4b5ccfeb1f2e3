"""``construct_knowledge``: turn a text into objects and relations, as one change.

The session's own model reads the text (through ``respond_json``, so every
provider returns the same validated shape) and names what it finds; this
module, not the model, turns the answer into store operations. That split
keeps the graph safe from a model's slips:

- Existing objects are reused by name: the model is shown the existing objects
  whose names occur in the text (and the known types); a name that matches
  exactly one existing object takes that object's name and type even if the
  model guessed another type; and every object is added with
  ``on_conflict: "update"``, so a match merges properties instead of failing
  or duplicating.
- Relation ends are resolved here: a label or name from the same answer, an
  object from an earlier chunk of the same text, or an existing object. An end
  that matches nothing is skipped and reported rather than failing the batch.
- Long texts are cut into chunks on paragraph boundaries; all chunks' answers
  become ONE ``store.apply`` batch, so the whole text is one change to revert.

The property schema is a list of key/value strings rather than a free-form
object because strict structured-output modes (OpenAI ``strict``, Gemini)
refuse open objects.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TYPE_CHECKING

from cks_desktop.llm.structured import KEY_VALUE_LIST, key_values
from cks_desktop.tools.builtin.refs import apply_ops, blocking
from cks_desktop.tools.context import ToolContext
from cks_desktop.tools.types import Policy, Scope, ToolError, ToolSpec

if TYPE_CHECKING:
    from cks_desktop.llm.provider import Provider
    from cks_desktop.tools.registry import ToolRegistry

CHUNK_CHARS = 6000
MAX_TEXT_CHARS = 200_000
MAX_EXISTING_SHOWN = 300

_PROPS = KEY_VALUE_LIST

EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "objects": {"type": "array", "items": {
            "type": "object",
            "properties": {"label": {"type": "string"}, "type": {"type": "string"}, "name": {"type": "string"},
                           "properties": _PROPS},
            "required": ["label", "type", "name", "properties"], "additionalProperties": False}},
        "relations": {"type": "array", "items": {
            "type": "object",
            "properties": {"source": {"type": "string"}, "target": {"type": "string"}, "type": {"type": "string"},
                           "properties": _PROPS},
            "required": ["source", "target", "type", "properties"], "additionalProperties": False}},
    },
    "required": ["objects", "relations"],
    "additionalProperties": False,
}

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "session_id": {"type": "string", "description": "The session. Filled in automatically."},
        "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS,
                 "description": "The text to read: notes, an article, a transcript."},
        "instructions": {"type": "string", "maxLength": 4000,
                         "description": "Optional guidance, e.g. \"only people and organisations\"."},
    },
    "required": ["session_id", "text"],
    "additionalProperties": False,
}

SYSTEM = """\
You extract a knowledge graph from a text. Answer with JSON only, in the given schema.
- objects: the people, organisations, places, works, concepts and events the text is about. \
"type" is a short singular noun in PascalCase (Person, Organization, City). "name" is how a person \
would write it. "label" is any short id unique within your answer. Add "properties" only for facts \
the text states (key in snake_case, value as text).
- relations: how the objects are connected. "source" and "target" are labels or names of objects \
in your answer or of existing objects. "type" is a short verb phrase in snake_case (works_at, born_in).
- When the text mentions one of the existing objects listed, use exactly that name and type.
- Reuse the existing types where they fit. Do not invent facts; leave out what the text does not say."""


def split_text(text: str, limit: int = CHUNK_CHARS) -> list[str]:
    """Cut on paragraph boundaries into pieces of at most ``limit`` characters.

    A paragraph longer than the limit is cut at sentence ends, and a sentence
    longer than the limit at the limit itself: no text is ever dropped.
    """
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    pieces: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if not para:
            continue
        if len(para) <= limit:
            pieces.append(para)
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", para):
            pieces.extend(sentence[i:i + limit] for i in range(0, len(sentence), limit))
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        joined = f"{current}\n\n{piece}" if current else piece
        if len(joined) <= limit:
            current = joined
        else:
            chunks.append(current)
            current = piece
    if current:
        chunks.append(current)
    return chunks


def _props(items: Any) -> dict[str, Any]:
    return key_values(items)


@dataclass
class _Batch:
    """The operations being built across all chunks, and what names resolve to."""

    existing: dict[str, list[Any]]  # casefolded name -> existing Objects
    outgoing: Callable[[str], set[tuple[str, str]]]  # object id -> {(relation type, target id)} in the graph
    ops: list[dict[str, Any]] = field(default_factory=list)
    by_name: dict[str, str] = field(default_factory=dict)  # casefolded name -> $label of an op in this batch
    op_of: dict[str, dict[str, Any]] = field(default_factory=dict)  # $label -> its add_object op
    known_id: dict[str, str] = field(default_factory=dict)  # $label -> id, for labels that reuse an object
    edges: set[tuple[str, str, str]] = field(default_factory=set)
    skipped: list[str] = field(default_factory=list)
    already_known: int = 0
    counter: int = 0

    def add_object(self, obj: dict[str, Any]) -> str | None:
        name, kind = str(obj.get("name", "")).strip(), str(obj.get("type", "")).strip()
        if not name or not kind:
            self.skipped.append(f"an object without a name or type ({obj.get('label') or '?'})")
            return None
        key = name.casefold()
        props = _props(obj.get("properties"))
        same_name = self.existing.get(key, [])
        if len(same_name) == 1:  # one existing object by that name: it is this one, whatever type was guessed
            name, kind = same_name[0].name, same_name[0].type
        label = self.by_name.get(key)
        if label is not None and self.op_of[label]["type"].casefold() == kind.casefold():
            self.op_of[label].setdefault("properties", {}).update(props)  # seen in an earlier chunk
            return label
        self.counter += 1
        label = f"$k{self.counter}"
        op: dict[str, Any] = {"op": "add_object", "type": kind, "name": name, "label": label,
                              "on_conflict": "update"}
        if props:
            op["properties"] = props
        self.ops.append(op)
        self.op_of[label] = op
        self.by_name.setdefault(key, label)
        reused = [o for o in same_name if o.type.casefold() == kind.casefold()]
        if len(reused) == 1:
            self.known_id[label] = str(reused[0].id)
        return label

    def end(self, ref: str, local: dict[str, str]) -> str | None:
        """A relation end as a store ref ($label or id), or None when it names nothing known."""
        ref = ref.strip()
        if ref in local:
            return local[ref]
        key = ref.casefold()
        if key in self.by_name:
            return self.by_name[key]
        matches = self.existing.get(key, [])
        if len(matches) == 1:
            return str(matches[0].id)
        return None

    def add_relation(self, rel: dict[str, Any], local: dict[str, str]) -> None:
        kind = str(rel.get("type", "")).strip()
        source, target = str(rel.get("source", "")), str(rel.get("target", ""))
        src, dst = self.end(source, local), self.end(target, local)
        if not kind:
            self.skipped.append(f"{source} → {target} (no relation type)")
            return
        if src is None or dst is None:
            missing = source if src is None else target
            self.skipped.append(f"{source} —{kind}→ {target} ({missing!r} is not a known object)")
            return
        if (src, kind.casefold(), dst) in self.edges:
            return
        self.edges.add((src, kind.casefold(), dst))
        src_id, dst_id = self.known_id.get(src, src), self.known_id.get(dst, dst)
        if not src_id.startswith("$") and not dst_id.startswith("$") \
                and (kind.casefold(), dst_id) in self.outgoing(src_id):
            self.already_known += 1  # the graph already says so: reading the same text twice adds nothing
            return
        op: dict[str, Any] = {"op": "add_relation", "source": src, "target": dst, "type": kind}
        props = _props(rel.get("properties"))
        if props:
            op["properties"] = props
        self.ops.append(op)


def _prompt(chunk: str, index: int, total: int, batch: _Batch, types: str, instructions: str) -> str:
    lowered = chunk.casefold()
    shown = [objs[0] for name, objs in batch.existing.items() if name and name in lowered][:MAX_EXISTING_SHOWN]
    earlier = [op for op in batch.op_of.values()][:MAX_EXISTING_SHOWN]
    lines = [f"- {o.name} ({o.type})" for o in shown] + [f"- {op['name']} ({op['type']})" for op in earlier]
    parts = [f"Known types: {types}" if types else "The graph has no types yet."]
    parts.append("Existing objects mentioned in this text:\n" + "\n".join(lines) if lines
                 else "None of the existing objects is mentioned in this text.")
    if instructions.strip():
        parts.append(f"Guidance from the person: {instructions.strip()}")
    where = f" (part {index} of {total})" if total > 1 else ""
    parts.append(f"The text{where}:\n<<<\n{chunk}\n>>>")
    return "\n\n".join(parts)


async def _ask(provider: "Provider", prompt: str) -> dict[str, Any]:
    from cks_desktop.llm.messages import Message
    from cks_desktop.llm.provider import ProviderError
    from cks_desktop.llm.structured import StructuredOutputError, respond_json

    try:
        answer = await respond_json(provider, [Message.user(prompt)], EXTRACTION_SCHEMA, system=SYSTEM)
    except ProviderError as exc:
        raise ToolError(f"The model could not be asked: {exc.message}") from None
    except StructuredOutputError as exc:
        raise ToolError(f"The model's answer did not have the expected shape: {exc}") from None
    return answer if isinstance(answer, dict) else {}


def _outgoing_reader(ctx: ToolContext) -> Callable[[str], set[tuple[str, str]]]:
    cache: dict[str, set[tuple[str, str]]] = {}

    def outgoing(object_id: str) -> set[tuple[str, str]]:
        if object_id not in cache:
            _, out = ctx.store.relations_of(ctx.session_id, object_id)
            cache[object_id] = {(r.type.casefold(), r.target_id) for r in out}
        return cache[object_id]

    return outgoing


async def construct_knowledge(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    provider = ctx.run.llm
    if provider is None:
        raise ToolError("No AI provider is set up for this chat, so the text cannot be read; "
                        "choose a provider in Settings → Providers.")
    chunks = split_text(str(args["text"]))
    if not chunks:
        raise ToolError("The text is empty; there is nothing to read.")
    objects = await blocking(ctx.store.all_objects, ctx.session_id)
    existing: dict[str, list[Any]] = {}
    for obj in objects:
        existing.setdefault(obj.name.casefold(), []).append(obj)
    stats = await blocking(ctx.store.type_stats, ctx.session_id, offload=False)
    types = ", ".join(f"{t['name']}" for t in (stats.get("object_types") or []) + (stats.get("relation_types") or []))
    batch = _Batch(existing, _outgoing_reader(ctx))
    for index, chunk in enumerate(chunks, start=1):
        answer = await _ask(provider, _prompt(chunk, index, len(chunks), batch, types, args.get("instructions", "")))
        local: dict[str, str] = {}
        for obj in answer.get("objects") or []:
            label = batch.add_object(obj)
            if label is not None:
                for key in (str(obj.get("label", "")).strip(), str(obj.get("name", "")).strip()):
                    if key:
                        local.setdefault(key, label)
        for rel in answer.get("relations") or []:
            batch.add_relation(rel, local)
    base = {"chunks": len(chunks), "skipped": batch.skipped, "already_known": batch.already_known}
    if not batch.ops:
        return {"change_id": None, "summary": "Found nothing to add.", **base}
    result = await apply_ops(ctx, batch.ops)
    return {"change_id": result.change.id if result.change else None,
            "summary": result.summary or "changes nothing", "counts": result.counts, **base}


async def construct_effects(args: dict[str, Any], ctx: ToolContext) -> dict[str, int]:
    """Adds objects and relations, and merges into existing objects (``on_conflict: update``),
    so it asks at least like add_object, update_object and add_relation."""
    return {"add_object": 1, "update_object": 1, "add_relation": 1}


CONSTRUCT_KNOWLEDGE = ToolSpec(
    name="construct_knowledge",
    title="Construct knowledge",
    description=("Read a text (notes, an article, a transcript) and add the objects and relations it "
                 "describes to the graph as one change, reusing existing objects by name. Use it for "
                 "anything longer than a few facts. Returns the change id and a summary."),
    input_schema=INPUT_SCHEMA,
    scopes=frozenset({Scope.PROVIDER_CALL, Scope.GRAPH_MUTATE}),
    default_policy=Policy.AUTO,
    llm_exposed=True,
    handler=construct_knowledge,
    effects=construct_effects,
)


def register_agent_tools(registry: "ToolRegistry") -> None:
    """Add the tools that need a model (they live above ``tools``, beside the loop)."""
    registry.register(CONSTRUCT_KNOWLEDGE, replace=True, checked_schema=True)  # a test checks it
