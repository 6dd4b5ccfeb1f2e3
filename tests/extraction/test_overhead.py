"""The app's own time per chunk ("app overhead < 5 % beside the model's own time").

A first run asks the fake (real SDK, real socket) and fills the cache; a second run of the same
document is then pure app work — cache read, grounding every quote, resolution, the plan — with no
model time at all, so its CPU time per chunk is the app's overhead. Profiling the 300-page bench
(once its own tracemalloc was out of the way) found ``dataclasses.asdict`` (a deepcopy per source)
in the plan and the character-by-character normalised copy of every chunk that grounding built even
when every quote matched exactly; both are gone, and this bounds what is left."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cks_desktop.documents.store import DocumentStore
from cks_desktop.extraction.grounding import Normalised
from cks_desktop.extraction.plan import Evidence, _ev_json
from cks_desktop.extraction.runner import Extraction
from tests.fakes.extraction_reader import Noise, ReaderModel
from tests.extraction.harness import make_setup
from tests.fakes.providers import make_fake, provider_for

# CPU ms per chunk of a cached re-run (measured 3.8–3.9 ms after the fix, 5.3–5.9 ms before, on the shared machine)
BOUND_MS = 5.0


# A CPU-time bound: on the shared 2-core machine its measure ranges 4.5–7.2 ms between identical runs,
# so it is a benchmark more than a test; it runs with the slow suite (CKS_SLOW=1).
@pytest.mark.slow
@pytest.mark.asyncio
async def test_a_cached_rerun_costs_the_app_little_per_chunk(tmp_path: Path) -> None:
    setup = make_setup(tmp_path, extras_per_doc=60)
    model = ReaderModel(Noise(level=0.0))
    try:
        with make_fake("openai") as fake:
            fake.side_turn = model
            provider = provider_for(fake)
            try:
                doc = DocumentStore(setup.store).get(setup.session_id, setup.docs[0].name)
                first = Extraction(setup.store, setup.session_id, doc, provider)
                await first.run()
                calls = model.calls
                best = float("inf")
                for _ in range(3):  # the best of three: the machine is shared
                    again = Extraction(setup.store, setup.session_id, doc, provider)
                    started = time.process_time()
                    await again.run()
                    best = min(best, (time.process_time() - started) / len(again.chunks) * 1000)
                assert model.calls == calls  # nothing was asked: all of it was the app's own work
                assert {"grounding (collect_chunk)", "resolution", "plan", "cache write"} <= set(again.progress.phases)
            finally:
                await provider.aclose()
    finally:
        setup.store.close()
    assert best < BOUND_MS, f"the app spends {best:.1f} ms of CPU per cached chunk (bound {BOUND_MS} ms)"


def test_sources_are_plain_dicts_and_normalising_is_lazy_and_exact() -> None:
    ev = Evidence("d_1", 2, 10, 20, 3, "a quote", "exact", "")
    assert _ev_json(ev) == {"document_id": "d_1", "chunk_index": 2, "start": 10, "end": 20, "page": 3,
                            "quote": "a quote", "alignment": "exact", "model_quote": ""}
    text = "  Stra\u00dfe \u201cOld\u201d   Mill\n\nTOWN \u00c9cole  "
    norm = Normalised(text)
    assert norm.text == "strasse \"old\" mill town \u00e9cole"
    for i, ch in enumerate(norm.text):  # every normalised character points at its source character
        src = text[norm.where[i]]
        assert (ch == " " and src.isspace()) or ch in src.translate({0x201c: '"', 0x201d: '"'}).casefold()
