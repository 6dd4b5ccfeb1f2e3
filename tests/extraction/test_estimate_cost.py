"""The estimate shown before an extraction against what the run really costs (look.md: "about $0.011"
before, $0.149 after half the parts). Against the real fake (OpenAI's wire protocol over a socket),
answered by a model that reads only the parts it is sent: the fake's usage must be realistic (its input tokens follow
the request it was sent, not the answer it gives), and the estimate must then be within ×2 of the
final cost of the same run, the duplicate question included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cks_desktop.documents.store import DocumentStore
from cks_desktop.extraction.runner import Extraction
from tests.fakes.extraction_reader import Noise, ReaderModel
from tests.extraction.harness import make_setup
from tests.fakes.providers import make_fake, provider_for

MODEL = "extraction-test-model"  # priced like claude-sonnet-4-5 (a real name warns: deprecated)
PRICES = {MODEL: {"input": 3.0, "output": 15.0}}


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", ["openai", "anthropic"])  # the screenshots' fake is Anthropic's
async def test_the_estimate_is_within_twice_the_real_cost_of_the_same_run(tmp_path: Path, kind: str) -> None:
    setup = make_setup(tmp_path, extras_per_doc=80)  # the screenshot's document: a few dense parts
    model = ReaderModel(Noise(level=0.0))
    with make_fake(kind) as fake:
        fake.side_turn = model
        provider = provider_for(fake, model=MODEL)
        try:
            longest = max(setup.docs, key=lambda d: len(d.text))
            doc = DocumentStore(setup.store).get(setup.session_id, longest.name)
            ex = Extraction(setup.store, setup.session_id, doc, provider, prices=PRICES)
            estimate = ex.estimate()
            await ex.run()
        finally:
            await provider.aclose()
            setup.store.close()
    real = ex.progress
    assert not real.failed_chunks
    # Anthropic's wire carries max_tokens 4,096 for this unknown model: dense parts are halved
    # (tests/extraction/test_answer_budget.py), which the estimate foresees as an upper bound
    # (and the one duplicate question is foreseen whenever parts are asked: a document whose names
    # all resolve without asking makes one call fewer)
    assert estimate.calls - 1 <= real.calls <= estimate.calls if not real.split_parts else real.calls <= estimate.calls
    # the fake reports input tokens of the size of what it was sent (4 characters a token)
    sent = sum(len(json.dumps(r.body["messages"], ensure_ascii=False)) for r in fake.generation_requests)
    assert sent / 4 / 2 <= real.input_tokens <= sent / 4 * 2
    assert estimate.cost_usd is not None and real.cost_usd is not None
    print(f"{kind}: estimate {estimate.input_tokens}+{estimate.output_tokens} tokens ${estimate.cost_usd:.4f}; "
          f"real {real.input_tokens}+{real.output_tokens} tokens ${real.cost_usd:.4f}")
    assert real.cost_usd / 2 <= estimate.cost_usd <= real.cost_usd * 2, (estimate, real)
    # the estimate foresees the duplicate question's data for every part; when every name resolved
    # without asking, that share (about half of the input here) was not sent
    # (and a model that reads answers about 6 characters per passage character, not the 7 the halving
    # forecast assumes: the forecast may foresee twice the pieces a part really needed)
    floor = 4 if real.split_parts else 2 if model.pair_calls else 3
    assert estimate.input_tokens / floor <= real.input_tokens <= estimate.input_tokens * 2
    assert estimate.output_tokens / 2 <= real.output_tokens <= estimate.output_tokens * 2


@pytest.mark.asyncio
async def test_the_running_cost_bills_each_answered_request_once(tmp_path: Path) -> None:
    """A 429 (not billed) retried and a repair turn (billed: it is a second request) add what the
    provider reported for each request, once: no part's input counted twice, no retry billed."""
    setup = make_setup(tmp_path, extras_per_doc=20)
    model = ReaderModel(Noise(level=0.0, broken_json=1.0, rate_limit_once=True, seed=3))
    with make_fake("openai") as fake:
        fake.side_turn = model
        provider = provider_for(fake, model=MODEL, max_retries=2)  # the adapter retries the 429
        try:
            doc = DocumentStore(setup.store).get(setup.session_id, "founding.md")
            ex = Extraction(setup.store, setup.session_id, doc, provider, prices=PRICES)
            await ex.run()
        finally:
            await provider.aclose()
            setup.store.close()
    requests = fake.generation_requests
    billed = requests[1:]  # the first was answered 429
    assert len(billed) == 2 * len(ex.chunks) + model.pair_calls  # each part: broken answer, repair
    assert ex.progress.calls == len(billed)  # the repairs are calls; the 429 was not answered
    assert ex.progress.input_tokens == sum(len(json.dumps(r.body, ensure_ascii=False)) // 4 for r in billed)
    assert ex.progress.cost_usd == pytest.approx((ex.progress.input_tokens * 3.0 + ex.progress.output_tokens * 15.0)
                                                 / 1e6)
