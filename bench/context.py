"""Benchmark of context management per model turn at 10, 100 and 1,000 messages.

In one run, interleaved, with the in-process scripted provider (no HTTP, no SDK, so the
loop's own cost is all there is):

- bare loop: ``ai_chat`` answering in two model turns with a 2-message history;
- ai_chat @ N: the same with an N-message history (prompts, tool calls, 2,000-character
  results, answers): what a turn costs in a long chat, context management included;
- fit @ N: ``agent/context.fit`` alone on that history, twice: with a window it fits in
  (the common case: estimate only) and with a window that forces stubs and cuts.

Target: context management under 5 ms per turn at 1,000 messages (``fit`` over budget).

Beside it, the price of the exact count a turn near the budget asks for (``count_tokens``:
the real Anthropic SDK to the fake's ``/v1/messages/count_tokens`` over 127.0.0.1, wall
time, so the SDK's request building and the HTTP round trip); a short chat never pays it.

    python bench/context.py              # 30 rounds
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.agent_loop import Setup, script, timed  # noqa: E402
from cks_desktop.agent.context import Estimator, fit  # noqa: E402
from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolResultPart  # noqa: E402
from tests.fakes.scripted import ScriptedProvider  # noqa: E402

SIZES = (10, 100, 1_000)
TARGET_MS = 5.0


def history(n: int) -> list[Message]:
    out: list[Message] = []
    i = 0
    while len(out) < n:
        call = ToolCallPart(f"c{i}", "bench_noop", {"note": f"page {i}"})
        out += [Message.user(f"Question {i}: what about page {i}?"), Message("assistant", [call]),
                Message("tool", [ToolResultPart(call.id, "bench_noop", "r" * 2_000)]),
                Message("assistant", [Text(f"Page {i} says this and that. " * 8)])]
        i += 1
    return out[:n - n % 4] if n % 4 else out


def fit_ms(messages: list[Message], window: int, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        started = time.process_time()
        fit(messages, system="system " * 400, tools=[], window=window, answer_tokens=4_096, estimator=Estimator(),
            allow_summary=False)
        samples.append((time.process_time() - started) * 1000)
    return statistics.median(samples)


async def count_ms(messages: list[Message], rounds: int) -> float:
    """Wall milliseconds of one exact count of ``messages`` (Anthropic SDK → the in-process fake)."""
    from tests.fakes.anthropic_fake import FakeAnthropic
    from tests.fakes.providers import provider_for

    samples = []
    with FakeAnthropic() as fake:
        provider = provider_for(fake)
        try:
            await provider.count_tokens(messages, [], system="system")  # type: ignore[attr-defined]  # warm
            for _ in range(rounds):
                started = time.perf_counter()
                await provider.count_tokens(messages, [], system="system")  # type: ignore[attr-defined]
                samples.append((time.perf_counter() - started) * 1000)
        finally:
            await provider.aclose()
    return statistics.median(samples)


async def main(rounds: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        setup = Setup(Path(tmp))
        histories = {n: history(n) for n in SIZES}
        bare: list[float] = []
        long: dict[int, list[float]] = {n: [] for n in SIZES}
        for _ in range(rounds):
            provider = ScriptedProvider(script())
            bare.append((await timed(lambda p=provider: setup.chat(p, transcript=False)))[1] / 2)
            for n in SIZES:
                provider = ScriptedProvider(script())
                provider.config = provider.config.__class__(name="scripted", model="scripted-1",
                                                            options={"context_window": 10_000_000})
                messages = histories[n]

                async def run(p: ScriptedProvider = provider, m: list[Message] = messages) -> None:
                    from cks_desktop.agent.loop import ai_chat

                    await ai_chat(setup.session.id, m, "Go", setup.deps(p), setup.options, approver=setup.approver)

                long[n].append((await timed(run))[1] / 2)
        setup.close()
    print(f"context management per model turn (median of {rounds} rounds, CPU ms)")
    print(f"bare loop (2 messages): {statistics.median(bare):.2f} ms per model turn")
    print(f"{'messages':>9} {'ai_chat':>9} {'vs bare':>9} {'fit (fits)':>11} {'fit (over)':>11}")
    worst = 0.0
    for n in SIZES:
        chat = statistics.median(long[n])
        fits = fit_ms(histories[n], 10_000_000, rounds)
        over = fit_ms(histories[n], 20_000, rounds)
        worst = max(worst, fits, over)
        print(f"{n:>9,} {chat:>7.2f}ms {chat - statistics.median(bare):>7.2f}ms {fits:>9.2f}ms {over:>9.2f}ms")
    counts = {n: await count_ms(histories[n], rounds) for n in SIZES}
    print("count_tokens round trip near the budget (Anthropic fake, wall ms): "
          + ", ".join(f"{n:,} messages {ms:.2f} ms" for n, ms in counts.items()))
    verdict = "OK" if worst < TARGET_MS else "OVER"
    print(f"target: context management < {TARGET_MS:g} ms per turn at 1,000 messages → worst {worst:.2f} ms: "
          f"{verdict}")
    return 0 if worst < TARGET_MS else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.rounds)))
