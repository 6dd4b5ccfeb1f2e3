"""The process the transcript crash test kills: chat turns with graph-writing tool
calls, one after another, each saved to the transcript as ``ai_chat`` does in the app.

Run as ``python -m tests.reliability.chat_child DB SESSION``. Each round loads
the saved chat (as reopening the session does), then runs one ``ai_chat`` with
the in-process scripted provider: a batch of graph edits through
``evolve_knowledge``, two calls in one answer, streamed text, a final answer.
It prints ``round N`` after each round returns; it never stops by itself.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from tests.agent.helpers import turn_options
from tests.fakes.script import ScriptedCall, Turn, call_turn, text_turn
from tests.fakes.scripted import ScriptedProvider


def turns(tag: str, r: int) -> list[Turn]:
    names = [f"{tag}-{r}-{i}" for i in range(300)]
    ops = [{"op": "add_object", "type": "Note", "name": n, "properties": {"text": "x" * 50}, "label": f"$n{i}"}
           for i, n in enumerate(names)]
    ops += [{"op": "add_relation", "source": f"$n{i}", "target": f"$n{i + 1}", "type": "next"} for i in range(299)]
    return [
        call_turn("evolve_knowledge", {"operations": ops}, text="Adding the notes. "),
        Turn(text=["Linking ", "them."], tool_calls=[
            ScriptedCall("add_object", {"type": "Topic", "name": f"{tag}-{r}-topic"}),
            ScriptedCall("update_object", {"ref": names[0], "set_properties": {"first": True}})]),
        text_turn(*(["Done: 300 notes in a chain. " * 20] * 20)),
    ]


async def main(db: str, session_id: str) -> None:
    store = GraphStore.open(Path(db))
    transcript = TranscriptStore.for_store(store)
    registry = build_registry(store)
    tag = uuid.uuid4().hex[:8]
    print("ready", flush=True)
    for r in range(10_000):
        provider = ScriptedProvider(turns(tag, r))
        await ai_chat(session_id, transcript.load(session_id), f"Round {r}: add notes.",
                      ChatDeps(provider, registry, store, transcript),
                      turn_options(system_prompt="test", max_iterations=10), approver=StaticApprover(Decision.ALLOW))
        print(f"round {r}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
