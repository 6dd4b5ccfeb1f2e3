"""Extracting a document again never adds a relation the other way round at a quote that already
sources it: the same passage cannot state both directions. Two ways this happened, both through the
real pipeline (real OpenAI adapter, fake server over a socket, scripted answers):

- another model (so no cached answer) reads the passage with its ends swapped;
- the same answer (cached), but a relation type whose direction the session's majority decides: other
  documents written in between tipped the majority, and the claim was turned against what was written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bench.extraction_archive import snapshot
from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.extraction.runner import Extraction, apply_plan
from cks_desktop.graph.store import GraphStore
from tests.fakes.extraction_reader import DATA_RE, _json_turn
from tests.fakes.providers import make_fake, provider_for
from tests.fakes.script import Turn

LETTER = "Marguerite Okonkwo wrote to Johann Schmidt about the strike."
LETTERS = ("Karin Lind wrote to the Northern Rail Company about wages.\n\n"
           "Erik Holm wrote to the Northern Rail Company about the line.\n\n"
           "Ada Berg wrote to the Northern Rail Company about a ticket.\n")


def _obj(ref: str, name: str, type_: str, quote: str) -> dict[str, Any]:
    return {"ref": ref, "name": name, "type": type_, "description": "", "aliases": [], "quote": quote,
            "properties": []}


def _rel(source: str, target: str, quote: str) -> dict[str, Any]:
    return {"source": source, "target": target, "type": "wrote to", "quote": quote}


class Scripted:
    """A side turn answering each part with the answer scripted for the first sentence it contains."""

    def __init__(self, answers: dict[str, dict[str, Any]]) -> None:
        self.answers = answers
        self.calls = 0

    def __call__(self, body: Any) -> Turn | None:
        messages = body.get("messages") if isinstance(body, dict) else None
        if not messages:
            return None
        self.calls += 1
        first = next(str(m.get("content", "")) for m in messages if m.get("role") == "user")
        match = DATA_RE.search(first)
        passage = str(json.loads(match.group(1)).get("passage", "")) if match else ""
        for sentence, answer in self.answers.items():
            if sentence in passage:
                return _json_turn(answer, body)
        return _json_turn({"objects": [], "relations": []}, body)


async def _extract(store: GraphStore, sid: str, name: str, provider: Any) -> Any:
    doc = DocumentStore(store).get(sid, name)
    ex = Extraction(store, sid, doc, provider)
    plan = await ex.run()
    assert ex.context is not None
    apply_plan(store, plan, ex.context, "extraction")
    return plan


def _session(tmp_path: Path, texts: dict[str, str]) -> tuple[GraphStore, str]:
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    sid = store.create_session("letters").id
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    DocumentStore(store).add(sid, [read_path(tmp_path / name, 1024 * 1024) for name in texts])
    return store, sid


def _wrote_to(store: GraphStore, sid: str) -> list[tuple[str, str]]:
    names = {o.id: o.name for o in store.all_objects(sid)}
    return sorted((names[r.source_id], names[r.target_id]) for r in store.all_relations(sid) if r.type == "wrote_to")


@pytest.mark.asyncio
async def test_another_model_reading_the_ends_swapped_at_the_same_quote_adds_no_relation(tmp_path: Path) -> None:
    store, sid = _session(tmp_path, {"letter.md": f"# A letter\n\n{LETTER}\n"})
    people = [_obj("p1", "Marguerite Okonkwo", "Person", "Marguerite Okonkwo"),
              _obj("p2", "Johann Schmidt", "Person", "Johann Schmidt")]
    forward = Scripted({LETTER: {"objects": people, "relations": [_rel("p1", "p2", LETTER)]}})
    backward = Scripted({LETTER: {"objects": people, "relations": [_rel("p2", "p1", LETTER)]}})
    try:
        with make_fake("openai") as fake:
            fake.side_turn = forward
            first_model = provider_for(fake, model="reader-one", max_retries=3)
            other_model = provider_for(fake, model="reader-two", max_retries=3)
            try:
                await _extract(store, sid, "letter.md", first_model)
                first = snapshot(store, sid)
                fake.side_turn = backward
                plan = await _extract(store, sid, "letter.md", other_model)
                assert backward.calls >= 1  # the other model was asked: no cached answer
            finally:
                await first_model.aclose()
                await other_model.aclose()
        assert [r.action for r in plan.relations] == ["known"]
        assert snapshot(store, sid) == first
        assert _wrote_to(store, sid) == [("Marguerite Okonkwo", "Johann Schmidt")]
    finally:
        store.close()


@pytest.mark.asyncio
async def test_the_same_answer_is_not_turned_round_when_other_documents_tip_the_majority(tmp_path: Path) -> None:
    """The first letter's ends are an organisation and a person (a model's typing slip); wrote_to has
    no fixed direction, so the majority of its claims decides which way a claim between two types
    runs. The three letters written after it tip that majority the other way."""
    store, sid = _session(tmp_path, {"letter.md": f"# A letter\n\n{LETTER}\n",
                                     "letters.md": f"# Letters\n\n{LETTERS}"})
    answers: dict[str, dict[str, Any]] = {
        LETTER: {"objects": [_obj("p1", "Marguerite Okonkwo", "Organization", "Marguerite Okonkwo"),
                             _obj("p2", "Johann Schmidt", "Person", "Johann Schmidt")],
                 "relations": [_rel("p1", "p2", LETTER)]}}
    lines = [line for line in LETTERS.splitlines() if line]
    company = _obj("c", "Northern Rail Company", "Organization", "Northern Rail Company")
    writers = [_obj(f"p{i}", re.sub(r" wrote.*", "", line), "Person", re.sub(r" wrote.*", "", line))
               for i, line in enumerate(lines)]
    answers[lines[0]] = {"objects": [company, *writers],
                         "relations": [_rel(f"p{i}", "c", line) for i, line in enumerate(lines)]}
    model = Scripted(answers)
    try:
        with make_fake("openai") as fake:
            fake.side_turn = model
            provider = provider_for(fake, max_retries=3)
            try:
                for name in ("letter.md", "letters.md"):
                    await _extract(store, sid, name, provider)
                first, calls = snapshot(store, sid), model.calls
                assert ("Marguerite Okonkwo", "Johann Schmidt") in _wrote_to(store, sid)
                for name in ("letter.md", "letters.md"):
                    await _extract(store, sid, name, provider)
                assert model.calls == calls  # every answer came from the cache
            finally:
                await provider.aclose()
        assert snapshot(store, sid) == first, set(snapshot(store, sid)[1]) ^ set(first[1])
    finally:
        store.close()
