"""One model round-trip: stream it into the llm package's assembler, showing text as it arrives.

The assembler is created by the caller and filled in place, so when the
stream fails or Stop cancels it, the loop still has the text that was already
shown (and keeps it in the transcript). Tool calls are taken only from a
stream that ended normally; a call cut off mid-stream is never run.

The request carries ``request_messages(messages)``, never the raw list: every
part bounded and unanswered prompts left out (see ``agent/request.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from cks_desktop.agent.request import request_messages
from cks_desktop.llm.assembler import StreamAssembler
from cks_desktop.llm.events import TextDelta
from cks_desktop.llm.messages import Message, ToolDef


async def stream_turn(provider: Any, messages: list[Message], tools: list[ToolDef], system: str | None,
                      assembler: StreamAssembler, on_text: Callable[[str], None]) -> StreamAssembler:
    """Consume one provider stream; ProviderError and CancelledError propagate (the stream is closed)."""
    stream = provider.stream(request_messages(messages), tools, system=system)
    closing = contextlib.aclosing(stream) if hasattr(stream, "aclose") else contextlib.nullcontext(stream)
    async with closing:
        async for event in stream:
            assembler.feed(event)
            if isinstance(event, TextDelta) and event.text:
                on_text(event.text)
    return assembler
