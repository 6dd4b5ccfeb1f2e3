"""Reaching extraction: File → Extract knowledge… next to Add documents… (selected, last
added, or asked which), and the cap of Settings → Chat & agent → "Extracting documents" that decides
when the window asks first. A real window, the fake OpenAI server whose model reads only the parts it is sent; dialogs are
open()ed and answered when they signal."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QInputDialog, QMessageBox

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.extraction.caps import cap_of
from cks_desktop.settings import Extraction as ExtractionSettings
from cks_desktop.ui.extraction.review import ReviewDialog
from tests.fakes.extraction_reader import Noise, ReaderModel
from tests.extraction.world import make_world, render_world
from tests.fakes.providers import make_fake
from tests.ui.conftest import home, open_window  # noqa: F401  (home is a fixture)
from tests.ui.helpers import signal_future, wait


async def _idle(controller: object) -> None:
    """Until the controller's run is over (bounded; the run ends on the cancelled box)."""
    import asyncio

    async def loop() -> None:
        while getattr(controller, "running"):
            await asyncio.sleep(0.01)

    await wait(loop())


@pytest.mark.asyncio
async def test_file_menu_extract_knowledge_takes_the_last_added_or_asks_which(qtbot, home: Path,
                                                                               tmp_path: Path) -> None:
    world = make_world(extras_per_doc=10)
    docs = render_world(world, tmp_path / "docs")
    model = ReaderModel(Noise(level=0.0))
    with make_fake("openai") as fake:
        fake.side_turn = model
        async with open_window(home, fake=fake, provider="openai") as window:
            actions = [a for a in window.menuBar().actions() if a.text() == "&File"][0].menu().actions()
            names = [a.objectName() for a in actions]
            action = window.findChild(type(actions[0]), "extractKnowledgeAction")
            assert action is not None and names.index("extractKnowledgeAction") == names.index("addDocumentsAction") + 1
            assert not action.icon().isNull() and action.toolTip()
            action.trigger()  # no session yet: one sentence
            await wait(signal_future(window.statusBar().messageChanged))
            assert "session" in window.statusBar().currentMessage()
            window.sidebar.create_session()
            sid = window.current_session
            store = DocumentStore(window.services.store)
            store.add(sid, [read_path(docs[0].path, 10**8), read_path(docs[1].path, 10**8)])
            controller = window.extraction
            opened = signal_future(controller.dialogOpened)
            action.trigger()  # two documents, none selected or added here: which?
            (which,) = await wait(opened)
            assert isinstance(which, QInputDialog) and set(which.comboBoxItems()) == {docs[0].name, docs[1].name}
            which.setTextValue(docs[1].name)
            boxed = signal_future(controller.dialogOpened)
            which.accept()
            (box,) = await wait(boxed)
            assert isinstance(box, QMessageBox) and docs[1].name in box.text()
            box.button(QMessageBox.StandardButton.Cancel).click()
            await _idle(controller)
            # a document added through the window is the one the menu takes, without asking
            added = signal_future(window.documents.added)
            await window.documents.add_paths([docs[2].path])
            await wait(added)
            boxed = signal_future(controller.dialogOpened)
            action.trigger()
            (box,) = await wait(boxed)
            assert isinstance(box, QMessageBox) and docs[2].name in box.text()
            box.button(QMessageBox.StandardButton.Cancel).click()
            await _idle(controller)
            # the document selected in the Documents panel comes first
            panel = window.documents_panel
            panel.set_session(sid)
            await panel.reload()
            assert panel.select(docs[0].name)
            boxed = signal_future(controller.dialogOpened)
            action.trigger()
            (box,) = await wait(boxed)
            assert isinstance(box, QMessageBox) and docs[0].name in box.text()
            box.button(QMessageBox.StandardButton.Cancel).click()
            await _idle(controller)
            assert model.calls == 0  # nothing was asked: every run was cancelled at its estimate
    assert not fake.problems


