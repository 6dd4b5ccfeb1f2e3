"""The prices a person sets in Settings → Chat & agent → Prices reach an extraction's estimate and
its running cost, from the CLI (a real subprocess) and from the window alike: both go through the
extraction use case, which reads ``agent.prices``. The fake model has no built-in price, so without
the override the cost is unknown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.extraction.runner import Extraction
from tests.fakes.extraction_reader import Noise, ReaderModel
from tests.extraction.harness import make_setup
from tests.extraction.test_extract_cli import _run
from tests.extraction.world import make_world, render_world
from tests.fakes.providers import make_fake
from tests.ui.conftest import home, open_window  # noqa: F401  (home is a fixture)
from tests.ui.helpers import signal_future, wait

PRICE = {"input": 1000.0, "output": 2000.0}  # dollars per million tokens: a cost no rounding hides


def _estimate(home: Path, fake: object, sid: str) -> dict[str, object]:
    out = _run(home, fake, "--session", sid, "founding.md", "--estimate", "--json")
    assert out.returncode == 0, out.stderr
    estimate = json.loads(out.stdout)["estimate"]
    assert isinstance(estimate, dict)
    return estimate


@pytest.mark.parametrize("shape", ["today", "dotted key of older versions"])
def test_the_cli_estimate_uses_the_price_set_in_settings(tmp_path: Path, shape: str) -> None:
    setup = make_setup(tmp_path, extras_per_doc=20)
    setup.store.close()
    home, sid = setup.store.path.parent, setup.session_id
    with make_fake("openai") as fake:
        unpriced = _estimate(home, fake, sid)
        assert unpriced["cost_usd"] is None  # the fake's model has no built-in price
        prices = {fake.default_model: PRICE}
        data = {"agent": {"prices": prices}} if shape == "today" else {"agent.prices": prices}
        (home / "settings.json").write_text(json.dumps(data), encoding="utf-8")
        priced = _estimate(home, fake, sid)
    inp, out = int(str(priced["input_tokens"])), int(str(priced["output_tokens"]))
    assert priced["cost_usd"] == pytest.approx(inp * PRICE["input"] / 1e6 + out * PRICE["output"] / 1e6)


@pytest.mark.asyncio
async def test_the_windows_estimate_uses_the_price_set_in_settings(qtbot, home: Path, tmp_path: Path) -> None:
    world = make_world(extras_per_doc=20)
    docs = render_world(world, tmp_path / "docs")
    with make_fake("openai") as fake:
        fake.side_turn = ReaderModel(Noise(level=0.0))
        async with open_window(home, fake=fake, provider="openai") as window:
            window.sidebar.create_session()
            sid = window.current_session
            store = window.services.store
            doc = DocumentStore(store).add(sid, [read_path(docs[0].path, 10**8)]).added[0]
            page_prices = {fake.default_model: PRICE}
            from dataclasses import replace

            from cks_desktop.settings import Agent

            settings = window.services.settings
            settings.set_section(replace(settings.section(Agent), prices=page_prices))  # what the page's Save does
            text = DocumentStore(store).get(sid, doc.id)  # with its text
            async with window.services.providers.use() as provider:  # the estimate as the runner makes it
                estimate = Extraction(store, sid, text, provider, prices=page_prices).estimate()
                assert Extraction(store, sid, text, provider).estimate().cost_usd is None  # no built-in price
            assert estimate.input_tokens > 0
            assert estimate.cost_usd == pytest.approx((estimate.input_tokens * PRICE["input"]
                                                       + estimate.output_tokens * PRICE["output"]) / 1e6)
            expected = estimate.cost_usd
            controller = window.extraction
            opened = signal_future(controller.dialogOpened)
            controller.request(sid, doc.id)
            (box,) = await wait(opened)
            assert isinstance(box, QMessageBox)
            assert f"cost about ${expected:.3f}" in box.informativeText(), box.informativeText()
            box.button(QMessageBox.StandardButton.Cancel).click()
