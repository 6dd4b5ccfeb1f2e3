"""Each visible session's graph as MCP resources.

    cks://sessions/{id}/graph.json       the whole graph in the app's own format (cks-graph v1, or
                                         v2 with its sources), plus "cited_documents": each
                                         document a source cites, by id, name and size, with
                                         the URI below (the text is NOT inlined)
    cks://sessions/{session}/documents/{document}   (template) one document's extracted text
                                         (text/plain); {document} is its id (sha256)
    cks://sessions/{id}/summary.md       a short Markdown summary: counts, types, the most
                                         connected objects, the latest changes
    cks://sessions/{session}/objects/{ref}   (template) one object with its properties and its
                                         relations, as JSON; {session} is an id or a title,
                                         {ref} an object id or name (percent-encoded)

Why documents are referenced, not inlined: a session's documents can be tens of megabytes
of text (PDFs of hundreds of pages), the graph resource is read whole by hosts that only
want the facts, and an MCP message that size is slow over stdio (the SDK's line buffer)
and may exceed a host's context; a host that wants a passage's document reads that one
URI. (``sessions export`` and ``storage export`` files do carry the documents' text: they
are for moving a session, not for a model's context.) The key is ``cited_documents``, not
``documents``: the import reads a ``documents`` section as documents WITH text.

``resources/list`` names the two per session and then every object (id URIs), a page of
``PAGE`` at a time. Reads run on a worker thread (a big graph's export takes a while) and
name only visible sessions: a URI of a session that is not shared is "not found", in the
same words as one that does not exist, so a host learns nothing about other sessions.

``keys_of``/``event_keys`` give the subscription keys a URI and a store event touch: the
live-update fan-out (``live.py``) compares those, so a host subscribed by name is told when
the object it named appears, and one subscribed by id when it changes or goes.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.shared.exceptions import MCPError

from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.formats.markdown import md_escape
from cks_desktop.serve.scope import ScopeError

if TYPE_CHECKING:
    from cks_desktop.graph.events import GraphChanged
    from cks_desktop.graph.model import Session
    from cks_desktop.serve.scope import SessionScope

SCHEME = "cks://sessions/"
TEMPLATE = "cks://sessions/{session}/objects/{ref}"
DOCUMENT_TEMPLATE = "cks://sessions/{session}/documents/{document}"
RESOURCE_NOT_FOUND = -32002  # the specification's code for an unknown resource
PAGE = 500
MOST_CONNECTED = 15
OBJECT_RELATIONS = 200  # relations named in one object's resource, each way


@dataclass(frozen=True)
class ResourceRef:
    session: str  # as written in the URI (an id or a title)
    kind: str  # "graph", "summary" or "object"
    ref: str = ""


def graph_uri(session_id: str) -> str:
    return f"{SCHEME}{session_id}/graph.json"


def summary_uri(session_id: str) -> str:
    return f"{SCHEME}{session_id}/summary.md"


def document_uri(session_id: str, document_id: str) -> str:
    return f"{SCHEME}{quote(session_id, safe='')}/documents/{quote(document_id, safe='')}"


def object_uri(session: str, ref: str) -> str:
    return f"{SCHEME}{quote(session, safe='')}/objects/{quote(ref, safe='')}"


def parse_uri(uri: str) -> ResourceRef:
    """The parts of one of our URIs; ``MCPError`` (invalid params) for anything else."""
    if not isinstance(uri, str) or not uri.startswith(SCHEME):
        raise MCPError(types.INVALID_PARAMS, f"Unknown resource {uri!r}: this server's resources start with {SCHEME}.",
                       {"uri": uri} if isinstance(uri, str) else None)
    rest = uri[len(SCHEME):]
    parts = rest.split("/")
    if len(parts) == 2 and parts[1] in ("graph.json", "summary.md") and parts[0]:
        return ResourceRef(unquote(parts[0]), "graph" if parts[1] == "graph.json" else "summary")
    if len(parts) == 3 and parts[1] in ("objects", "documents") and parts[0] and parts[2]:
        return ResourceRef(unquote(parts[0]), "object" if parts[1] == "objects" else "document", unquote(parts[2]))
    raise MCPError(types.INVALID_PARAMS, f"Unknown resource {uri!r}; the forms are {SCHEME}ID/graph.json, "
                                         f"{SCHEME}ID/summary.md, {TEMPLATE} and {DOCUMENT_TEMPLATE}.",
                   {"uri": uri})  # SEP-2164: the unknown URI, for the host to name


def not_found(uri: str, why: str = "") -> MCPError:
    return MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}" + (f" ({why})" if why else "") + ".",
                    {"uri": uri})


def session_of(scope: "SessionScope", ref: ResourceRef, uri: str) -> "Session":
    try:
        return scope.resolve(ref.session) if not scope.is_pinned else _pinned(scope, ref, uri)
    except ScopeError:
        raise not_found(uri, "no shared session has that title or id") from None


def _pinned(scope: "SessionScope", ref: ResourceRef, uri: str) -> "Session":
    session = scope.resolve(None)
    if ref.session not in (session.id,) and ref.session.strip().casefold() != session.title.strip().casefold():
        raise ScopeError("not the served session")
    return session


# -- listing -------------------------------------------------------------------------------------
def session_resources(session: "Session") -> list[types.Resource]:
    return [
        types.Resource(uri=graph_uri(session.id), name=f"{session.title} — graph", title=f"{session.title} (graph, JSON)",
                       description="The whole knowledge graph in CKS Desktop's own JSON format (cks-graph v1, v2 with "
                                   "sources); the documents they cite are listed by id and URI, not inlined.",
                       mime_type="application/json"),
        types.Resource(uri=summary_uri(session.id), name=f"{session.title} — summary",
                       title=f"{session.title} (summary)",
                       description="Counts, types, the most connected objects and the latest changes.",
                       mime_type="text/markdown"),
    ]


async def list_resources(scope: "SessionScope", cursor: str | None) -> types.ListResourcesResult:
    """Sessions' two resources first, then their objects; ``cursor`` is the offset into that list."""
    try:
        start = int(cursor) if cursor else 0
        if start < 0:
            raise ValueError
    except ValueError:
        raise MCPError(types.INVALID_PARAMS, f"Invalid cursor {cursor!r}; use the nextCursor of the last page.") \
            from None
    sessions = scope.sessions()

    def build() -> tuple[list[types.Resource], bool]:
        out: list[types.Resource] = []
        index = 0
        for s in sessions:
            for r in session_resources(s):
                if start <= index < start + PAGE:
                    out.append(r)
                index += 1
        for s in sessions:
            heads = scope.store.object_heads(s.id)
            if index + len(heads) <= start:
                index += len(heads)
                continue
            for oid, otype, name in heads:
                if index >= start + PAGE:
                    return out, True
                if index >= start:
                    out.append(types.Resource(uri=object_uri(s.id, oid), name=name, title=f"{name} ({otype})",
                                              description=f"{otype} in {s.title}", mime_type="application/json"))
                index += 1
        return out, False

    resources, more = await asyncio.to_thread(build)
    return types.ListResourcesResult(resources=resources, next_cursor=str(start + PAGE) if more else None)


