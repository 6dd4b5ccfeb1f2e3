"""From the model's per-chunk answers to a reviewable plan, and from a plan to ONE batch of ops.

``collect_chunk`` turns one chunk's answer into mentions and relation claims, grounding every quote
(``grounding``) and mapping every type (``vocabulary``); ``resolution.resolve_mentions`` runs them through the
``Resolver`` and ``lay_out`` produces a ``Plan``: plain JSON-able items, each with its source passage, its risk
and why, and ``include`` (what the review panel's tick boxes and the review file edit).
``plan_ops`` makes the store batch: ``add_object`` for new things (ids minted by the store, the
model's refs never reach it), ``update_object`` on existing ones for what a merge adds (aliases,
new properties, recorded conflicts — never an overwrite), ``add_relation`` for new relations, and
``add_evidence`` for every grounded quote (the store skips a source a target already has, so
re-extracting a document adds nothing). One batch → one change → one revert.

Risk, highest first: an item whose quote did not align (it goes to review and is NOT written
unless the person ticks it), a fuzzy or model-decided merge, an object of a new type.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from cks_desktop.extraction.chunking import Chunk
from cks_desktop.extraction.boilerplate import inside
from cks_desktop.extraction.grounding import Normalised, align, ground
from cks_desktop.extraction.resolution import Entity, Existing, Mention, Pair, Resolver
from cks_desktop.extraction.vocabulary import EXTRACTED_TYPE, NEW_TYPES_WARNING, Vocabulary
from cks_desktop.graph.validation import MAX_NAME, MAX_TYPE
from cks_desktop.llm.structured import key_values

ALIASES = "aliases"
DESCRIPTION = "description"
CONFLICTS = "conflicting_values"
RISK_UNALIGNED = 3
RISK_MERGE = 2
RISK_NEW_TYPE = 1
PLAN_VERSION = 1

# What one part's answer may write. A model may say anything: 10,004 objects from 100 characters,
# a 5 MB value, 10,000 properties on one object. Objects and relations are bounded by the part's
# length (a floor for short parts), values and counts by what a person could review.
OBJECTS_FLOOR = 30  # objects one part may name, however short
CHARS_PER_OBJECT = 20  # beyond the floor: one object per this many characters of the part
RELATIONS_FLOOR = 60
CHARS_PER_RELATION = 10
MAX_PROPERTIES = 100  # properties of one object from one answer
MAX_PROPERTY_VALUE = 10_000  # characters of one property value (and of a description)
MAX_ALIASES = 20
MIN_NAME_CHARS = 3  # a shorter name is looked for as written (grounding aligns 3+ characters)


@dataclass
class Evidence:
    """One source of a fact: document span (None when the quote did not align) and quote."""

    document_id: str
    chunk_index: int
    start: int | None
    end: int | None
    page: int | None
    quote: str
    alignment: str  # "exact" | "fuzzy" | "unaligned"
    model_quote: str = ""


@dataclass
class RelationClaim:
    chunk: int
    source: int  # entity index (resolver)
    target: int
    type: str
    evidence: Evidence


@dataclass
class ChunkResult:
    mentions: list[Mention] = field(default_factory=list)
    relations: list[tuple[str, str, str, Evidence]] = field(default_factory=list)  # (src ref, dst ref, type, ev)
    skipped: list[str] = field(default_factory=list)


_RESERVED = frozenset((ALIASES, DESCRIPTION, EXTRACTED_TYPE, CONFLICTS))  # the app writes these itself


def part_limits(chars: int) -> tuple[int, int]:
    """(objects, relations) one answer may write for a part of ``chars`` characters."""
    return max(OBJECTS_FLOOR, chars // CHARS_PER_OBJECT), max(RELATIONS_FLOOR, chars // CHARS_PER_RELATION)


def _props(items: Any, name: str, skipped: list[str]) -> dict[str, Any]:
    """The answer's properties for one object, at most ``MAX_PROPERTIES`` of at most
    ``MAX_PROPERTY_VALUE`` characters each (what is left out is noted in ``skipped``)."""
    out: dict[str, Any] = {}
    too_long = 0
    given = key_values(items, skip=_RESERVED)
    for key, value in given.items():
        text = str(value)
        if len(key) > MAX_TYPE or len(text) > MAX_PROPERTY_VALUE:
            too_long += 1
        elif len(out) < MAX_PROPERTIES:
            out[key] = text
    if too_long:
        skipped.append(f"{too_long} propert{'y' if too_long == 1 else 'ies'} of {name[:60]!r} longer than "
                       f"{MAX_PROPERTY_VALUE:,} characters (left out)")
    extra = len(given) - too_long - len(out)
    if extra > 0:
        skipped.append(f"{extra:,} properties of {name[:60]!r} past the first {MAX_PROPERTIES} (left out)")
    return out


def _evidence(quote: str, chunk: Chunk, document_id: str, page_starts: tuple[int, ...], norm: Normalised,
              hint: int | None) -> Evidence:
    placed = ground(quote, chunk.text, chunk.start, page_starts, hint=hint, norm=norm)
    if placed is None:
        return Evidence(document_id, chunk.index, None, None, None, quote.strip(), "unaligned", quote)
    return Evidence(document_id, chunk.index, placed.start, placed.end, placed.page, placed.quote,
                    placed.alignment, quote if quote != placed.quote else "")


def relation_type(said: str) -> str:
    words = [w for w in "".join(c if c.isalnum() else " " for c in said.strip()).split()]
    return "_".join(w.casefold() for w in words) or "related_to"


def _named_in(name: str, chunk: Chunk, norm: Normalised) -> bool:
    """The name occurs in the part (as written, in other spacing or case, or nearly: a typo)."""
    if len(name.strip()) < MIN_NAME_CHARS:
        return name.strip().casefold() in chunk.text.casefold()
    return align(name, chunk.text, norm=norm) is not None


def _only_in_boilerplate(names: list[str], chunk: Chunk, boilerplate: Sequence[tuple[int, int]]) -> bool:
    """Every occurrence of every name in the part lies in boilerplate (and there is one)."""
    found = False
    for name in names:
        at = chunk.text.find(name)
        while at >= 0:
            found = True
            if not inside(boilerplate, chunk.start + at, chunk.start + at + len(name)):
                return False
            at = chunk.text.find(name, at + 1)
    return found


def collect_chunk(answer: dict[str, Any], chunk: Chunk, document_id: str, page_starts: tuple[int, ...],
                  vocab: Vocabulary, boilerplate: Sequence[tuple[int, int]] = ()) -> ChunkResult:
    """One chunk's answer as mentions and relation claims, every quote grounded. An object or
    relation whose source is in ``boilerplate`` (running lines, site chrome), or an object named only
    there, is left out; an object whose name is nowhere in the part is held for review."""
    out = ChunkResult()
    dropped: set[str] = set()
    norm = Normalised(chunk.text)
    refs: set[str] = set()
    max_objects, max_relations = part_limits(len(chunk.text))
    objects = [o for o in answer.get("objects") or [] if isinstance(o, dict)]
    if len(objects) > max_objects:
        out.skipped.append(f"{len(objects) - max_objects:,} more objects than part {chunk.index + 1} "
                           f"({len(chunk.text):,} characters) can name; the first {max_objects} were kept")
    for obj in objects[:max_objects]:
        name, said = str(obj.get("name", "")).strip(), str(obj.get("type", "")).strip()
        ref = str(obj.get("ref", "")).strip() or name
        if not name or ref in refs:
            out.skipped.append(f"an object without a name or with a repeated ref ({ref[:60] or '?'})")
            continue
        type_, _mapped = vocab.map(said)
        if len(name) > MAX_NAME or len(type_) > MAX_TYPE:
            what = f"name is {len(name):,}" if len(name) > MAX_NAME else f"type is {len(type_):,}"
            out.skipped.append(f"the object {name[:60]!r}: its {what} characters long (at most "
                               f"{MAX_NAME if len(name) > MAX_NAME else MAX_TYPE}); left out")
            continue
        refs.add(ref)
        at = chunk.text.find(name)
        ev = _evidence(str(obj.get("quote", "")) or name, chunk, document_id, page_starts, norm, at if at >= 0 else None)
        aliases = [str(a).strip() for a in obj.get("aliases") or [] if str(a).strip() and str(a).strip() != name]
        aliases = [a for a in aliases if len(a) <= MAX_NAME][:MAX_ALIASES]
        if boilerplate and ((ev.start is not None and ev.end is not None and inside(boilerplate, ev.start, ev.end))
                            or _only_in_boilerplate([name, *aliases], chunk, boilerplate)):
            dropped.add(ref)
            out.skipped.append(f"the object {name[:60]!r} of part {chunk.index + 1}: from a running header or "
                               "footer or the site's navigation (left out)")
            continue
        held = not any(_named_in(n, chunk, norm) for n in [name, *aliases])
        description = str(obj.get("description", "")).strip()[:MAX_PROPERTY_VALUE]
        out.mentions.append(Mention(chunk=chunk.index, ref=ref, name=name, type=type_, said_type=said,
                                    description=description, aliases=aliases,
                                    properties=_props(obj.get("properties"), name, out.skipped), evidence=[ev],
                                    held=held))
    relations = [r for r in answer.get("relations") or [] if isinstance(r, dict)]
    if len(relations) > max_relations:
        out.skipped.append(f"{len(relations) - max_relations:,} more relations than part {chunk.index + 1} "
                           f"({len(chunk.text):,} characters) can state; the first {max_relations} were kept")
    for rel in relations[:max_relations]:
        src, dst = str(rel.get("source", "")).strip(), str(rel.get("target", "")).strip()
        if src in dropped or dst in dropped:
            continue
        if src not in refs or dst not in refs:
            out.skipped.append(f"a relation {src[:60]} → {dst[:60]} whose end is not an object of the answer")
            continue
        type_ = relation_type(str(rel.get("type", "")))
        if len(type_) > MAX_TYPE:
            out.skipped.append(f"a relation {src[:60]} → {dst[:60]} whose type is {len(type_):,} characters long "
                               f"(at most {MAX_TYPE}); left out")
            continue
        ev = _evidence(str(rel.get("quote", "")), chunk, document_id, page_starts, norm, None)
        if boilerplate and ev.start is not None and ev.end is not None and inside(boilerplate, ev.start, ev.end):
            continue  # a source in a running line or the site's chrome: never a source
        out.relations.append((src, dst, type_, ev))
    return out


@dataclass
class PlanItem:
    """One reviewable item: an object to add or merge, or a relation."""

    key: str  # "e3" (object) or "r5" (relation)
    kind: str  # "object" | "relation"
    action: str  # "add" | "merge" (object into an existing one) | "known" (relation already in the graph)
    name: str = ""
    type: str = ""
    existing_id: str | None = None
    source: str = ""  # relations: item keys of the ends
    target: str = ""
    aliases: list[str] = field(default_factory=list)
    description: str = ""
    properties: dict[str, Any] = field(default_factory=dict)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    said_types: list[str] = field(default_factory=list)
    merges: list[dict[str, Any]] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    risk: int = 0
    reasons: list[str] = field(default_factory=list)
    include: bool = True
    merge_into: str = ""  # the person's hand merge (review): fold this object into the item with that key


@dataclass
class Plan:
    """What one extraction would write, reviewable and serialisable (the review file)."""

    session_id: str
    document_id: str
    document_name: str
    objects: list[PlanItem] = field(default_factory=list)
    relations: list[PlanItem] = field(default_factory=list)
    pairs: list[dict[str, Any]] = field(default_factory=list)  # ambiguous pairs the model did not settle
    warnings: list[str] = field(default_factory=list)
    new_types: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    entity_keys: dict[str, int] = field(default_factory=dict)  # object item key → resolver entity (this run)

    def items(self) -> list[PlanItem]:
        return sorted([*self.objects, *self.relations], key=lambda i: (-i.risk, i.kind, i.key))

    def needs_review(self) -> list[PlanItem]:
        return [i for i in self.items() if i.risk >= RISK_UNALIGNED or not i.include]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["version"] = PLAN_VERSION
        data["objects"] = [asdict(i) for i in sorted(self.objects, key=lambda i: (-i.risk, i.key))]
        data["relations"] = [asdict(i) for i in sorted(self.relations, key=lambda i: (-i.risk, i.key))]
        return data

    @classmethod
    def from_json(cls, data: Any) -> "Plan":
        """A plan read back from a review file (edited by the person); bad shape → ValueError."""
        if not isinstance(data, dict) or data.get("version") != PLAN_VERSION:
            raise ValueError("is not a review file of this version of CKS Desktop")
        try:
            objects = [PlanItem(**item) for item in data["objects"]]
            relations = [PlanItem(**item) for item in data["relations"]]
            plan = cls(session_id=str(data["session_id"]), document_id=str(data["document_id"]),
                       document_name=str(data.get("document_name", "")), objects=objects, relations=relations,
                       pairs=list(data.get("pairs") or []), warnings=list(data.get("warnings") or []),
                       new_types=list(data.get("new_types") or []), skipped=list(data.get("skipped") or []),
                       stats=dict(data.get("stats") or {}))
            plan.entity_keys = {str(k): int(v) for k, v in dict(data.get("entity_keys") or {}).items()}
        except (KeyError, TypeError) as exc:
            raise ValueError(f"does not have the shape of a review file ({exc})") from None
        for item in [*objects, *relations]:
            if not isinstance(item.include, bool) or not all(isinstance(v, str) for v in (
                    item.key, item.name, item.type, item.merge_into, item.source, item.target, item.action)) \
                    or not (item.existing_id is None or isinstance(item.existing_id, str)):
                raise ValueError(f"has an item {item.key!r} whose include, name, type or merge_into is not valid")
            if not isinstance(item.evidence, list) or not all(_valid_source(ev) for ev in item.evidence) \
                    or not isinstance(item.aliases, list) or not isinstance(item.properties, dict) \
                    or not isinstance(item.merges, list) or not isinstance(item.conflicts, list):
                raise ValueError(f"has an item {item.key!r} whose sources, aliases or properties are not valid")
        return plan


def _valid_source(ev: Any) -> bool:
    def opt_int(v: Any) -> bool:
        return v is None or (isinstance(v, int) and not isinstance(v, bool))

    return (isinstance(ev, dict) and isinstance(ev.get("document_id"), str) and opt_int(ev.get("chunk_index"))
            and opt_int(ev.get("start")) and opt_int(ev.get("end")) and opt_int(ev.get("page"))
            and isinstance(ev.get("quote"), str) and ev.get("alignment") in ("exact", "fuzzy", "unaligned"))


def _ev_json(ev: Evidence) -> dict[str, Any]:
    """A source as the plan's JSON (every field is a scalar: ``asdict``'s deepcopy was ~40 % of the
    app's time per chunk in bench/documents.py)."""
    return {"document_id": ev.document_id, "chunk_index": ev.chunk_index, "start": ev.start, "end": ev.end,
            "page": ev.page, "quote": ev.quote, "alignment": ev.alignment, "model_quote": ev.model_quote}


