"""The window's extraction: the Documents panel's Extract knowledge → the estimate box →
a background run with its progress in the status bar → the review panel → ONE change. The provider is
the fake OpenAI server whose model reads only the parts it is sent; dialogs are open()ed and answered when they signal."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.ui.extraction.review import ReviewDialog
from tests.fakes.extraction_reader import Noise, ReaderModel
from tests.extraction.world import make_world, render_world
from tests.fakes.providers import make_fake
from tests.ui.conftest import home, open_window  # noqa: F401  (home is a fixture)
from tests.ui.helpers import signal_future, wait


@pytest.mark.asyncio
async def test_extract_knowledge_asks_runs_reviews_and_writes_one_change(qtbot, home: Path, tmp_path: Path) -> None:
    world = make_world(extras_per_doc=30)
    docs = render_world(world, tmp_path / "docs")
    model = ReaderModel(Noise(level=0.0))
    with make_fake("openai") as fake:
        fake.side_turn = model
        async with open_window(home, fake=fake, provider="openai") as window:
            window.sidebar.create_session()
            sid = window.current_session
            store = window.services.store
            doc = DocumentStore(store).add(sid, [read_path(docs[0].path, 10**8)]).added[0]
            window.services.settings.data["extraction"] = {"review_over_chars": 0}  # always review
            controller = window.extraction
            assert controller.progress.parent() is not None and controller.progress.isHidden()
            opened = signal_future(controller.dialogOpened)
            controller.request(sid, doc.id)
            (box,) = await wait(opened)
            assert isinstance(box, QMessageBox) and "model call" in box.informativeText()
            reviewed = signal_future(controller.dialogOpened)
            box.button(QMessageBox.StandardButton.Ok).click()
            (dialog,) = await wait(reviewed)
            assert isinstance(dialog, ReviewDialog) and model.chunk_calls >= 1
            assert controller.progress.isHidden()  # the run is over: the bar went away
            tree = dialog.tree
            assert tree.topLevelItemCount() == len(dialog.plan.objects) + len(dialog.plan.relations)
            first = next(tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
                         if tree.topLevelItem(i).text(1) == "object" and tree.topLevelItem(i).text(2) == "add")
            dropped = first.text(3)
            first.setCheckState(0, Qt.CheckState.Unchecked)
            tree.setCurrentItem(first)
            assert dialog.marked_passages() and all(dialog.marked_passages())  # the source passage, its quote marked
            done = signal_future(controller.finished)
            dialog.findChild(type(dialog.split_button), "extractionReviewApply").click()
            (results,) = await wait(done)
            assert len([r for r in results if r.change is not None]) == 1
            names = {o.name for o in store.all_objects(sid)}
            assert dropped not in names and len(names) > 10
            from cks_desktop.ui.toast import Toast  # the result is said where the person looks, too

            toast = window.findChild(Toast, "toast")
            assert toast is not None and toast.isVisible() and toast.tone == "success"
            assert toast.label.text() == window.statusBar().currentMessage()
    assert not fake.problems
