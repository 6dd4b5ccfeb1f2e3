"""Boilerplate is marked before extraction and never becomes an object or a source; an object whose
name is nowhere in its part is held for review, not written."""

from __future__ import annotations

from pathlib import Path

import pytest

from cks_desktop.extraction.boilerplate import boilerplate_spans, inside
from cks_desktop.extraction.chunking import chunk_text
from cks_desktop.extraction.plan import collect_chunk
from cks_desktop.extraction.vocabulary import Vocabulary

PAGE = "PORT REGISTER OF VELORIA, 1891\n{body}\nPrinted by Halvorsen & Sons, Veloria. Page {n}"


def _paged() -> tuple[str, tuple[int, ...]]:
    pages, starts, text = [], [], ""
    for n, body in enumerate(["Ward, Thomas, captain, born in Livorno.", "Lind, Karin, archivist, born in Veloria.",
                              "Lind, Ingrid, historian, born in Oestberg."], start=1):
        if text:
            text += "\n\n"
        starts.append(len(text))
        text += PAGE.format(body=body, n=n)
        pages.append(body)
    return text, tuple(starts)


def test_running_lines_and_site_chrome_are_marked() -> None:
    text, starts = _paged()
    spans = boilerplate_spans(text, starts)
    marked = [text[a:b] for a, b in spans]
    assert sum(1 for m in marked if m.startswith("PORT REGISTER")) == 3
    assert sum(1 for m in marked if m.startswith("Printed by")) == 3
    assert not any("born in" in m for m in marked)
    html = "Home | Collections | Research | About us | Contact\n\nVeloria was founded in 1871 | a port.\n\n" \
           "© 2026 Veloria Historical Society · Privacy · Cookies"
    chrome = [html[a:b] for a, b in boilerplate_spans(html)]
    assert chrome == ["Home | Collections | Research | About us | Contact",
                      "© 2026 Veloria Historical Society · Privacy · Cookies"]
    assert inside(spans, spans[0][0] + 2, spans[0][0] + 5) and not inside(spans, spans[0][1] + 2, spans[0][1] + 9)


def test_an_answer_from_a_footer_is_left_out_and_an_invented_name_is_held() -> None:
    text, starts = _paged()
    (chunk,) = chunk_text(text, starts)
    answer = {"objects": [
        {"ref": "o1", "name": "Halvorsen & Sons", "type": "Organization", "description": "printer", "aliases": [],
         "quote": "Printed by Halvorsen & Sons, Veloria.", "properties": []},
        {"ref": "o2", "name": "Veloria", "type": "Place", "description": "", "aliases": [],
         "quote": "Printed by Halvorsen & Sons, Veloria.", "properties": []},
        {"ref": "o3", "name": "Ward, Thomas", "type": "Person", "description": "captain", "aliases": [],
         "quote": "Ward, Thomas, captain, born in Livorno.", "properties": []},
        {"ref": "o4", "name": "Harold Finch", "type": "Person", "description": "", "aliases": [],
         "quote": "Ward, Thomas, captain, born in Livorno.", "properties": []}],
        "relations": [{"source": "o1", "target": "o2", "type": "located_in", "quote": "Printed by Halvorsen & Sons"},
                      {"source": "o4", "target": "o3", "type": "knows", "quote": "Ward, Thomas, captain"}]}
    result = collect_chunk(answer, chunk, "d1", starts, Vocabulary.of([]), boilerplate_spans(text, starts))
    names = {m.name: m for m in result.mentions}
    assert set(names) == {"Ward, Thomas", "Harold Finch"}
    assert names["Harold Finch"].held and not names["Ward, Thomas"].held
    assert [(s, t) for s, t, _, _ in result.relations] == [("o4", "o3")]  # written only if its ends are