def resolve_mentions(results: list[ChunkResult], resolver: Resolver) -> tuple[list[RelationClaim], list[str]]:
    """Every chunk's mentions through the resolver, in document order; relations on entity indexes."""
    claims: list[RelationClaim] = []
    skipped: list[str] = []
    for result in results:
        local: dict[str, int] = {}
        for m in result.mentions:
            local[m.ref] = resolver.add(m).index
        for src, dst, kind, ev in result.relations:
            claims.append(RelationClaim(ev.chunk_index, local[src], local[dst], kind, ev))
        skipped.extend(result.skipped)
    return claims, skipped


# Relation types whose direction the types of their ends say ("" : any type). A claim the other way
# round between ends of those types is turned (the model swapped them); types not listed take the
# direction most of their claims (this document's and the session's) have.
DIRECTIONS: dict[str, tuple[str, str]] = {
    "born_in": ("person", "place"), "lives_in": ("person", "place"), "died_in": ("person", "place"),
    "works_at": ("person", "organization"), "works_for": ("person", "organization"),
    "member_of": ("person", "organization"), "founded": ("person", "organization"),
    "captain_of": ("person", "ship"), "master_of": ("person", "ship"), "owner_of": ("", "ship"),
    "located_in": ("", "place"), "sailed_to": ("ship", "place"), "sailed_from": ("ship", "place"),
    "arrived_in": ("", "place"), "wrote_about": ("person", "event"), "attended": ("person", "event"),
    "opposed": ("person", ""), "built": ("organization", ""), "represents": ("person", "place"),
}


