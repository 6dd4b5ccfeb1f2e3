"""Requests sent for one persistent 429: one chat turn and one extraction part, per provider.

Each provider's real adapter and SDK talk to its fake server (``tests/fakes``), which answers every
generation request 429 with ``Retry-After: 0`` and counts what arrives. ``max_retries`` is the
app's default (2), so the one retry policy (``llm/retry.py``) allows 1 + 2 = 3 requests per model
call. Prints a Markdown table (and the seconds each took), then a second one: one extraction part
against ``Retry-After: 1`` with ``max_retries`` 1 — the requests, the gap between them (the second
request must wait the second asked for, Ollama's included), and whether the extraction's progress
said "waiting 1 s".

    PYTHONPATH=. python bench/retry_requests.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cks_desktop.agent.chat_inputs import ChatDeps  # noqa: E402
from cks_desktop.agent.loop import ai_chat  # noqa: E402
from cks_desktop.agent.transcript import TranscriptStore  # noqa: E402
from cks_desktop.documents.readers import read_path  # noqa: E402
from cks_desktop.documents.store import DocumentStore  # noqa: E402
from cks_desktop.extraction.runner import Extraction, ExtractionStopped  # noqa: E402
from cks_desktop.graph.store import GraphStore  # noqa: E402
from cks_desktop.llm.factory import DEFAULT_MAX_RETRIES, adapter_for  # noqa: E402
from cks_desktop.llm.provider import ProviderConfig  # noqa: E402
from cks_desktop.tools.approval import Decision, StaticApprover  # noqa: E402
from cks_desktop.tools.builtin import build_registry  # noqa: E402
from tests.agent.helpers import turn_options  # noqa: E402
from tests.fakes.anthropic_fake import FakeAnthropic  # noqa: E402
from tests.fakes.gemini_fake import FakeGemini  # noqa: E402
from tests.fakes.llamacpp_fake import FakeLlamaCpp  # noqa: E402
from tests.fakes.ollama_fake import FakeOllama  # noqa: E402
from tests.fakes.openai_fake import FakeOpenAI  # noqa: E402
from tests.fakes.openai_responses_fake import FakeOpenAIResponses  # noqa: E402
from tests.fakes.script import Turn  # noqa: E402
from tests.fakes.server import FakeServer  # noqa: E402
from tests.fakes.vllm_fake import FakeVLLM  # noqa: E402

SERVERS: dict[str, tuple[Callable[[], FakeServer], dict[str, Any]]] = {
    "Anthropic": (FakeAnthropic, {}),
    "OpenAI chat completions": (FakeOpenAI, {}),
    "OpenAI Responses": (FakeOpenAIResponses, {"api": "responses"}),
    "OpenAI-compatible (vLLM)": (FakeVLLM, {}),
    "OpenAI-compatible (llama.cpp)": (FakeLlamaCpp, {}),
    "Ollama": (FakeOllama, {}),
    "Gemini": (FakeGemini, {}),
}
TEXT = "# Founding\n\nMarguerite Okonkwo founded the Northern Rail Company in 1871.\n"


def _generation(fake: FakeServer) -> int:
    """Generation requests so far (a fake without ``always`` keeps its queue: refill it)."""
    return len(fake.generation_requests)


def _persist(fake: FakeServer) -> None:
    turn = Turn(status=429, retry_after=0)
    if hasattr(fake, "always"):
        fake.always = turn
    else:
        fake.queue(*[turn] * 100)


async def _chat(fake: FakeServer, options: dict[str, Any], root: Path) -> int:
    config = ProviderConfig(fake.name, fake.default_model, fake.base_url, "test", timeout=10,
                            max_retries=DEFAULT_MAX_RETRIES, options=dict(options))
    provider = adapter_for(config)
    store = GraphStore.open(root / "chat.sqlite3")
    try:
        session_id = store.create_session("s").id
        transcript = TranscriptStore.for_store(store)
        await ai_chat(session_id, [], "Go.", ChatDeps(provider, build_registry(store), store, transcript),
                      turn_options(system_prompt="t"), approver=StaticApprover(Decision.ALLOW),
                      on_event=lambda e: None)
    finally:
        await provider.aclose()
        store.close()
    return _generation(fake)


async def _extract(fake: FakeServer, options: dict[str, Any], root: Path) -> int:
    config = ProviderConfig(fake.name, fake.default_model, fake.base_url, "test", timeout=10,
                            max_retries=DEFAULT_MAX_RETRIES, options=dict(options))
    provider = adapter_for(config)
    store = GraphStore.open(root / "extract.sqlite3")
    path = root / "note.md"
    path.write_text(TEXT, encoding="utf-8")
    try:
        session_id = store.create_session("s").id
        DocumentStore(store).add(session_id, [read_path(path, 1024 * 1024)])
        doc = DocumentStore(store).get(session_id, "note.md")
        try:
            await Extraction(store, session_id, doc, provider).run()
        except ExtractionStopped:
            pass
    finally:
        await provider.aclose()
        store.close()
    return _generation(fake)


async def _waited(fake: FakeServer, options: dict[str, Any], root: Path) -> tuple[int, float, bool]:
    """One extraction part against a persistent 429 with Retry-After: 1 and max_retries 1."""
    turn = Turn(status=429, retry_after=1)
    if hasattr(fake, "always"):
        fake.always = turn
    else:
        fake.queue(*[turn] * 10)
    config = ProviderConfig(fake.name, fake.default_model, fake.base_url, "test", timeout=10, max_retries=1,
                            options=dict(options))
    provider = adapter_for(config)
    store = GraphStore.open(root / "wait.sqlite3")
    path = root / "note.md"
    path.write_text(TEXT, encoding="utf-8")
    shown: list[str] = []
    try:
        session_id = store.create_session("s").id
        DocumentStore(store).add(session_id, [read_path(path, 1024 * 1024)])
        doc = DocumentStore(store).get(session_id, "note.md")
        await Extraction(store, session_id, doc, provider, on_progress=lambda p: shown.append(p.waiting)).run()
    finally:
        await provider.aclose()
        store.close()
    stamps = [r.at for r in fake.generation_requests]
    gap = stamps[1] - stamps[0] if len(stamps) > 1 else 0.0
    return len(stamps), gap, "waiting 1 s (rate limited)" in shown


async def main() -> None:
    print(f"max_retries = {DEFAULT_MAX_RETRIES}: at most {1 + DEFAULT_MAX_RETRIES} requests per model call\n")
    print("| provider | chat turn: requests | s | extraction part: requests | s |")
    print("|---|---|---|---|---|")
    for name, (make, options) in SERVERS.items():
        row = [name]
        for run in (_chat, _extract):
            with make() as fake, tempfile.TemporaryDirectory() as tmp:
                _persist(fake)
                began = time.monotonic()
                count = await asyncio.wait_for(run(fake, options, Path(tmp)), 120)
                row += [str(count), f"{time.monotonic() - began:.1f}"]
        print("| " + " | ".join(row) + " |")
    print("\nRetry-After: 1, max_retries = 1: one extraction part\n")
    print("| provider | requests | s between them | progress said \"waiting 1 s\" |")
    print("|---|---|---|---|")
    for name, (make, options) in SERVERS.items():
        with make() as fake, tempfile.TemporaryDirectory() as tmp:
            count, gap, said = await asyncio.wait_for(_waited(fake, options, Path(tmp)), 120)
        print(f"| {name} | {count} | {gap:.2f} | {'yes' if said else 'no'} |")


if __name__ == "__main__":
    asyncio.run(main())
