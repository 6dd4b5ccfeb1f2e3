"""Images go with the exchange that brought them, within a per-request budget.

The budget (``agent/context.py``): a request carries at most ``IMAGE_COUNT_BUDGET`` (16) images
and ``IMAGE_BYTES_BUDGET`` (8 MB) of image data, the newest of the current exchange first; every
earlier exchange's image goes as a one-line placeholder. So forty 1 MB images attached over four
turns never make a later plain turn's request big: it carries no image at all.

The real Anthropic adapter and SDK against the fake server (which records every request body),
the real store and transcript; the images are real 1 MB PNGs of noise.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent import context as ctx
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.images import ImageStore
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.messages import ImagePart, Message, Text, ToolCallPart, ToolResultPart
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.images import sniff
from cks_desktop.tools.registry import ToolRegistry

from tests.agent.helpers import Recorder, turn_options
from tests.fakes.providers import make_fake, provider_for
from tests.fakes.script import text_turn

MB = 1024 * 1024


def noise_png(width: int = 577, height: int = 577) -> bytes:
    """A real PNG of random pixels, stored uncompressed: about 1 MB at the default size."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + os.urandom(width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 0))
            + chunk(b"IEND", b""))


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[Any]:
    store = GraphStore.open(tmp_path / "graph.sqlite3")
    store.session = store.create_session("Images")  # type: ignore[attr-defined]
    try:
        yield store
    finally:
        store.close()


def _images_in(body: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, list):
            for block in content:
                if block.get("type") == "image":
                    found.append(block)
                elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                    found += [b for b in block["content"] if b.get("type") == "image"]
    return found


@pytest.mark.asyncio
async def test_forty_images_over_four_turns_leave_a_later_plain_turn_small(graph: Any) -> None:
    sid = graph.session.id
    images = ImageStore(graph)
    transcript = TranscriptStore.for_store(graph)
    messages: list[Message] = []
    with make_fake("anthropic") as fake:
        provider = provider_for(fake, timeout=30.0)
        try:
            for turn in range(4):
                parts = [images.put(sid, sniff(noise_png())) for _ in range(10)]
                assert all(p.size >= MB - 64 * 1024 for p in parts)
                fake.queue(text_turn(f"Seen set {turn + 1}."))
                prompt = Message("user", [Text(f"Set {turn + 1} of screenshots."), *parts])
                messages = await ai_chat(sid, transcript.load(sid), prompt,
                                         ChatDeps(provider, ToolRegistry(graph), graph, transcript),
                                         turn_options(), approver=StaticApprover(Decision.ALLOW),
                                         on_event=Recorder())
            fake.queue(text_turn("Forty screenshots, all of a login page."))
            messages = await ai_chat(sid, transcript.load(sid), "What did they show?",
                                     ChatDeps(provider, ToolRegistry(graph), graph, transcript),
                                     turn_options(), approver=StaticApprover(Decision.ALLOW), on_event=Recorder())
        finally:
            await provider.aclose()
        requests = fake.generation_requests
    assert messages[-1].text == "Forty screenshots, all of a login page."
    assert len(requests) == 5
    for request in requests[:4]:  # each image turn: its own images only, within the budget
        sent = _images_in(request.body)
        assert 1 <= len(sent) <= ctx.IMAGE_COUNT_BUDGET
        assert sum(len(i["source"]["data"]) * 3 // 4 for i in sent) <= ctx.IMAGE_BYTES_BUDGET
        assert len(request.raw) < 12 * MB
    plain = requests[4]
    assert _images_in(plain.body) == []
    assert len(plain.raw) < 64 * 1024, f"a plain turn after 40 images sent {len(plain.raw):,} bytes"
    text = plain.raw.decode()
    assert text.count("image not sent again") == 40
    assert "attached by the person in turn 1" in text and "attached by the person in turn 4" in text
    saved = transcript.load(sid)  # the transcript keeps every image reference
    assert sum(len(m.images) for m in saved) == 40


def _image(n: int, size: int = MB) -> ImagePart:
    return ImagePart(f"id{n}", "image/png", 100, 100, size, bytes([n % 256]) * size)


def test_one_exchange_with_many_tool_images_sends_the_newest_within_the_budget() -> None:
    prompt = Message.user("Take screenshots until the page loads.")
    convo: list[Message] = [prompt]
    for n in range(20):
        call = ToolCallPart(f"c{n}", "mcp:browser:screenshot", {})
        convo.append(Message("assistant", [call]))
        convo.append(Message("tool", [ToolResultPart(f"c{n}", "mcp:browser:screenshot", f"screenshot {n}",
                                                     images=(_image(n),))]))
    fitted = ctx.fit(convo, system="s", tools=(), window=200_000, answer_tokens=1_000, estimator=ctx.Estimator())
    sent = [i for m in fitted.messages for p in m.parts if isinstance(p, ToolResultPart) for i in p.images]
    assert [i.image_id for i in sent] == [f"id{n}" for n in range(12, 20)]  # 8 MB: the newest eight
    assert fitted.images_left_out == 12
    first = next(p for m in fitted.messages for p in m.parts if isinstance(p, ToolResultPart))
    assert first.content.startswith("screenshot 0\n[image not sent again: image/png, 100×100, 1.0 MB, "
                                    "returned by mcp__browser__screenshot in turn 1.")
    assert convo[2].parts[0].images  # the conversation itself is untouched


def test_a_count_budget_holds_for_small_images() -> None:
    prompt = Message("user", [Text("Thumbnails"), *(_image(n, 10_000) for n in range(40))])
    fitted = ctx.fit([prompt], system="s", tools=(), window=200_000, answer_tokens=1_000, estimator=ctx.Estimator())
    kept = [p for p in fitted.messages[0].parts if isinstance(p, ImagePart)]
    assert [p.image_id for p in kept] == [f"id{n}" for n in range(40 - ctx.IMAGE_COUNT_BUDGET, 40)]
    assert fitted.images_left_out == 40 - ctx.IMAGE_COUNT_BUDGET