def _fits(kind: str, type_: str) -> bool:
    return not kind or kind == type_.casefold()


def direction_votes(claims: list[RelationClaim], resolver: Resolver,
                    existing_edges: dict[tuple[str, str, str], str]) -> dict[str, Counter[tuple[str, str]]]:
    """How often each relation type runs from one type of thing to another (claims and the graph)."""
    votes: dict[str, Counter[tuple[str, str]]] = {}
    types = {e.existing_id: e.type.casefold() for e in resolver.entities if e.existing_id}
    for src, kind, dst in existing_edges:
        if src in types and dst in types:
            votes.setdefault(kind, Counter())[(types[src], types[dst])] += 1
    for claim in claims:
        a, b = resolver.find(claim.source), resolver.find(claim.target)
        votes.setdefault(claim.type, Counter())[(a.type.casefold(), b.type.casefold())] += 1
    return votes


def turned(kind: str, a: Entity, b: Entity, votes: dict[str, Counter[tuple[str, str]]]) -> bool:
    """The claim a → b runs against its type's direction (and b → a runs with it)."""
    ta, tb = a.type.casefold(), b.type.casefold()
    if ta == tb:
        return False
    if kind in DIRECTIONS:
        src, dst = DIRECTIONS[kind]
        return not (_fits(src, ta) and _fits(dst, tb)) and _fits(src, tb) and _fits(dst, ta)
    counts = votes.get(kind)
    return counts is not None and counts[(tb, ta)] > counts[(ta, tb)]


