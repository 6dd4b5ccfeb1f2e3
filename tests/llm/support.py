"""Helpers shared by the provider tests (not fixtures: plain functions and context managers)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from cks_desktop.llm.assembler import StreamAssembler, collect
from cks_desktop.llm.messages import Message, ToolDef
from cks_desktop.llm.provider import Provider, ProviderError

from tests.fakes.server import FakeServer
from tests.fakes.providers import provider_for

TOOLS = [
    ToolDef("add_object", "Add an object to the graph.", {
        "type": "object",
        "properties": {"name": {"type": "string"}, "type": {"type": "string"},
                       "properties": {"type": "object"}},
        "required": ["name"],
    }),
    ToolDef("list_objects", "List objects.", {"type": "object", "properties": {}}),
]
HELLO = [Message.user("hello")]


@asynccontextmanager
async def opened(fake: FakeServer, **kwargs: Any) -> AsyncIterator[Provider]:
    """The real adapter pointed at ``fake``, closed on the way out."""
    provider = provider_for(fake, **kwargs)
    try:
        yield provider
    finally:
        await provider.aclose()


async def run_turn(provider: Provider, messages: Sequence[Message] = HELLO, tools: Sequence[ToolDef] = TOOLS, *,
                   system: str | None = None, timeout: float = 10.0) -> StreamAssembler:
    """Stream one turn into a strict assembler (event-order violations fail the test)."""
    stream = provider.stream(list(messages), list(tools), system=system)
    return await asyncio.wait_for(collect(stream, strict=True), timeout)


async def run_until_error(provider: Provider, messages: Sequence[Message] = HELLO,
                          tools: Sequence[ToolDef] = TOOLS, *,
                          timeout: float = 10.0) -> tuple[StreamAssembler, ProviderError]:
    """Stream one turn that must fail; returns what arrived before the error, and the error."""
    assembler = StreamAssembler(strict=True)

    async def consume() -> None:
        stream = provider.stream(list(messages), list(tools))
        try:
            async for event in stream:
                assembler.feed(event)
        finally:
            await stream.aclose()  # type: ignore[attr-defined]

    try:
        await asyncio.wait_for(consume(), timeout)
    except ProviderError as exc:
        return assembler, exc
    raise AssertionError(f"the stream ended without an error: {assembler.events}")
