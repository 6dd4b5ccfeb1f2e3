"""Benchmark: what a request with the person's images costs the event loop.

Ten images of about 1 MB each (real PNG headers, incompressible pixels) in one user message, sent
to a model that takes images, with the real adapters' ``request()`` (what the SDK is handed):

- cold, on the loop: the first turn, nothing encoded yet, the request built on the loop (what
  happened before ``images_ready`` encoded off the loop);
- warm, on the loop: a later turn, every image already encoded (base64 / data URL cached);
- prepared: ``images_ready`` (encodes in a worker thread) then ``request()`` — the loop's longest
  stall measured by a 1 ms ticker, and the wall time of the whole preparation.

    python bench/images.py            # 5 rounds, median
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import struct
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cks_desktop.agent.images import part_of  # noqa: E402
from cks_desktop.llm.messages import ImagePart, Message, Part, Text  # noqa: E402
from cks_desktop.llm.provider import ProviderConfig  # noqa: E402
from cks_desktop.llm.vision import images_ready  # noqa: E402
from cks_desktop.tools import images as image_cache  # noqa: E402
from cks_desktop.tools.images import sniff  # noqa: E402

COUNT, SIZE = 10, 1024 * 1024


def big_png(seed: int) -> bytes:
    """A PNG of about ``SIZE`` bytes: a valid header, random (incompressible) pixel data."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    side = 590  # 590 × 590 × 3 ≈ 1 MB of RGB
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    pixels = os.urandom(SIZE - 64) + seed.to_bytes(4, "big")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def providers() -> dict[str, Any]:
    from cks_desktop.llm.providers.anthropic import AnthropicProvider
    from cks_desktop.llm.providers.openai_compat import OpenAICompatProvider
    from cks_desktop.llm.providers.openai_responses import OpenAIResponsesProvider

    return {
        "anthropic": AnthropicProvider(ProviderConfig("anthropic", "claude-sonnet-4-5", api_key="x")),
        "openai (chat)": OpenAICompatProvider(ProviderConfig("openai", "gpt-4o", api_key="x")),
        "openai (responses)": OpenAIResponsesProvider(ProviderConfig("openai", "gpt-4o", api_key="x")),
    }


def forget() -> None:
    """Empty the encoding caches: a first turn."""
    image_cache.clear_encoded()


def ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


async def prepared(provider: Any, messages: list[Message]) -> tuple[float, float]:
    """(the loop's longest stall, wall time) for ``images_ready`` + ``request()``."""
    stall = 0.0
    done = False

    async def ticker() -> None:
        nonlocal stall
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            stall = max(stall, now - last)
            last = now

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.005)
    start = time.perf_counter()
    if provider is not None:
        await images_ready(provider, messages)
        provider.request(messages, [], None, None)
    else:  # the ticker alone: what the machine's load costs it
        await asyncio.sleep(0.05)
    wall = time.perf_counter() - start
    await asyncio.sleep(0.003)
    done = True
    await tick
    return stall * 1000, wall * 1000


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    parts: list[Part] = [Text("What do these show?")]
    parts += [part_of(sniff(big_png(i))) for i in range(COUNT)]
    assert all(isinstance(p, ImagePart) and p.data for p in parts[1:])
    messages = [Message("user", parts)]
    rows = []
    for name, provider in providers().items():
        cold, warm, stall, wall = [], [], [], []
        for _ in range(args.rounds):
            forget()
            cold.append(ms(lambda: provider.request(messages, [], None, None)))
            warm.append(ms(lambda: provider.request(messages, [], None, None)))
            forget()
            s, w = await prepared(provider, messages)
            stall.append(s)
            wall.append(w)
        rows.append((name, *(statistics.median(x) for x in (cold, warm, stall, wall))))
        await provider.aclose()
    idle = statistics.median([(await prepared(None, messages))[0] for _ in range(args.rounds)])
    rows.append(("(ticker alone, 50 ms)", float("nan"), float("nan"), idle, float("nan")))
    print(f"{COUNT} × {SIZE // 1024} kB images, one user message; median of {args.rounds} rounds (ms)\n")
    print("| adapter | cold, on the loop | warm, on the loop | prepared: longest loop stall | prepared: wall |")
    print("|---|---|---|---|---|")
    for name, cold_ms, warm_ms, stall_ms, wall_ms in rows:
        print(f"| {name} | {cold_ms:.1f} | {warm_ms:.1f} | {stall_ms:.1f} | {wall_ms:.1f} |")


if __name__ == "__main__":
    asyncio.run(main())
