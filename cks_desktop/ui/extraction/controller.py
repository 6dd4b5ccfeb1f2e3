"""Runs one extraction for the window: estimate → ask → background run with progress → review → one change.

The flow, for the Documents panel's "Extract knowledge":
1. the document is read from the store on a worker thread; the chat's provider is used;
2. the estimate (calls and cost, cached parts) is shown and the person says go (skipped when every
   part is already cached: it costs nothing, and when the estimate is within the cap of Settings →
   Chat & agent → "Extracting documents": the run then stops if its real cost
   crosses the cap; an estimate over the cap says so, and going on runs it without the cap);
3. the run goes on in the background (``asyncio``; the store's work is on worker threads), the
   status area shows its progress with Pause and Cancel;
4. the review panel opens before writing when the document is longer than the setting
   ``extraction.review_over_chars`` (default 20,000 characters) or something needs review (a
   quote not found); otherwise the plan is written directly. The write is ONE change (the history
   reverts it), applied on a worker thread — or, for a document written without review when the
   setting ``extraction.write_per_chunk`` is true, one change per part.
What the settings decide (prices, cap, review, per part) is the use case's
(``runtime.extraction.ExtractionUseCase``), the same one ``documents extract`` calls.
Only one extraction runs at a time per window. Every dialog is ``open()``ed, never ``exec()``ed.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMessageBox

from cks_desktop.plural import counted
from cks_desktop.ui.dialogs import run_dialog
from cks_desktop.ui.extraction.progress import ExtractionProgress
from cks_desktop.ui.labels import plain_message_box

if TYPE_CHECKING:
    from cks_desktop.extraction.plan import Plan
    from cks_desktop.ui.main_window import MainWindow
    from cks_desktop.ui.toast import Tone

ORIGIN = "extraction"


class ExtractionController(QObject):
    dialogOpened = Signal(object)  # the estimate box or the review panel, once open (tests)
    finished = Signal(object)  # the list of ApplyResults, or None when nothing was written
    failed = Signal(str)

    def __init__(self, window: "MainWindow") -> None:
        super().__init__(window)
        self.window = window
        self.progress = ExtractionProgress()
        self.running = False
        self.menu: Any = None  # File → Extract knowledge… (ui.extraction.menu), set by install

    def request(self, session_id: str, document_id: str) -> None:
        self.window.tasks.spawn(self.run(session_id, document_id), name="extract-document")

    def _say(self, text: str, ms: int = 10000, tone: "Tone" = "info") -> None:
        """The run's news in the status bar and, where the person is looking, as a toast."""
        from cks_desktop.ui.toast import show_toast

        self.window.statusBar().showMessage(text, ms)
        show_toast(self.window, text, tone)

    async def run(self, session_id: str, document_id: str) -> None:
        from cks_desktop.documents.errors import DocumentError
        from cks_desktop.runtime.extraction import ExtractionStopped
        from cks_desktop.graph.errors import StoreError
        from cks_desktop.llm.provider import ProviderError

        if self.running:
            self._say("An extraction is already running; wait for it or cancel it first.")
            return
        self.running = True
        extraction = self.window.services.extraction
        try:
            doc = await asyncio.to_thread(extraction.document, session_id, document_id)
            async with self.window.services.providers.use() as provider:
                # chunking a 300-page document takes about half a second: not on the event loop
                ex = await asyncio.to_thread(lambda: extraction.start(
                    session_id, doc, provider, use_cap=False, on_progress=self.progress.update_progress))
                estimate = await asyncio.to_thread(ex.estimate)
                cap = extraction.cap()
                over = cap.over(estimate.calls, estimate.cost_usd)
                if estimate.calls and (over or not cap.is_set):
                    if not await self._confirm(doc.name, estimate, over):
                        return
                else:  # within the cap: no question, and the cap holds while it runs
                    ex.max_calls, ex.max_cost_usd = cap.max_calls, cap.max_cost_usd
                self.progress.start(ex, doc.name)
                try:
                    plan = await ex.run()
                finally:
                    self.progress.finish()
            await self._write(ex, plan, doc)
        except ExtractionStopped as exc:
            self._say(exc.message)
            self.failed.emit(exc.message)
        except (ProviderError, DocumentError, StoreError) as exc:
            message = getattr(exc, "message", None) or str(exc)
            self._say(message)
            self.failed.emit(message)
        finally:
            self.running = False

    async def _confirm(self, name: str, estimate: Any, over: list[str] | None = None) -> bool:
        cost = f"about ${estimate.cost_usd:.3f}" if estimate.cost_usd is not None else "unknown for this model"
        beyond = f" That is {' and '.join(over)}." if over else ""
        box = plain_message_box(self.window, icon=QMessageBox.Icon.Question, title="Extract knowledge",
                                text=f"Extract knowledge from {name}?",
                                informative=(f"{counted(estimate.chunks, 'part')} ({estimate.cached} already read): "
                                             f"at most {counted(estimate.calls, 'model call')}, cost {cost}.{beyond}"),
                                buttons=QMessageBox.StandardButton.Ok | QMessageBox.StandardButton.Cancel)
        code = await run_dialog(box, self.dialogOpened.emit)
        return code == QMessageBox.StandardButton.Ok

    async def _write(self, ex: Any, plan: "Plan", doc: Any) -> None:
        extraction = self.window.services.extraction
        big = len(doc.text) > extraction.review_over_chars()
        each = extraction.writes_per_part(doc, plan)
        while big or plan.needs_review():
            reviewed = await self._review(plan, doc.text, ex)
            if reviewed is None:
                self._say("Nothing was written.")
                self.finished.emit(None)
                return
            if reviewed[0] is plan:
                break
            plan, ex = reviewed  # split: planned again from the cache
        loop = asyncio.get_running_loop()

        def on_write(done: int, total: int) -> None:  # from the worker thread: hand it to the loop
            loop.call_soon_threadsafe(self.progress.show_writing, doc.name, done, total)

        self.progress.show_writing(doc.name, 0, 0)
        try:
            results = await asyncio.to_thread(lambda: extraction.apply(ex, plan, ORIGIN, per_part=each,
                                                                       on_write=on_write))
        finally:
            loop.call_soon(self.progress.finish)  # after the last progress callbacks
        written = [r for r in results if r.change is not None]
        self._say(f"{doc.name}: " + ("; ".join(r.summary for r in written) if written else
                                     "nothing new: the graph already has all of it."), tone="success")
        self.finished.emit(results)

    async def _review(self, plan: "Plan", text: str, ex: Any) -> "tuple[Plan, Any] | None":
        """The plan as reviewed; a NEW plan after a split; None when the person cancelled."""
        from cks_desktop.ui.extraction.review import ReviewDialog, merged_identities

        dialog = ReviewDialog(plan, text, self.window)
        split: list[Any] = []
        dialog.splitRequested.connect(split.append)
        code = await run_dialog(dialog, self.dialogOpened.emit)
        if code == 2 and split:
            pairs = merged_identities(split[0])
            await asyncio.to_thread(lambda: [ex.cache.mark_distinct(a, b) for a, b in pairs])
            again = await asyncio.to_thread(self.window.services.extraction.again, ex)
            return await again.run(), again
        return (plan, ex) if code == 1 else None
