"""Markdown export: a readable report of the graph (export only).

Every piece of user text is escaped, so a name like ``*bold* [link](x)`` or
``<img src=…>`` shows as typed and never becomes formatting, a link or HTML.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

from cks_desktop.graph.model import Object, Relation, Session

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")


def md_escape(text: str) -> str:
    """One line of literal text: Markdown punctuation backslash-escaped, line breaks as spaces."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _value(value: Any) -> str:
    if isinstance(value, str):
        return md_escape(value)
    return md_escape(json.dumps(value, ensure_ascii=False))


def export_markdown(session: Session, objects: list[Object], relations: list[Relation]) -> str:
    names = {o.id: o.name for o in objects}
    out = [f"# {md_escape(session.title)}", "",
           f"{_count(len(objects), 'object')}, {_count(len(relations), 'relation')}. Exported from CKS Desktop.", ""]
    by_type: dict[str, list[Object]] = defaultdict(list)
    for o in objects:
        by_type[o.type].append(o)
    outgoing: dict[str, list[Relation]] = defaultdict(list)
    for r in relations:
        outgoing[r.source_id].append(r)
    out += ["## Objects", ""]
    for type_ in sorted(by_type, key=str.casefold):
        out += [f"### {md_escape(type_)} ({len(by_type[type_])})", ""]
        for o in sorted(by_type[type_], key=lambda o: o.name.casefold()):
            out.append(f"- **{md_escape(o.name)}** (`{o.id}`)")
            for key in sorted(o.properties):
                out.append(f"  - {md_escape(key)}: {_value(o.properties[key])}")
            for r in outgoing.get(o.id, []):
                out.append(f"  - → *{md_escape(r.type)}* {md_escape(names.get(r.target_id, r.target_id))}")
        out.append("")
    if relations:
        out += ["## Relations", ""]
        for r in relations:
            line = (f"- {md_escape(names.get(r.source_id, r.source_id))} → *{md_escape(r.type)}* → "
                    f"{md_escape(names.get(r.target_id, r.target_id))}")
            if r.properties:
                line += " (" + "; ".join(f"{md_escape(k)}: {_value(v)}" for k, v in sorted(r.properties.items())) + ")"
            out.append(line)
        out.append("")
    return "\n".join(out)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