def sourced_here(claim: RelationClaim, a: Entity, b: Entity,
                 sourced_edges: Mapping[tuple[int, int], Collection[tuple[str, str, str]]]) -> tuple[Entity, Entity] | None:
    """The ends, in the graph's order, of the relation between ``a`` and ``b`` of the claim's type
    that this document already sources at the claim's own quote (None: there is none). One passage
    cannot state a relation both ways, so a claim there is that relation, however the model or the
    majority of the session's claims (``turned``) would order its ends this time."""
    start, end = claim.evidence.start, claim.evidence.end
    if a.existing_id is None or b.existing_id is None or start is None or end is None:
        return None
    here = sourced_edges.get((start, end), ())
    for x, y in ((a, b), (b, a)):
        if (x.existing_id, claim.type, y.existing_id) in here:
            return x, y
    return None


def lay_out(session_id: str, document_id: str, document_name: str, claims: list[RelationClaim], skipped: list[str],
            resolver: Resolver, vocab: Vocabulary, existing_edges: dict[tuple[str, str, str], str], *,
            sourced_edges: Mapping[tuple[int, int], Collection[tuple[str, str, str]]] | None = None) -> Plan:
    """The plan of resolved entities and relation claims (after the model's verdicts, if any).
    ``sourced_edges``: the relations this document already sources, by span (``runner.load_context``):
    a claim at one of them is that relation, in its direction (``sourced_here``), so extracting the
    document again adds no relation the other way round."""
    plan = Plan(session_id, document_id, document_name, skipped=list(skipped))
    keys: dict[int, str] = {}
    for ent in resolver.live():
        if not ent.mentions:
            continue  # an existing object this document does not mention
        keys[ent.index] = f"e{len(keys) + 1}"
        plan.entity_keys[keys[ent.index]] = ent.index
        plan.objects.append(_object_item(keys[ent.index], ent, vocab))
    seen: dict[tuple[int, str, int], PlanItem] = {}
    votes = direction_votes(claims, resolver, existing_edges)
    for claim in claims:
        a, b = resolver.find(claim.source), resolver.find(claim.target)
        if a.index == b.index:
            continue  # both ends turned out to be one thing: no self-link
        again = sourced_here(claim, a, b, sourced_edges) if sourced_edges else None
        if again is not None:
            a, b = again  # the relation this very quote already sources: its direction, not a new edge
        elif turned(claim.type, a, b, votes):
            a, b = b, a  # the model swapped the ends: the types say which way the relation runs
        triple = (a.index, claim.type, b.index)
        ev = _ev_json(claim.evidence)
        if triple in seen:
            if ev not in seen[triple].evidence:
                seen[triple].evidence.append(ev)
            continue
        known = existing_edges.get((a.existing_id, claim.type, b.existing_id)) \
            if a.existing_id is not None and b.existing_id is not None else None
        item = PlanItem(key=f"r{len(seen) + 1}", kind="relation", action="known" if known else "add",
                        name=claim.type, type=claim.type, existing_id=known, source=keys[a.index],
                        target=keys[b.index], evidence=[ev])
        seen[triple] = item
        plan.relations.append(item)
    for item in plan.relations:
        _score(item)
    plan.new_types = sorted({o.type for o in plan.objects if o.action == "add" and vocab.is_new(o.type)})
    if len(plan.new_types) > NEW_TYPES_WARNING:
        plan.warnings.append(f"This document would add {len(plan.new_types)} new types "
                             f"({', '.join(plan.new_types[:8])}{', …' if len(plan.new_types) > 8 else ''}); "
                             "check them in the review before applying.")
    for item in plan.objects:
        if item.action == "add" and item.type in plan.new_types:
            item.risk = max(item.risk, RISK_NEW_TYPE)
            item.reasons.append(f"new type {item.type}")
    plan.pairs = [_pair_json(p, resolver, keys) for p in resolver.pairs if p.verdict in ("unsure", "pending")
                  and resolver.find(p.a).index != resolver.find(p.b).index]
    return plan


