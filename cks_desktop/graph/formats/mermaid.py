"""Mermaid flowchart export (export only), for pasting into Markdown viewers.

Node ids are generated (``n0``, ``n1``…); every label is quoted and escaped
with Mermaid's entity codes, so quotes, brackets, pipes, ``#``, ``<`` and
backticks in names can neither break the diagram nor inject markup.
"""

from __future__ import annotations

import json

from cks_desktop.graph.model import Object, Relation, Session

_ENTITIES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "`": "#96;",
             "|": "#124;", "%": "#37;", "{": "#123;", "}": "#125;", "[": "#91;", "]": "#93;",
             "(": "#40;", ")": "#41;", ";": "#59;"}


def mermaid_escape(text: str) -> str:
    """Label text for inside double quotes: one line, entity-coded specials."""
    return "".join(_ENTITIES.get(c, c) for c in " ".join(str(text).split()))


def export_mermaid(session: Session, objects: list[Object], relations: list[Relation]) -> str:
    node = {o.id: f"n{i}" for i, o in enumerate(objects)}
    lines = ["---", f"title: {json.dumps(' '.join(session.title.split()), ensure_ascii=False)}", "---", "flowchart LR"]
    for o in objects:
        lines.append(f'    {node[o.id]}["{mermaid_escape(o.name)}<br/>({mermaid_escape(o.type)})"]')
    for r in relations:
        lines.append(f'    {node[r.source_id]} -->|"{mermaid_escape(r.type)}"| {node[r.target_id]}')
    return "\n".join(lines) + "\n"
