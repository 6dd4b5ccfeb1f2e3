"""Retrieval: meaning beyond the words, the graph's second hop, and bad input in one sentence."""

from __future__ import annotations

import time
from typing import Any

import pytest

from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.store import GraphStore
from cks_desktop.retrieval import lexical
from cks_desktop.retrieval.service import RetrievalError, retrieve
from tests.retrieval.conftest import DISTRACTORS, add_text

FACTS = [
    "Giovanni Agnelli died in Turin in 1945, aged seventy-nine.",
    "The founder of the firm started a car company in 1899.",
    "Aspirin tablets are sold for two euros a box.",
]


def _session(store: GraphStore, texts: list[str]) -> tuple[str, list[str]]:
    sid = store.create_session("s").id
    ids = [add_text(store, sid, f"doc{i}.txt", t) for i, t in enumerate(texts)]
    return sid, ids


@pytest.mark.parametrize(("question", "wanted"), [
    ("Which automobile maker did he start?", "started a car company"),
    ("What is the cost of the medicine?", "Aspirin tablets"),
])
def test_a_paraphrased_question_finds_the_passage_bm25_alone_misses(store: GraphStore, question: str,
                                                                      wanted: str) -> None:
    sid, _ = _session(store, FACTS + DISTRACTORS)
    found = retrieve(store, sid, question, k=3)
    assert any(wanted in h.text for h in found.passages), [h.text for h in found.passages]
    with store.connection_lock() as conn:
        bm25 = [n for n, _ in lexical.search(conn, sid, question, 3)]
        texts = [conn.execute("SELECT body FROM passages_fts WHERE rowid = ?", (n,)).fetchone()[0] for n in bm25]
    assert not any(wanted in t for t in texts)


def _two_hop_world(store: GraphStore) -> tuple[str, str]:
    employer = "Ada Lovelace works as an engineer at Northwind Labs."
    place = "Northwind Labs has its headquarters beside the old port of Tallinn."
    sid, ids = _session(store, [employer, place, *DISTRACTORS,
                                "An office of the city council opened where employers meet each week."])
    docs = {t: i for t, i in zip([employer, place], ids)}

    def ev(text: str, quote: str) -> dict[str, Any]:
        start = text.index(quote)
        return {"document_id": docs[text], "start": start, "end": start + len(quote), "quote": quote,
                "alignment": "exact", "origin": "extraction"}

    store.apply(sid, [
        {"op": "add_object", "type": "Person", "name": "Ada Lovelace", "label": "$ada"},
        {"op": "add_object", "type": "Organization", "name": "Northwind Labs", "label": "$nw"},
        {"op": "add_object", "type": "City", "name": "Tallinn", "label": "$tl"},
        {"op": "add_relation", "source": "$ada", "target": "$nw", "type": "works_at", "label": "$r1"},
        {"op": "add_relation", "source": "$nw", "target": "$tl", "type": "located_in", "label": "$r2"},
        {"op": "add_evidence", "relation": "$r1", **ev(employer, employer)},
        {"op": "add_evidence", "relation": "$r2", **ev(place, place)},
    ], "test")
    return sid, place


def test_graph_expansion_finds_the_second_hops_passage(store: GraphStore) -> None:
    sid, place = _two_hop_world(store)
    question = "In which city does Ada's employer have its offices?"
    plain = retrieve(store, sid, question, k=2, use_graph=False)
    assert place not in [h.text for h in plain.passages]  # the words and their meaning do not reach it
    found = retrieve(store, sid, question, k=2)
    assert place in [h.text for h in found.passages]
    assert {o.name for o in found.objects} >= {"Ada Lovelace", "Northwind Labs", "Tallinn"}
    assert {r.type for r in found.relations} == {"works_at", "located_in"}


def test_an_alias_named_in_the_question_seeds_the_walk(store: GraphStore) -> None:
    sid, place = _two_hop_world(store)
    ada = store.resolve(sid, "Ada Lovelace")
    store.apply(sid, [{"op": "update_object", "ref": ada.id, "set_properties": {"aliases": ["the Countess"]}}], "test")
    found = retrieve(store, sid, "Where does the Countess's employer have offices?", k=2)
    assert "Ada Lovelace" in {o.name for o in found.objects}
    assert place in [h.text for h in found.passages]