def _object_item(key: str, ent: Entity, vocab: Vocabulary) -> PlanItem:
    unique: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    for m in ent.mentions:
        for ev in m.evidence:
            mark = (ev.document_id, ev.chunk_index, ev.start, ev.end, ev.page, ev.quote, ev.alignment, ev.model_quote)
            if mark not in seen:  # a set, not `in list`: an entity with many sources was quadratic
                seen.add(mark)
                unique.append(_ev_json(ev))
    said = sorted(t for t in ent.said_types if t and t != ent.type)
    item = PlanItem(key=key, kind="object", action="add" if ent.is_new else "merge", name=ent.name, type=ent.type,
                    existing_id=ent.existing_id, aliases=list(ent.aliases), description=ent.description,
                    properties=dict(ent.properties), conflicts=list(ent.conflicts), said_types=said,
                    merges=[asdict(r) for r in ent.merges if r.tier != "exact" or r.name != ent.name],
                    evidence=unique)
    _score(item)
    if ent.held:
        item.risk, item.include = RISK_UNALIGNED, False
        item.reasons.append("its name is nowhere in its part (held for review)")
    return item


def _score(item: PlanItem) -> None:
    aligned = [e for e in item.evidence if e["alignment"] != "unaligned"]
    if not aligned:
        item.risk, item.include = RISK_UNALIGNED, False
        item.reasons.append("its quote was not found in the document")
    elif len(aligned) < len(item.evidence):
        item.reasons.append(f"{len(item.evidence) - len(aligned)} of its quotes were not found")
    risky = [m for m in item.merges if m["tier"] in ("fuzzy", "model")]
    if risky:
        item.risk = max(item.risk, RISK_MERGE)
        item.reasons.append(", ".join(f"{m['tier']} merge of {m['name']!r}" for m in risky[:3]))
    if any(e["alignment"] == "fuzzy" for e in aligned):
        item.reasons.append("a quote matched only approximately")


