"""An extraction says "waiting N s" while the provider's stream waits out a 429's Retry-After, in the
core's progress, in the CLI's progress lines and in the window's progress label; the requests stay
within ``1 + max_retries`` per part. The fake OpenAI server answers 429 with ``Retry-After: 1`` and
counts every request it receives."""

from __future__ import annotations

import asyncio
import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.extraction.runner import Extraction as Run
from cks_desktop.extraction.runner import Progress
from cks_desktop.graph.store import GraphStore
from cks_desktop.settings.sections import Extraction
from tests.extraction.harness import make_setup
from tests.extraction.test_extract_cli import ENV, MAIN, _argv
from tests.extraction.world import make_world, render_world
from tests.fakes.extraction_reader import Noise, ReaderModel
from tests.fakes.providers import make_fake, provider_for
from tests.fakes.script import Turn
from tests.ui.conftest import home, open_window  # noqa: F401  (home is a fixture)
from tests.ui.helpers import signal_future, wait

WAITING = "waiting 1 s (rate limited)"


class RefusedFirst:
    """A side turn: the first model request is refused with 429 + Retry-After: 1, the rest are read."""

    def __init__(self, model: ReaderModel) -> None:
        self.model = model
        self.refused = 0

    def __call__(self, body: Any) -> Turn | None:
        if self.refused == 0:
            self.refused += 1
            return Turn(status=429, retry_after=1)
        return self.model(body)


@pytest.mark.asyncio
async def test_the_progress_says_waiting_while_a_retry_after_is_waited_out(tmp_path: Path) -> None:
    path = tmp_path / "note.md"
    path.write_text("# Founding\n\nMarguerite Okonkwo founded the Northern Rail Company in 1871.\n", encoding="utf-8")
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    try:
        session_id = store.create_session("s").id
        DocumentStore(store).add(session_id, [read_path(path, 1024 * 1024)])
        doc = DocumentStore(store).get(session_id, "note.md")
        with make_fake("openai") as fake:
            fake.always = Turn(status=429, retry_after=1)
            provider = await asyncio.to_thread(provider_for, fake, max_retries=1)
            seen: list[str] = []

            def note(p: Progress) -> None:
                seen.append(p.waiting)

            try:
                ex = Run(store, session_id, doc, provider, on_progress=note)
                await asyncio.wait_for(ex.run(), 30)
            finally:
                await provider.aclose()
            assert len(fake.generation_requests) == 2  # 1 + max_retries
    finally:
        store.close()
    assert WAITING in seen and seen[seen.index(WAITING) + 1] == ""  # shown during the wait, gone after it
    assert ex.progress.waiting == "" and len(ex.progress.failed_chunks) == 1


def test_the_clis_progress_lines_say_waiting(tmp_path: Path) -> None:
    setup = make_setup(tmp_path, extras_per_doc=10)
    setup.store.close()
    home_dir, sid = setup.store.path.parent, setup.session_id
    (home_dir / "settings.json").write_text(json.dumps({"providers": {"openai": {"max_retries": 1}}}),
                                            encoding="utf-8")
    with make_fake("openai") as fake:
        side = RefusedFirst(ReaderModel(Noise(level=0.0)))
        fake.side_turn = side
        out = subprocess.run(_argv(home_dir, fake, "--session", sid, "founding.md", "--review-file",
                                   str(tmp_path / "plan.json")),
                             capture_output=True, text=True, encoding="utf-8", env=ENV, cwd=MAIN, timeout=120,
                             stdin=subprocess.DEVNULL)
        assert out.returncode == 0, out.stderr
        assert side.refused == 1 and side.model.calls >= 1
        assert len(fake.generation_requests) == 1 + side.model.calls  # one refused, then one a part
    lines = out.stderr.splitlines()
    waiting = [line for line in lines if WAITING in line]
    assert len(waiting) == 1 and waiting[0].startswith("0/")  # said once, before the first part is done
    assert WAITING not in lines[-1]


@pytest.mark.asyncio
async def test_the_windows_progress_label_says_waiting(qtbot, home: Path, tmp_path: Path) -> None:
    docs = render_world(make_world(extras_per_doc=10), tmp_path / "docs")
    with make_fake("openai") as fake:
        side = RefusedFirst(ReaderModel(Noise(level=0.0)))
        fake.side_turn = side

        def factory(_name: str, _settings: Any, _secrets: Any) -> Any:
            return provider_for(fake, max_retries=1)

        async with open_window(home, fake=fake, provider="openai", factory=factory) as window:
            window.sidebar.create_session()
            sid = window.current_session
            doc = DocumentStore(window.services.store).add(sid, [read_path(docs[0].path, 10**8)]).added[0]
            settings = window.services.settings
            settings.set_section(replace(settings.section(Extraction), review_over_chars=0))  # always review
            controller = window.extraction
            shown: list[str] = []
            update = controller.progress.update_progress

            def record(p: Progress) -> None:
                update(p)
                shown.append(controller.progress.label.text())

            controller.progress.update_progress = record  # type: ignore[method-assign]
            opened = signal_future(controller.dialogOpened)
            controller.request(sid, doc.id)
            (box,) = await wait(opened)
            after = signal_future(controller.dialogOpened)
            box.button(box.StandardButton.Ok).click()
            (dialog,) = await wait(after, 60)
            dialog.reject()
        assert side.refused == 1
    waiting = [text for text in shown if WAITING in text]
    assert len(waiting) == 1 and waiting[0].endswith(f", {WAITING}")
    assert WAITING not in shown[-1]