def test_overlapping_passages_are_merged_and_the_budget_holds(store: GraphStore) -> None:
    paragraphs = [f"The {w} festival in the valley draws crowds with music, food and {w} lanterns every year."
                  for w in ("spring", "summer", "autumn", "winter", "harvest", "river", "mountain", "lantern")]
    sid, _ = _session(store, ["\n\n".join(paragraphs * 4), *DISTRACTORS])
    found = retrieve(store, sid, "festival lanterns music", k=10, budget_chars=600)
    assert found.passages and sum(len(h.text) for h in found.passages) <= 600 or len(found.passages) == 1
    for a in found.passages:
        for b in found.passages:
            if a is not b and a.document_id == b.document_id:
                assert a.end <= b.start or b.end <= a.start
    assert found.passages[0].score == 1.0 and all(0 < h.score <= 1 for h in found.passages)


def test_an_empty_session_finds_nothing_and_says_so(store: GraphStore) -> None:
    sid = store.create_session("empty").id
    found = retrieve(store, sid, "anything at all?")
    assert (found.passages, found.objects, found.relations, found.documents) == ([], [], [], 0)


@pytest.mark.parametrize(("question", "k", "sentence"), [
    ("   ", 5, "The question is empty; ask something."),
    ("why " * 25_000, 5, "The question is 99,999 characters long; ask in at most 4,000 characters."),
    ("fine", 0, "k must be between 1 and 50; it was 0."),
])
def test_bad_input_is_one_sentence_at_once(store: GraphStore, question: str, k: int, sentence: str) -> None:
    sid, _ = _session(store, FACTS)
    began = time.monotonic()
    with pytest.raises(RetrievalError) as err:
        retrieve(store, sid, question, k=k)
    assert str(err.value) == sentence and time.monotonic() - began < 1.0


def test_an_unknown_session_is_the_stores_sentence(store: GraphStore) -> None:
    with pytest.raises(StoreError):
        retrieve(store, "01NOSUCHSESSION", "who?")


def test_fts_operators_in_a_question_are_only_words(store: GraphStore) -> None:
    sid, _ = _session(store, FACTS)
    found = retrieve(store, sid, 'body: "Agnelli" NEAR( OR * ) -died ^', k=1)
    assert "Agnelli" in found.passages[0].text


def test_a_fact_naming_its_subject_only_in_the_heading_is_found_by_it(store: GraphStore) -> None:
    filler = " ".join(DISTRACTORS)
    text = (f"Greta Silva\n\n{filler} {filler}\n\nShe joined Copperleaf Foods in 1961.\n\n"
            f"Hugo Novak\n\n{filler} {filler}\n\nHe joined Copperleaf Foods in 1975.")
    sid, _ = _session(store, [text])
    found = retrieve(store, sid, "When did Greta Silva join Copperleaf Foods?", k=1, use_graph=False)
    assert "1961" in found.passages[0].text and "Greta Silva" not in found.passages[0].text
    assert found.passages[0].text == text[found.passages[0].start:found.passages[0].end]


def test_the_walk_proposes_a_few_passages_not_everything_it_reaches(store: GraphStore) -> None:
    from cks_desktop.retrieval import embedder, graph
    from cks_desktop.retrieval.index import PassageIndex

    texts = [f"Worker {name} joined Northwind Labs as an apprentice." for name in
             ("Ada", "Bruno", "Clara", "Dmitri", "Elena", "Farid", "Greta", "Hugo")]
    sid, ids = _session(store, texts + DISTRACTORS)
    ops: list[dict[str, Any]] = [{"op": "add_object", "type": "Organization", "name": "Northwind Labs", "label": "$nw"}]
    for i, (text, doc) in enumerate(zip(texts, ids)):
        ops += [{"op": "add_object", "type": "Person", "name": text.split()[1], "label": f"$p{i}"},
                {"op": "add_relation", "source": f"$p{i}", "target": "$nw", "type": "works_at", "label": f"$r{i}"},
                {"op": "add_evidence", "relation": f"$r{i}", "document_id": doc, "start": 0, "end": len(text),
                 "quote": text, "alignment": "exact", "origin": "extraction"}]
    store.apply(sid, ops, "test")
    PassageIndex(store).sync(sid)
    question = "Who works at Northwind Labs?"
    expansion = graph.expand(store, store.connection_lock, sid, question, embedder.embed([question])[0])
    assert 0 < len(expansion.passages) <= graph.PASSAGES
    best = expansion.passages[0][1]
    assert all(score >= best * graph.PASSAGE_FLOOR for _, score in expansion.passages)