def _pair_json(p: Pair, resolver: Resolver, keys: dict[int, str]) -> dict[str, Any]:
    a, b = resolver.find(p.a), resolver.find(p.b)
    return {"a": keys.get(a.index, ""), "b": keys.get(b.index, ""), "a_name": a.name, "b_name": b.name,
            "b_existing_id": b.existing_id, "reason": p.reason, "score": p.score,
            "a_identity": a.identity, "b_identity": b.identity}


# -- the batch -----------------------------------------------------------------------------------------

def _merged_list(current: Any, extra: list[Any]) -> list[Any]:
    out = list(current) if isinstance(current, list) else ([] if current is None else [current])
    seen = {json.dumps(v, sort_keys=True).casefold() for v in out}
    for value in extra:
        key = json.dumps(value, sort_keys=True).casefold()
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def split_identities(item: PlanItem, names: list[str] | None = None) -> list[tuple[str, str]]:
    """The "these are different" identity pairs that splitting ``item``'s merges records: each merged
    name (all of them, or ``names``) against the kept object (``resolution.Entity.identity``)."""
    from cks_desktop.extraction.resolution import name_key

    keep = f"o:{item.existing_id}" if item.existing_id else f"n:{item.type.casefold()}:{name_key(item.name)}"
    chosen = [str(m.get("name", "")) for m in item.merges] if names is None else names
    return [(f"n:{item.type.casefold()}:{name_key(n)}", keep) for n in chosen if n]


