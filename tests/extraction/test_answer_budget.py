"""A dense part's answer against the model's answer budget (extraction-3's finding).

Every object and relation repeats a verbatim quote, so a 1,200-token part of the generated world is
answered in 7,000-8,100 tokens, while Anthropic requests carried ``max_tokens`` 4,096 (the provider
default): a real model stops there (``stop_reason: max_tokens``) and the part failed as broken JSON
after a repair turn that could not succeed either. The fake model honours the budget like the real
APIs, so these tests run against the real SDKs over a socket and see what a real model would do."""

from __future__ import annotations

from pathlib import Path

import pytest

from cks_desktop.documents.store import DocumentStore
from cks_desktop.extraction.budget import EXTRACTION_MAX_OUTPUT, answer_budget
from cks_desktop.extraction.runner import Extraction
from tests.fakes.extraction_reader import Noise, ReaderModel, _json_turn
from tests.extraction.harness import make_setup
from tests.fakes.providers import make_fake, provider_for


def test_the_reader_fake_stops_at_the_requests_budget() -> None:
    """Cut at ``max_tokens`` (4 characters a token, as its usage counts), finishing with "length"."""
    model = ReaderModel()
    turn = model._budgeted(_json_turn({"objects": ["x" * 4000]}, {}), {"max_tokens": 100})
    assert turn.finish_reason == "length" and turn.output_tokens == 100
    assert len("".join(turn.text)) == 400
    whole = model._budgeted(_json_turn({"objects": []}, {}), {"max_completion_tokens": 100})
    assert whole.finish_reason is None
    assert model.limit_of({}) == model.default_max_output


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_a_part_cut_at_the_answer_limit_is_split_and_asked_in_halves(tmp_path: Path, kind: str) -> None:
    """A model of unknown limits keeps the session's budget (Anthropic: 4,096; OpenAI: nothing sent,
    here a model whose own limit is 4,096): the cut answer is not 'repaired' — the part is split at a
    sentence and each half asked (and cached); nothing fails, every gold thing is found, and a second
    run asks nothing."""
    setup = make_setup(tmp_path, extras_per_doc=80)
    model = ReaderModel(Noise(level=0.0), default_max_output=4096)
    with make_fake(kind) as fake:
        fake.side_turn = model
        provider = provider_for(fake, model="extraction-test-model")
        try:
            longest = max(setup.docs, key=lambda d: len(d.text))
            doc = DocumentStore(setup.store).get(setup.session_id, longest.name)
            ex = Extraction(setup.store, setup.session_id, doc, provider)
            estimate = ex.estimate()
            plan = await ex.run()
            assert model.cut_answers >= 1 and not ex.progress.failed_chunks, ex.progress.failed_chunks
            assert ex.progress.split_parts >= 1
            # every gold entity mentioned in the document is in the plan
            names = {o.name for o in plan.objects}
            gold_names = {setup.world.entities[m.entity].name for m in longest.mentions}
            assert len(gold_names - names) <= len(gold_names) // 20, sorted(gold_names - names)
            if kind == "anthropic":  # the limit is known (max_tokens is sent): the estimate foresees each split
                # by the run's own rule (``pieces_of``): the calls made are the calls foreseen (the one
                # duplicate question is foreseen whenever parts are asked, and not asked when nothing is
                # ambiguous)
                assert estimate.calls - 1 <= ex.progress.calls <= estimate.calls, (estimate, ex.progress.calls)
            else:  # a model's own unnamed limit cannot be foreseen; the calls made are all counted
                assert ex.progress.calls == len(fake.generation_requests)
            print(kind, "estimated calls", estimate.calls, "made", ex.progress.calls, "split", ex.progress.split_parts)
            before = model.calls
            again = Extraction(setup.store, setup.session_id, doc, provider)
            await again.run()
            assert model.calls == before  # the whole part and both halves came from the cache
        finally:
            await provider.aclose()
            setup.store.close()


@pytest.mark.asyncio
async def test_a_model_known_to_allow_more_is_asked_for_a_bigger_answer(tmp_path: Path) -> None:
    """Anthropic's claude-sonnet-4-6 allows 64,000 answer tokens: extraction asks for 16,384, and the
    dense part's answer fits in one call (no cut, no split)."""
    assert answer_budget("anthropic", "claude-sonnet-4-6", 4096) == EXTRACTION_MAX_OUTPUT
    assert answer_budget("openai", "gpt-4o-mini", 4096) == EXTRACTION_MAX_OUTPUT
    assert answer_budget("anthropic", "claude-3-haiku-20240307", 4096) == 4096  # its own limit
    assert answer_budget("openai", "some-local-model", 4096) is None  # unknown: the provider's default
    setup = make_setup(tmp_path, extras_per_doc=80)
    model = ReaderModel(Noise(level=0.0), default_max_output=4096)
    with make_fake("anthropic") as fake:
        fake.side_turn = model
        provider = provider_for(fake, model="claude-sonnet-4-6")
        try:
            longest = max(setup.docs, key=lambda d: len(d.text))
            doc = DocumentStore(setup.store).get(setup.session_id, longest.name)
            ex = Extraction(setup.store, setup.session_id, doc, provider)
            await ex.run()
        finally:
            await provider.aclose()
            setup.store.close()
    assert not ex.progress.failed_chunks and model.cut_answers == 0 and ex.progress.split_parts == 0
    sent = [r.body.get("max_tokens") for r in fake.generation_requests]
    assert sent and all(v == EXTRACTION_MAX_OUTPUT for v in sent), sent


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_an_answer_cut_at_the_limit_is_reported_not_repaired(kind: str) -> None:
    """respond_json: a cut, non-conforming answer raises with ``cut_off`` after ONE request (a repair
    turn would be as long), and the budget asked for goes on the wire under the API's own name."""
    from cks_desktop.llm.messages import Message
    from cks_desktop.llm.structured import StructuredOutputError, respond_json
    from tests.fakes.providers import fake_provider
    from tests.fakes.script import Turn

    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    async with fake_provider(kind, Turn(text=['{"a": "tru'], finish_reason="length"),
                             Turn(text=['{"a": "x"}'])) as (fake, provider):
        with pytest.raises(StructuredOutputError) as caught:
            await respond_json(provider, [Message.user("hi")], schema, max_output_tokens=1234)
        assert caught.value.cut_off
        assert len(fake.generation_requests) == 1
        body = fake.generation_requests[0].body
        assert 1234 in (body.get("max_tokens"), body.get("max_completion_tokens"))


def test_a_part_is_halved_into_exact_slices_at_a_sentence() -> None:
    from cks_desktop.extraction.chunking import chunk_text, split_chunk

    text = "# Title\n\n" + " ".join(f"Sentence number {i} names Ada Lovelace and London." for i in range(120))
    chunk = chunk_text(text)[0]
    halves = split_chunk(chunk, text)
    assert halves is not None
    first, second = halves
    for half in halves:
        assert text[half.start:half.end] == half.text and half.index == chunk.index
    assert first.start == chunk.start and second.end == chunk.end and first.end <= second.start
    assert text[first.end:second.start].strip() == ""  # nothing lost between the halves
    assert first.text.endswith(".") and second.text[0].isupper()  # cut at a sentence end
    assert abs(first.chars - second.chars) < chunk.chars // 4
    assert second.context_tail and text[:second.start].rstrip().endswith(second.context_tail[-20:])
    tiny = chunk_text("One short sentence.")[0]
    assert split_chunk(tiny, "One short sentence.") is None
