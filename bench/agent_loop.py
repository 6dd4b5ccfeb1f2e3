"""Benchmark of the chat loop's own cost per model turn (a script, not a test).

For each provider, in one run and interleaved (so drift in machine load hits
both sides alike):

- bare SDK: the vendor SDK streams the same two requests the loop makes (the
  keyword arguments are built once, up front, by the adapter's ``request``)
  from the same fake server, and the stream is consumed to the end;
- ai_chat: one ``ai_chat`` answering a prompt in two model turns (a text +
  tool-call turn, then a text turn) with the real registry (built-ins,
  ``construct_knowledge`` and a no-op tool the model calls), the real store
  for the system prompt, and the adapter turning wire events into neutral ones;
- ai_chat + transcript: the same, also saving each turn to the SQLite transcript.

The overhead per model turn is (ai_chat − bare SDK) / 2, from the medians.
Target: under 2 ms. A last row runs the loop against the in-process scripted
provider (no HTTP, no SDK): the loop's floor. Then, in the same run, the cost of
context management per turn at 10, 100 and 1,000 messages beside the bare loop
(``bench/context.py``; target under 5 ms at 1,000 messages); ``--no-context`` skips it.

    python bench/agent_loop.py                  # 200 rounds per provider
    python bench/agent_loop.py --rounds 50 --providers anthropic ollama

Runs on plain asyncio; qasync adds the same per-callback cost to both sides.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.fakes

from cks_desktop.agent.chat_inputs import ChatDeps, TurnOptions  # noqa: E402
from cks_desktop.agent.knowledge import register_agent_tools  # noqa: E402
from cks_desktop.agent.loop import ai_chat, tool_defs  # noqa: E402
from cks_desktop.agent.transcript import TranscriptStore  # noqa: E402
from cks_desktop.graph.store import GraphStore  # noqa: E402
from cks_desktop.llm.factory import adapter_for  # noqa: E402
from cks_desktop.llm.provider import ProviderConfig  # noqa: E402
from cks_desktop.llm.messages import Message  # noqa: E402
from cks_desktop.tools.approval import Decision, StaticApprover  # noqa: E402
from cks_desktop.tools.builtin import build_registry  # noqa: E402
from cks_desktop.tools.context import Run  # noqa: E402
from cks_desktop.tools.scopes import ChatGrant  # noqa: E402
from cks_desktop.tools.types import ALL_SCOPES, Caller, Policy, Scope, ToolSpec  # noqa: E402

from tests.fakes.openai_responses_fake import FakeOpenAIResponses  # noqa: E402
from tests.fakes.providers import PROVIDER_NAMES, make_fake  # noqa: E402
from tests.fakes.script import ScriptedCall, Turn  # noqa: E402
from tests.fakes.scripted import ScriptedProvider  # noqa: E402

TEXT_CHUNKS = [f"word{i} " for i in range(20)]
TURNS_PER_CHAT = 2
TARGET_MS = 2.0
# The four providers, and OpenAI's Responses API (the openai provider with ``api = "responses"``).
RESPONSES = "openai-responses"
BENCH_NAMES = [*PROVIDER_NAMES, RESPONSES]


def script() -> list[Turn]:
    return [Turn(text=TEXT_CHUNKS, tool_calls=[ScriptedCall("bench_noop", {"note": "x" * 40})]),
            Turn(text=TEXT_CHUNKS)]


async def _noop(args: dict[str, Any], ctx: Any) -> str:
    return "ok"


NOOP = ToolSpec(name="bench_noop", description="Does nothing (benchmark).",
                input_schema={"type": "object", "properties": {"note": {"type": "string"}}},
                scopes=frozenset({Scope.GRAPH_READ}), default_policy=Policy.AUTO, llm_exposed=True, handler=_noop)


class Setup:
    def __init__(self, folder: Path) -> None:
        self.store = GraphStore.open(folder / "bench.sqlite3")
        self.session = self.store.create_session("bench")
        self.store.apply(self.session.id, [{"op": "add_object", "type": "Person", "name": f"P{i}"}
                                           for i in range(50)], "bench")
        self.registry = build_registry(self.store)
        register_agent_tools(self.registry)
        self.registry.register(NOOP)
        self.transcript = TranscriptStore.for_store(self.store)
        self.approver = StaticApprover(Decision.ALLOW)
        self.options = TurnOptions(ChatGrant(ALL_SCOPES))  # every tool: the loop's cost, not the grant's

    def deps(self, provider: Any, *, transcript: bool = False) -> ChatDeps:
        return ChatDeps(provider, self.registry, self.store, self.transcript if transcript else None)

    async def chat(self, provider: Any, *, transcript: bool) -> list[Message]:
        return await ai_chat(self.session.id, [], "Go", self.deps(provider, transcript=transcript), self.options,
                             approver=self.approver)

    def close(self) -> None:
        self.store.close()


async def bare_stream(provider: Any, kwargs: dict[str, Any]) -> None:
    """The SDK call the adapter makes, consumed to the end, nothing else."""
    client = provider._client()
    name = provider.profile.name
    if name == "anthropic":
        stream = await client.messages.create(**kwargs)
    elif name == "openai" and (provider.config.options or {}).get("api") == "responses":
        stream = await client.responses.create(**kwargs)
    elif name == "openai":
        stream = await client.chat.completions.create(**kwargs)
    elif name == "ollama":
        stream = await client.chat(**kwargs)
    else:
        stream = await client.aio.models.generate_content_stream(**kwargs)
    async for _ in stream:
        pass


def serve(name: str) -> None:
    """Child process: a fake server that plays ``script()`` round and round until stdin closes.

    Running it in another process keeps its CPU (and GIL) out of the numbers,
    so the CPU time measured here is the client side alone: SDK plus loop.
    """
    fake = FakeOpenAIResponses().start() if name == RESPONSES else make_fake(name)
    turns = itertools.cycle(script())
    fake.next_turn = lambda body=None: next(turns)  # type: ignore[method-assign]
    print(json.dumps({"base_url": fake.base_url, "model": fake.default_model}), flush=True)
    sys.stdin.read()
    fake.close()


class RemoteFake:
    def __init__(self, name: str) -> None:
        self.name = name
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve", name], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        info = json.loads(self.proc.stdout.readline())
        self.base_url, self.model = info["base_url"], info["model"]

    def provider(self) -> Any:
        responses = self.name == RESPONSES
        return adapter_for(ProviderConfig(name="openai" if responses else self.name, model=self.model,
                                          base_url=self.base_url, api_key="test", timeout=30.0, max_retries=0,
                                          options={"api": "responses"} if responses else None))

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


async def timed(fn: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    """(wall ms, CPU ms of this process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    await fn()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


async def bench_provider(name: str, setup: Setup, rounds: int) -> dict[str, tuple[float, float]]:
    fake = RemoteFake(name)
    try:
        provider = fake.provider()
        try:
            # One warm-up chat records the exact history of the two turns.
            out = await setup.chat(provider, transcript=False)
            assert len(out) == 4, out
            tools, _ = tool_defs(setup.registry, Run(setup.session.id, Caller.MODEL, setup.approver))
            prompt_system = _system_prompt(setup)
            requests = [provider.request(out[:1], tools, prompt_system, None),
                        provider.request(out[:3], tools, prompt_system, None)]

            async def bare() -> None:
                for kwargs in requests:
                    await bare_stream(provider, kwargs)

            samples: dict[str, list[tuple[float, float]]] = {"bare": [], "chat": [], "chat_tx": []}
            for _ in range(3):  # warm every path
                await bare()
                await setup.chat(provider, transcript=True)
            for _ in range(rounds):
                samples["bare"].append(await timed(bare))
                samples["chat"].append(await timed(lambda: setup.chat(provider, transcript=False)))
                samples["chat_tx"].append(await timed(lambda: setup.chat(provider, transcript=True)))
        finally:
            await provider.aclose()
    finally:
        fake.close()
    return {k: (statistics.median(w for w, _ in v) / TURNS_PER_CHAT, statistics.median(c for _, c in v) / TURNS_PER_CHAT)
            for k, v in samples.items()}


def _system_prompt(setup: Setup) -> str:
    from cks_desktop.agent.loop import _build_prompt

    run = Run(setup.session.id, Caller.MODEL, setup.approver)
    tools, back = tool_defs(setup.registry, run)
    return _build_prompt(setup.store, setup.session.id, None, [back[t.name] for t in tools])


async def bench_floor(setup: Setup, rounds: int) -> float:
    samples = []
    for i in range(rounds + 3):
        provider = ScriptedProvider(script())
        _, cpu = await timed(lambda p=provider: setup.chat(p, transcript=False))
        if i >= 3:
            samples.append(cpu)
    return statistics.median(samples) / TURNS_PER_CHAT


async def main(rounds: int, providers: list[str]) -> int:
    with tempfile.TemporaryDirectory() as folder:
        setup = Setup(Path(folder))
        try:
            gc.collect()
            rows = [(name, await bench_provider(name, setup, rounds)) for name in providers]
            floor = await bench_floor(setup, rounds)
        finally:
            setup.close()
    print(f"ai_chat vs the bare SDK stream of the same bytes, per model turn (median of {rounds} rounds, "
          f"{TURNS_PER_CHAT} turns each, {len(TEXT_CHUNKS)} text chunks per turn; the fake server runs in "
          "another process)\n")
    print(f"{'':<16} {'--- CPU time of this process ---':^46} {'--- wall clock ---':^34}")
    print(f"{'provider':<16} {'bare SDK':>9} {'ai_chat':>9} {'overhead':>9} {'+transcript':>13} "
          f"{'bare SDK':>9} {'ai_chat':>9} {'overhead':>9}")
    worst = 0.0
    for name, r in rows:
        (bare_w, bare_c), (chat_w, chat_c), (_, tx_c) = r["bare"], r["chat"], r["chat_tx"]
        worst = max(worst, chat_c - bare_c)
        print(f"{name:<16} {bare_c:>7.2f}ms {chat_c:>7.2f}ms {chat_c - bare_c:>7.2f}ms {tx_c - bare_c:>11.2f}ms "
              f"{bare_w:>7.2f}ms {chat_w:>7.2f}ms {chat_w - bare_w:>7.2f}ms")
    print(f"\nloop floor (scripted provider, no HTTP, no SDK): {floor:.2f} ms CPU per model turn")
    verdict = "PASS" if worst < TARGET_MS else "FAIL"
    print(f"target: overhead < {TARGET_MS:g} ms per model turn (CPU) → worst {worst:.2f} ms: {verdict}")
    return 0 if verdict == "PASS" else 1


async def main_with_context(rounds: int, providers: list[str], context: bool) -> int:
    """The provider table, then the context-management table of the same run."""
    status = await main(rounds, providers)
    if context:
        from bench import context as context_bench  # imports this module: loaded only when asked

        print()
        status |= await context_bench.main(min(rounds, 30))
    return status


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--providers", nargs="+", choices=BENCH_NAMES, default=BENCH_NAMES)
    parser.add_argument("--no-context", action="store_true", help="skip the context-management table")
    parser.add_argument("--serve", choices=BENCH_NAMES, help=argparse.SUPPRESS)  # the child process
    ns = parser.parse_args()
    if ns.serve:
        serve(ns.serve)
        sys.exit(0)
    sys.exit(asyncio.run(main_with_context(ns.rounds, ns.providers, not ns.no_context)))