def fold_hand_merges(plan: Plan) -> list[str]:
    """Apply the person's hand merges (``merge_into``) in place: names, properties (conflicts kept),
    sources and relations move to the kept item; the folded item is not written. One level only
    (a folded item is never itself a target): no chains. Returns sentences for what was refused."""
    by_key = {o.key: o for o in plan.objects}
    folded: dict[str, str] = {}
    refused: list[str] = []
    for item in plan.objects:
        target = by_key.get(item.merge_into) if item.merge_into else None
        if not item.merge_into:
            continue
        if target is None or target is item or target.merge_into or item.action != "add":
            refused.append(f"{item.key} cannot be merged into {item.merge_into!r} (no such object, itself, "
                           "an object that is merged away too, or an object already in the graph: use merge_objects for those)")
            continue
        for alias in [item.name, *item.aliases]:
            if alias.casefold() != target.name.casefold() and alias.casefold() not in {a.casefold() for a in target.aliases}:
                target.aliases.append(alias)
        for k, v in item.properties.items():
            if k not in target.properties:
                target.properties[k] = v
            elif target.properties[k] != v:
                target.conflicts.append({"property": k, "kept": target.properties[k], "value": v, "source": item.name})
        target.conflicts.extend(item.conflicts)
        target.evidence.extend(ev for ev in item.evidence if ev not in target.evidence)
        target.merges.append({"name": item.name, "into": target.name, "tier": "person", "score": 1.0,
                              "chunk": None, "existing": target.existing_id is not None})
        item.include = False
        item.merge_into = ""  # done: folding again changes nothing
        folded[item.key] = target.key
    for rel in plan.relations:
        rel.source, rel.target = folded.get(rel.source, rel.source), folded.get(rel.target, rel.target)
        if rel.source == rel.target:
            rel.include = False  # the two ends became one thing: no self-link
    return refused


