"""Prompts a host can offer its user, and completions for their arguments.

    extract_knowledge(text, session?)      turn a text into objects and relations (evolve_knowledge),
                                           reusing the session's types and existing objects
    summarize_graph(session?, focus?)      a summary of the graph, with the summary resource embedded
    explain_object(ref, session?)          an object and its neighbourhood, the object's resource embedded
    find_contradictions(session?, type?)   conflicting properties and relations, with the graph embedded
                                           (or the objects of one type)

Completions: ``session`` completes shared sessions' titles, ``ref`` object names of the
session named in the context (or the only shared one), ``type`` the session's object types;
the resource template's ``{session}`` and ``{ref}`` complete the same way. At most
``MAX_COMPLETIONS`` values, best first (prefix matches, then substring matches).
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from cks_desktop.graph.errors import StoreError
from cks_desktop.serve import resources
from cks_desktop.serve.scope import ScopeError

if TYPE_CHECKING:
    from cks_desktop.graph.model import Session
    from cks_desktop.serve.scope import SessionScope

MAX_COMPLETIONS = 100
EMBED_LIMIT = 400_000  # characters of graph JSON embedded in a prompt; past it, the host reads the resource

_SESSION = types.PromptArgument(name="session", description="The shared session (title or id); may be left out "
                                                            "when one session is shared.", required=False)
PROMPTS: list[types.Prompt] = [
    types.Prompt(name="extract_knowledge", title="Extract knowledge from a text",
                 description="Read a text and add what it says to the graph as typed objects and relations.",
                 arguments=[types.PromptArgument(name="text", description="The text to read.", required=True),
                            _SESSION]),
    types.Prompt(name="summarize_graph", title="Summarise the graph",
                 description="Summarise what the session's graph knows, optionally about one topic.",
                 arguments=[_SESSION, types.PromptArgument(name="focus", description="A topic to focus on.",
                                                           required=False)]),
    types.Prompt(name="explain_object", title="Explain an object and its neighbourhood",
                 description="Explain one object: its properties, its relations and why they matter.",
                 arguments=[types.PromptArgument(name="ref", description="The object's name or id.", required=True),
                            _SESSION]),
    types.Prompt(name="find_contradictions", title="Find contradictions",
                 description="Look for facts in the graph that contradict each other, and propose fixes.",
                 arguments=[_SESSION, types.PromptArgument(name="type", description="Only objects of this type.",
                                                           required=False)]),
]
_BY_NAME = {p.name: p for p in PROMPTS}


def list_prompts() -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=PROMPTS)


def _session(scope: "SessionScope", args: dict[str, str]) -> "Session":
    try:
        return scope.resolve(args.get("session") or None)
    except ScopeError as exc:
        raise MCPError(types.INVALID_PARAMS, str(exc)) from None


def _user(text: str) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))


def _embedded(uri: str, mime: str, text: str) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=types.EmbeddedResource(
        type="resource", resource=types.TextResourceContents(uri=uri, mime_type=mime, text=text)))


def _where(scope: "SessionScope", session: "Session") -> str:
    return "" if scope.is_pinned else f" Pass session={session.title!r} (or its id {session.id}) to every tool call."


async def get_prompt(scope: "SessionScope", name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    prompt = _BY_NAME.get(name)
    if prompt is None:
        raise MCPError(types.INVALID_PARAMS, f"Unknown prompt {name!r}; the prompts are: {', '.join(_BY_NAME)}.")
    args = {k: v for k, v in (arguments or {}).items() if isinstance(v, str)}
    missing = [a.name for a in prompt.arguments or [] if a.required and not args.get(a.name, "").strip()]
    if missing:
        raise MCPError(types.INVALID_PARAMS, f"The prompt {name} needs the argument {missing[0]!r}.")
    session = _session(scope, args)
    store = scope.store
    where = _where(scope, session)
    if name == "extract_knowledge":
        stats = await asyncio.to_thread(store.type_stats, session.id)
        known = ", ".join(e["name"] for e in stats["object_types"][:40]) or "none yet"
        rels = ", ".join(e["name"] for e in stats["relation_types"][:40]) or "none yet"
        return types.GetPromptResult(description=prompt.description, messages=[_user(
            f"Add the knowledge in the text below to the knowledge graph of the session {session.title!r}.{where}\n\n"
            "1. Search the graph first (search_objects) so existing objects are reused, not duplicated.\n"
            f"2. Reuse the types already in use where they fit. Object types: {known}. Relation types: {rels}.\n"
            "3. Add everything in one evolve_knowledge call: objects with short, specific names and the facts as "
            "properties, then relations between them (labels like \"$ada\" let later operations refer to "
            "objects added earlier in the same call).\n"
            "4. Only state what the text says; say what you added at the end.\n\n"
            f"Text:\n\n{args['text']}")])
    if name == "summarize_graph":
        text = await asyncio.to_thread(resources.summary_markdown, scope, session)
        focus = args.get("focus", "").strip()
        ask = (f"Summarise what the knowledge graph of the session {session.title!r} says"
               + (f" about {focus!r}" if focus else "") + f".{where} The summary resource below gives the counts, "
               "types and most connected objects; read more with the tools (graph_summary, search_objects, "
               "neighbors) where it helps. Group the summary by theme and name the objects you rely on.")
        return types.GetPromptResult(description=prompt.description, messages=[
            _user(ask), _embedded(resources.summary_uri(session.id), "text/markdown", text)])
    if name == "explain_object":
        def build() -> tuple[str, str]:
            obj = store.resolve(session.id, args["ref"])
            doc = resources.object_document(scope, session, obj)
            return resources.object_uri(session.id, obj.id), json.dumps(doc, ensure_ascii=False, indent=2)
        try:
            uri, text = await asyncio.to_thread(build)
        except StoreError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        return types.GetPromptResult(description=prompt.description, messages=[
            _user(f"Explain the object {args['ref']!r} of the session {session.title!r}: what it is, what its "
                  "properties say, how it relates to its neighbours and why those relations matter. Use the "
                  f"neighbors and find_path tools to look further than the resource below.{where}"),
            _embedded(uri, "application/json", text)])
    # find_contradictions
    only = args.get("type", "").strip()

    def graph() -> str:
        if not only:
            return store.export(session.id, "json")
        objects = [o.to_json() for o in store.all_objects(session.id) if o.type.casefold() == only.casefold()]
        return json.dumps({"session": {"id": session.id, "title": session.title}, "type": only,
                           "objects": objects}, ensure_ascii=False, indent=2)

    text = await asyncio.to_thread(graph)
    messages = [_user(
        f"Find contradictions in the knowledge graph of the session {session.title!r}"
        + (f" among objects of type {only!r}" if only else "") + ": objects that are probably the same thing under "
        "two names, properties that disagree, relations that cannot both be true. For each, quote the objects "
        "(name and id), say why they conflict and propose a fix (merge_objects, update_object, remove_relation) "
        f"— but change nothing until the person agrees.{where}")]
    if len(text) <= EMBED_LIMIT:
        messages.append(_embedded(resources.graph_uri(session.id), "application/json", text))
    else:
        messages.append(_user(f"The graph is large ({len(text):,} characters); read it in parts with list_objects "
                              f"and search_objects, or read the resource {resources.graph_uri(session.id)}."))
    return types.GetPromptResult(description=prompt.description, messages=messages)


# -- completions ---------------------------------------------------------------------------------------
def _rank(values: list[str], typed: str) -> types.Completion:
    want = typed.casefold()
    seen: set[str] = set()
    prefix, inner = [], []
    for v in values:
        key = v.casefold()
        if key in seen:
            continue
        seen.add(key)
        if key.startswith(want):
            prefix.append(v)
        elif want and want in key:
            inner.append(v)
    found = sorted(prefix, key=str.casefold) + sorted(inner, key=str.casefold)
    return types.Completion(values=found[:MAX_COMPLETIONS], total=len(found), has_more=len(found) > MAX_COMPLETIONS)


async def complete(scope: "SessionScope", params: types.CompleteRequestParams) -> types.CompleteResult:
    ref = params.ref
    if isinstance(ref, types.PromptReference):
        prompt = _BY_NAME.get(ref.name)
        if prompt is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt {ref.name!r}.")
        if params.argument.name not in {a.name for a in prompt.arguments or []}:
            raise MCPError(types.INVALID_PARAMS, f"The prompt {ref.name} has no argument {params.argument.name!r}.")
    elif isinstance(ref, types.ResourceTemplateReference):
        if ref.uri not in (resources.TEMPLATE, resources.DOCUMENT_TEMPLATE):
            raise MCPError(types.INVALID_PARAMS, f"Unknown resource template {ref.uri!r}; they are "
                                                 f"{resources.TEMPLATE} and {resources.DOCUMENT_TEMPLATE}.")
    context: dict[str, Any] = dict(params.context.arguments or {}) if params.context else {}
    name, typed = params.argument.name, params.argument.value or ""
    values = await asyncio.to_thread(_candidates, scope, name, context)
    return types.CompleteResult(completion=_rank(values, typed))


def _candidates(scope: "SessionScope", name: str, context: dict[str, Any]) -> list[str]:
    if name == "session":
        return [s.title for s in scope.sessions()]
    if name not in ("ref", "type", "document"):
        return []
    try:
        session = scope.resolve(context.get("session") or None)
    except ScopeError:
        return []
    if name == "ref":
        return [head[2] for head in scope.store.object_heads(session.id)]
    if name == "document":  # a document's URI names it by id (its sha256)
        from cks_desktop.documents.store import DocumentStore

        return [d.id for d in DocumentStore(scope.store).list_documents(session.id)]
    return [e["name"] for e in scope.store.type_stats(session.id)["object_types"]]