def templates() -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
        uri_template=TEMPLATE, name="object", title="An object with its relations",
        description="One object of a shared session with its properties and relations, as JSON. {session} is a "
                    "session's title or id, {ref} an object's id or name (percent-encoded).",
        mime_type="application/json"), types.ResourceTemplate(
        uri_template=DOCUMENT_TEMPLATE, name="document", title="A document's text",
        description="The extracted text of one document of a shared session (what its sources' character spans "
                    "point at). {document} is the document's id, as graph.json's cited_documents lists it.",
        mime_type="text/plain")])


# -- reading ---------------------------------------------------------------------------------------
async def read(scope: "SessionScope", uri: str) -> types.ReadResourceResult:
    ref = parse_uri(uri)
    session = session_of(scope, ref, uri)
    store = scope.store

    def build() -> types.TextResourceContents:
        if ref.kind == "graph":
            return types.TextResourceContents(uri=uri, mime_type="application/json", text=graph_json(scope, session))
        if ref.kind == "document":
            return types.TextResourceContents(uri=uri, mime_type="text/plain", text=document_text(scope, session, uri,
                                                                                                ref.ref))
        if ref.kind == "summary":
            return types.TextResourceContents(uri=uri, mime_type="text/markdown", text=summary_markdown(scope, session))
        try:
            obj = store.resolve(session.id, ref.ref)
        except StoreError as exc:
            raise not_found(uri, str(exc).rstrip(".")) from None
        return types.TextResourceContents(uri=uri, mime_type="application/json",
                                          text=json.dumps(object_document(scope, session, obj), ensure_ascii=False,
                                                          indent=2))

    return types.ReadResourceResult(contents=[await asyncio.to_thread(build)])


def graph_json(scope: "SessionScope", session: "Session") -> str:
    """The json export with a ``cited_documents`` section (references, never the text)."""
    from cks_desktop.documents.exchange import with_section
    from cks_desktop.documents.store import DocumentStore
    from cks_desktop.provenance.queries import cited_documents

    data = scope.store.export(session.id, "json")
    counts = cited_documents(scope.store, session.id)
    if not counts:
        return data
    cited = [{"id": d.id, "name": d.name, "media_type": d.media_type, "size": d.size, "characters": d.characters,
              "pages": d.pages, "sources": counts[d.id], "uri": document_uri(session.id, d.id)}
             for d in DocumentStore(scope.store).list_documents(session.id) if d.id in counts]
    return with_section(data, "cited_documents", cited)


