"""A fake model that summarises graph communities and combines summaries into themes, reading only
what its request holds (the ``GRAPH DATA`` block the app sends); plug it in as a fake server's
``side_turn``.

- a community request (``objects``/``relations``): the title is its best-connected member's name
  and its type; the summary lists the members' names with their descriptions and the relations, as
  written in the request;
- a combining request (``communities``): one theme per summary, in the order given, citing the
  community's number as sent; ``invent`` adds a theme citing a number it was not given;
  ``fail_summary`` answers that summary request with a 500.

It counts its calls by kind; it knows no gold and no id.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from tests.fakes.extraction_reader import _content, _json_turn
from tests.fakes.script import Turn

DATA_RE = re.compile(r"<<<GRAPH DATA \(JSON\)\n(.*?)\nGRAPH DATA>>>", re.DOTALL)


class Summariser:
    def __init__(self, *, invent: bool = False, fail_summary: int | None = None) -> None:
        self.invent = invent
        self.fail_summary = fail_summary  # answer this summary request (1-based) with a 500
        self.summaries: list[list[str]] = []  # the member names each summary request was sent
        self.combines = 0
        self.lock = threading.Lock()

    def __call__(self, body: Any) -> Turn | None:
        messages = body.get("messages") if isinstance(body, dict) else None
        users = [m for m in messages or [] if m.get("role") == "user"]
        match = DATA_RE.search(_content(users[0])) if users else None
        if match is None:
            return None
        data = json.loads(match.group(1))
        if "objects" in data:
            names = [o["name"] for o in data["objects"]]
            with self.lock:
                self.summaries.append(names)
                if len(self.summaries) == self.fail_summary:
                    return Turn(status=500)
            first = data["objects"][0]
            parts = [f"{o['name']} ({o['description'] or o['type']})" for o in data["objects"]]
            links = [f"{r['source']} {r['type']} {r['target']}" for r in data["relations"]]
            return _json_turn({"title": f"{first['name']} and its {first['type'].lower()} circle",
                               "summary": "; ".join(parts) + ". " + "; ".join(links) + "."}, body)
        with self.lock:
            self.combines += 1
        themes = [{"title": f"Theme: {c['title']}", "summary": c["summary"][:200],
                   "communities": c.get("communities") or [c["n"]]} for c in data["communities"]]
        if self.invent:
            themes.append({"title": "Something no community says", "summary": "Invented.", "communities": [99]})
        return _json_turn({"themes": themes}, body)
