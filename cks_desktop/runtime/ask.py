"""The ask use case: retrieval over a session's documents and graph, for the window and the CLI.

``retrieve`` runs the core's one retrieval function (``retrieval/service.py``) on a worker thread,
so neither the index's embedding nor the search ever runs on the event loop. ``answer`` retrieves,
then has a model write the answer from the numbered passages and checks every citation of it
(``runtime/answer.py``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from cks_desktop.runtime.answer import Answer, write
from cks_desktop.retrieval.index import IndexReport, PassageIndex, Progress
from cks_desktop.retrieval.service import (DEFAULT_BUDGET_CHARS, DEFAULT_K, Retrieval, RetrievalError, check_question,
                                           retrieve)

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.llm.provider import Provider

ANSWER_NEEDS_PROVIDER = ("Answering a question needs a model provider: pass --provider (anthropic, ollama, openai "
                         "or gemini) or choose one in Settings → Providers; --retrieve-only shows the passages "
                         "without one.")


class AskUseCase:
    """Retrieval on one store."""

    Error = RetrievalError
    check_question = staticmethod(check_question)  # the question stripped, or Error with one sentence

    def __init__(self, store: "GraphStore") -> None:
        self.store = store

    async def retrieve(self, session_id: str, question: str, *, k: int = DEFAULT_K,
                       budget_chars: int = DEFAULT_BUDGET_CHARS, progress: Progress | None = None) -> Retrieval:
        """The passages, objects and relations that answer ``question`` (index brought up to date first)."""
        return await asyncio.to_thread(retrieve, self.store, session_id, question, k=k,
                                       budget_chars=budget_chars, progress=progress)

    async def answer(self, provider: "Provider", session_id: str, question: str, *, k: int = DEFAULT_K,
                     outside: bool = False, progress: Progress | None = None) -> Answer:
        """Retrieve, have the model answer from the numbered passages, and check every citation."""
        found = await self.retrieve(session_id, question, k=k, progress=progress)
        return await write(provider, question, found, outside=outside)

    async def index(self, session_id: str, progress: Progress | None = None) -> IndexReport:
        """Bring the session's passages index up to date, on a worker thread."""
        return await asyncio.to_thread(PassageIndex(self.store).sync, session_id, progress)