def document_text(scope: "SessionScope", session: "Session", uri: str, document_id: str) -> str:
    """One document's text, by its full id only (no prefixes or names: a URI names one thing)."""
    from cks_desktop.documents.store import DocumentStore

    docs = {d.id: d for d in DocumentStore(scope.store).list_documents(session.id)}
    if document_id not in docs:
        raise not_found(uri, "the session has no document with that id")
    return DocumentStore(scope.store).get(session.id, document_id).text


def object_document(scope: "SessionScope", session: "Session", obj: Any) -> dict[str, Any]:
    store = scope.store
    incoming, outgoing = store.relations_of(session.id, obj.id)
    names: dict[str, tuple[str, str]] = {}

    def other(object_id: str) -> dict[str, str]:
        if object_id not in names:
            try:
                o = store.get_object(session.id, object_id)
                names[object_id] = (o.type, o.name)
            except StoreError:
                names[object_id] = ("", "")
        otype, oname = names[object_id]
        return {"id": object_id, "type": otype, "name": oname}

    return {
        "session": {"id": session.id, "title": session.title},
        "object": obj.to_json(),
        "outgoing": [{"id": r.id, "type": r.type, "target": other(r.target_id), "properties": r.properties}
                     for r in outgoing[:OBJECT_RELATIONS]],
        "incoming": [{"id": r.id, "type": r.type, "source": other(r.source_id), "properties": r.properties}
                     for r in incoming[:OBJECT_RELATIONS]],
        "truncated": len(outgoing) > OBJECT_RELATIONS or len(incoming) > OBJECT_RELATIONS,
    }


def summary_markdown(scope: "SessionScope", session: "Session") -> str:
    store = scope.store
    counts = store.counts(session.id)
    stats = store.type_stats(session.id)
    degree: Counter[str] = Counter()
    for r in store.all_relations(session.id):
        degree[r.source_id] += 1
        degree[r.target_id] += 1
    out = [f"# {md_escape(session.title)}", "",
           f"Session `{session.id}`: {counts['objects']} objects, {counts['relations']} relations.", ""]
    for kind in ("object", "relation"):
        entries = [e for e in stats[f"{kind}_types"] if e.get("count")]
        if entries:
            out += [f"## {kind.capitalize()} types", ""]
            out += [f"- {md_escape(e['name'])}: {e['count']}" + (f" — {md_escape(e['description'])}"
                                                               if e.get("description") else "") for e in entries[:50]]
            out.append("")
    if degree:
        out += ["## Most connected objects", ""]
        for oid, n in degree.most_common(MOST_CONNECTED):
            try:
                o = store.get_object(session.id, oid)
            except StoreError:
                continue
            out.append(f"- **{md_escape(o.name)}** ({md_escape(o.type)}, `{o.id}`): {n} relations")
        out.append("")
    changes = store.list_changes(session.id, limit=5, with_ops=False)
    if changes:
        out += ["## Latest changes", ""]
        out += [f"- {c.at} by {md_escape(c.origin)}: {md_escape(c.summary or c.id)}" for c in changes]
        out.append("")
    return "\n".join(out)


# -- what a URI and an event touch (for subscriptions) ---------------------------------------------
Key = tuple[str, str, str]  # (session id, kind, id or casefolded name)


def keys_of(scope: "SessionScope", uri: str) -> Key:
    """The subscription key of a URI the host may see; ``MCPError`` otherwise."""
    ref = parse_uri(uri)
    session = session_of(scope, ref, uri)
    if ref.kind != "object":
        return (session.id, ref.kind, "")
    try:
        return (session.id, "object", scope.store.resolve(session.id, ref.ref).id)
    except StoreError:
        return (session.id, "object-name", ref.ref.strip().casefold())  # may appear later


def event_keys(event: "GraphChanged") -> tuple[set[Key], bool]:
    """The keys one graph change touches, and whether it may have touched any object's relations
    it does not name (a removed relation names no endpoints: then every object subscription of the
    session is told)."""
    sid = event.session_id
    keys: set[Key] = {(sid, "graph", ""), (sid, "summary", "")}
    for o in (*event.added_objects, *event.updated_objects):
        keys.add((sid, "object", o.id))
        keys.add((sid, "object-name", o.name.strip().casefold()))
    for oid in event.removed_objects:
        keys.add((sid, "object", oid))
    for r in (*event.added_relations, *event.updated_relations):
        keys.add((sid, "object", r.source_id))
        keys.add((sid, "object", r.target_id))
    return keys, bool(event.removed_relations or event.removed_objects)