def plan_ops(plan: Plan, existing: dict[str, Existing], existing_props: dict[str, dict[str, Any]],
             *, evidence: bool = True, review: str = "auto") -> list[dict[str, Any]]:
    """The store batch of the plan's included items (one change; ``runner.apply_plan`` folds the
    person's hand merges first)."""
    ops: list[dict[str, Any]] = []
    ref: dict[str, str] = {}
    included = {o.key for o in plan.objects if o.include}
    for item in plan.objects:
        if not item.include:
            continue
        if item.action == "merge" and item.existing_id:
            ref[item.key] = item.existing_id
            current = existing_props.get(item.existing_id, {})
            name = existing[item.existing_id].name if item.existing_id in existing else item.name
            to_set: dict[str, Any] = {}
            aliases = [a for a in item.aliases if a.casefold() != name.casefold()]
            if aliases:
                merged = _merged_list(current.get(ALIASES), aliases)
                if merged != current.get(ALIASES):
                    to_set[ALIASES] = merged
            conflicts = list(item.conflicts)
            for k, v in item.properties.items():
                if k not in current:
                    to_set[k] = v
                elif current[k] != v:
                    conflicts.append({"property": k, "kept": current[k], "value": v, "source": plan.document_name})
            if item.description and DESCRIPTION not in current:
                to_set[DESCRIPTION] = item.description
            if conflicts:
                merged_c = _merged_list(current.get(CONFLICTS), conflicts)
                if merged_c != current.get(CONFLICTS):
                    to_set[CONFLICTS] = merged_c
            if to_set:
                ops.append({"op": "update_object", "ref": item.existing_id, "set_properties": to_set})
        else:
            label = f"${item.key}"
            ref[item.key] = label
            props: dict[str, Any] = dict(item.properties)
            if item.aliases:
                props[ALIASES] = list(item.aliases)
            if item.description:
                props[DESCRIPTION] = item.description
            if item.said_types:
                props[EXTRACTED_TYPE] = item.said_types[0] if len(item.said_types) == 1 else item.said_types
            if item.conflicts:
                props[CONFLICTS] = item.conflicts
            ops.append({"op": "add_object", "type": item.type, "name": item.name, "properties": props, "label": label})
        if evidence:
            ops.extend(_evidence_ops("object", ref[item.key], item, review))
    for item in plan.relations:
        if not item.include or item.source not in included or item.target not in included:
            continue
        if item.action == "known" and item.existing_id:
            if evidence:  # already in the graph: only its sources are new (the store skips known ones)
                ops.extend(_evidence_ops("relation", item.existing_id, item, review))
            continue
        label = f"${item.key}"
        ops.append({"op": "add_relation", "source": ref[item.source], "target": ref[item.target], "type": item.type,
                    "label": label})
        if evidence:
            ops.extend(_evidence_ops("relation", label, item, review))
    return ops


def _evidence_ops(kind: str, target: str, item: PlanItem, review: str) -> list[dict[str, Any]]:
    out = []
    for ev in item.evidence:
        aligned = ev["alignment"] != "unaligned"
        if not aligned and item.risk < RISK_UNALIGNED:
            continue  # an extra quote that did not align: the item has grounded ones
        out.append({"op": "add_evidence", kind: target, "document_id": ev["document_id"],
                    "chunk_index": ev["chunk_index"], "start": ev["start"] if aligned else None,
                    "end": ev["end"] if aligned else None, "page": ev["page"] if aligned else None,
                    "quote": ev["quote"], "alignment": ev["alignment"],
                    "review": ("accepted" if not aligned else review), "origin": "extraction"})
    return out