def test_a_held_object_is_not_written_unless_the_person_ticks_it() -> None:
    from cks_desktop.extraction.plan import Evidence, lay_out
    from cks_desktop.extraction.resolution import Mention, Resolver

    resolver = Resolver([])
    ev = Evidence("d1", 0, 0, 10, None, "Ward, Thomas", "exact")
    resolver.add(Mention(0, "o1", "Harold Finch", "Person", evidence=[ev], held=True))
    again = resolver.add(Mention(1, "o1", "Harold Finch", "Person", evidence=[ev], held=False))
    plan = lay_out("s", "d1", "doc", [], [], resolver, Vocabulary.of([]), {})
    held = [o for o in plan.objects if not o.include]
    assert len(held) == 1 and "its name is nowhere in its part (held for review)" in held[0].reasons
    assert len(plan.objects) == 2  # nothing joins a held object
    # ... and it takes no name from the graph's name space: the real object keeps its own name
    assert again.name == "Harold Finch" and held[0].name == "Harold Finch (2)"


def test_boilerplate_lines_are_cut_from_what_is_sent_with_offsets_kept() -> None:
    from cks_desktop.extraction.chunking import without_boilerplate
    from cks_desktop.extraction.prompt import cache_key, user_message

    text, starts = _paged()
    spans = boilerplate_spans(text, starts)
    (plain,) = chunk_text(text, starts)
    chunk = without_boilerplate(plain, spans, text)
    assert chunk.text == text[chunk.start:chunk.end] == plain.text  # the part itself keeps the document's offsets
    sent = user_message(chunk, [], [])
    assert "PORT REGISTER" not in sent and "Printed by" not in sent
    assert chunk.sent_text == ("Ward, Thomas, captain, born in Livorno.\n\nLind, Karin, archivist, born in Veloria."
                               "\n\nLind, Ingrid, historian, born in Oestberg.\n")
    assert cache_key(chunk, "m") != cache_key(plain, "m")  # an answer to the uncut passage is not reused
    answer = {"objects": [{"ref": "o1", "name": "Lind, Karin", "type": "Person", "description": "archivist",
                           "aliases": [], "quote": "Lind, Karin, archivist, born in Veloria.", "properties": []}],
              "relations": []}
    (mention,) = collect_chunk(answer, chunk, "d1", starts, Vocabulary.of([]), spans).mentions
    (ev,) = mention.evidence
    assert ev.start is not None and ev.end is not None and text[ev.start:ev.end] == ev.quote  # at its span
    assert ev.page == 2


@pytest.mark.asyncio
async def test_the_model_is_sent_no_running_line_and_no_site_chrome(tmp_path: Path) -> None:
    from cks_desktop.documents.readers import read_path
    from cks_desktop.documents.store import DocumentStore
    from cks_desktop.extraction.runner import Extraction
    from cks_desktop.graph.store import GraphStore
    from tests.extraction.archive_world import FOOTER_HTML, HEADER_PDF, NAV, make_archive, render_archive
    from tests.fakes.extraction_reader import Noise, ReaderModel
    from tests.fakes.providers import make_fake, provider_for

    docs = render_archive(make_archive(extras_per_doc=20), tmp_path / "docs")  # a register of two pages
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    sid = store.create_session("archive").id
    read = [read_path(r.path, 10 * 1024 * 1024) for r in docs]
    assert any(len(d.page_starts) >= 2 and d.text.count(HEADER_PDF) >= 2 for d in read)
    DocumentStore(store).add(sid, read)
    model = ReaderModel(Noise.named(0))
    with make_fake("openai") as fake:
        fake.side_turn = model
        provider = provider_for(fake, max_retries=3)
        try:
            for r in docs:
                await Extraction(store, sid, DocumentStore(store).get(sid, r.name), provider).run()
        finally:
            await provider.aclose()
    assert len(model.sent) >= len(docs) and any("Lind, Karin" in block for block in model.sent)
    boilerplate = (HEADER_PDF, "Printed by Halvorsen", NAV, FOOTER_HTML)
    assert not [line for block in model.sent for line in boilerplate if line in block]