@pytest.mark.asyncio
async def test_an_estimate_within_the_cap_starts_without_asking_one_over_it_asks(qtbot, home: Path,
                                                                                 tmp_path: Path) -> None:
    world = make_world(extras_per_doc=10)
    docs = render_world(world, tmp_path / "docs")
    model = ReaderModel(Noise(level=0.0))
    with make_fake("openai") as fake:
        fake.side_turn = model
        async with open_window(home, fake=fake, provider="openai") as window:
            window.sidebar.create_session()
            sid = window.current_session
            doc = DocumentStore(window.services.store).add(sid, [read_path(docs[0].path, 10**8)]).added[0]
            controller = window.extraction
            window.services.settings.data["extraction"] = {"review_over_chars": 0, "max_calls": 1}
            opened = signal_future(controller.dialogOpened)
            controller.request(sid, doc.id)
            (box,) = await wait(opened)
            assert isinstance(box, QMessageBox) and "over your cap of 1" in box.informativeText()
            box.button(QMessageBox.StandardButton.Cancel).click()
            await _idle(controller)
            window.services.settings.data["extraction"] = {"review_over_chars": 0, "max_calls": 10_000}
            opened = signal_future(controller.dialogOpened)
            controller.request(sid, doc.id)
            (first,) = await wait(opened)
            assert isinstance(first, ReviewDialog) and model.chunk_calls >= 1  # no question: it just ran
            done = signal_future(controller.finished)
            first.reject()
            await wait(done)
    assert not fake.problems


def test_the_cap_is_set_in_chat_and_agent_settings(qtbot, tmp_path: Path) -> None:
    from cks_desktop.settings import Settings
    from cks_desktop.tools.builtin import build_registry
    from cks_desktop.ui.settings.agent_page import AgentPage

    settings = Settings.load(tmp_path / "settings.json")
    page = AgentPage(settings, build_registry(None))
    qtbot.addWidget(page)
    cost, calls = page.extraction_cap.cost, page.extraction_cap.calls
    assert cost.text() == calls.text() == "" and cost.toolTip() and calls.toolTip()
    cost.setText("a lot")
    calls.setText("-3")
    problems = page.errors()
    assert any("cost cap" in p for p in problems) and any("call cap" in p for p in problems)
    cost.setText("$0.50")
    calls.setText("200")
    assert page.errors() == []
    page.save(settings)
    settings.save()
    again = Settings.load(tmp_path / "settings.json")
    cap = cap_of(again.section(ExtractionSettings))
    assert cap.max_calls == 200 and cap.max_cost_usd == 0.5
    page2 = AgentPage(again, build_registry(None))
    qtbot.addWidget(page2)
    assert page2.extraction_cap.cost.text() == "0.5" and page2.extraction_cap.calls.text() == "200"
    page2.extraction_cap.cost.setText("")
    page2.extraction_cap.calls.setText("")
    page2.save(again)
    assert "max_calls" not in again.data.get("extraction", {}) and not cap_of(again.section(ExtractionSettings)).is_set


def test_the_review_size_and_part_by_part_writing_are_set_in_chat_and_agent_settings(qtbot, tmp_path: Path) -> None:
    """Review before writing is the default above a size the person sets: a field, not a hidden key."""
    from cks_desktop.settings import Settings
    from cks_desktop.tools.builtin import build_registry
    from cks_desktop.settings.sections import REVIEW_OVER_CHARS
    from cks_desktop.ui.settings.agent_page import AgentPage

    settings = Settings.load(tmp_path / "settings.json")
    page = AgentPage(settings, build_registry(None))
    qtbot.addWidget(page)
    box = page.extraction_cap
    assert box.review_over.value() == REVIEW_OVER_CHARS and not box.per_chunk.isChecked()
    assert box.review_over.toolTip() and box.per_chunk.toolTip()
    box.review_over.setValue(5_000)
    box.per_chunk.setChecked(True)
    assert page.errors() == []
    page.save(settings)
    settings.save()
    again = Settings.load(tmp_path / "settings.json")
    section = again.section(ExtractionSettings)
    assert section.review_over_chars == 5_000 and section.write_per_chunk
    page2 = AgentPage(again, build_registry(None))
    qtbot.addWidget(page2)
    assert page2.extraction_cap.review_over.value() == 5_000 and page2.extraction_cap.per_chunk.isChecked()
