"""a per-answer budget of tokens or dollars ends the answer with a notice and Continue.

Real adapters and SDKs against the fake servers (each turn reports 11 input + 7 output tokens),
the real CLI in a subprocess, and the Qt-free presenter for the reopened chat."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent import events as ev
from cks_desktop.agent.budget import AnswerBudget, BudgetError, check_cost, check_tokens, session_budget, \
    set_session_budget
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.settings import Settings
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from cks_desktop.ui.chat.model import ChatModel
from cks_desktop.ui.chat.presenter import ChatPresenter
from tests.agent.helpers import turn_options
from tests.agent.test_chat_cli import chat as cli_chat
from tests.fakes.providers import PROVIDER_NAMES, make_fake, provider_for
from tests.fakes.script import Turn, call_turn, text_turn

PER_TURN = 11 + 7  # what every fake reports for one model turn


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GraphStore]:
    s = GraphStore.open(tmp_path / "cks.sqlite3")
    try:
        yield s
    finally:
        s.close()


async def answer(store: GraphStore, fake: Any, session_id: str, budget: AnswerBudget | None,
                 prompt: str | None = "Go.", max_iterations: int = 8) -> list[Any]:
    seen: list[Any] = []
    provider = await asyncio.to_thread(provider_for, fake)
    try:
        transcript = TranscriptStore.for_store(store)
        await ai_chat(session_id, transcript.load(session_id), prompt,
                      ChatDeps(provider, build_registry(store), store, transcript),
                      turn_options(system_prompt="t", budget=budget, max_iterations=max_iterations),
                      approver=StaticApprover(Decision.ALLOW), on_event=seen.append)
    finally:
        await provider.aclose()
    return seen


def calls(n: int) -> list[Turn]:
    return [call_turn("list_types", {}) for _ in range(n)]


@pytest.mark.asyncio
@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
async def test_a_token_budget_ends_the_answer_with_a_notice_and_continue_goes_on(
        store: GraphStore, provider_name: str) -> None:
    with make_fake(provider_name) as fake:
        session_id = store.create_session("s").id
        fake.queue(*calls(4), text_turn("Done."))
        seen = await answer(store, fake, session_id, AnswerBudget(tokens=2 * PER_TURN))
        assert len(fake.generation_requests) == 2  # stopped after the turn that reached it
        limits = [e for e in seen if isinstance(e, ev.IterationLimit)]
        assert [(e.kind, e.limit) for e in limits] == [("budget", 2)]
        assert "Reached this answer's budget (36 tokens; used 36 tokens)" in limits[0].message
        notices = [e for e in seen if isinstance(e, ev.AssistantMessage) and e.notice is ev.Notice.BUDGET]
        assert len(notices) == 1 and notices[0].message.text == limits[0].message
        assert isinstance(seen[-1], ev.Finished) and seen[-1].reason == "limit"
        # Continue: a new answer with its own budget, from where the chat stopped.
        seen = await answer(store, fake, session_id, AnswerBudget(tokens=10 * PER_TURN), prompt=None)
    assert isinstance(seen[-1], ev.Finished) and seen[-1].reason == "stop"
    assert "".join(e.text for e in seen if isinstance(e, ev.TextDelta)) == "Done."
    history = TranscriptStore.for_store(store).history(session_id)
    assert [r.notice for r in history if r.notice is not None] == [ev.Notice.BUDGET]


@pytest.mark.asyncio
async def test_the_final_answer_is_never_cut_and_no_budget_means_no_notice(store: GraphStore) -> None:
    with make_fake("openai") as fake:
        session_id = store.create_session("s").id
        fake.queue(text_turn("All at once."))
        seen = await answer(store, fake, session_id, AnswerBudget(tokens=1))  # reached by the only turn
        assert isinstance(seen[-1], ev.Finished) and seen[-1].reason == "stop"
        fake.queue(*calls(2), text_turn("Fine."))
        seen = await answer(store, fake, session_id, AnswerBudget())
    assert not [e for e in seen if isinstance(e, ev.IterationLimit)]
    assert isinstance(seen[-1], ev.Finished) and seen[-1].reason == "stop"


@pytest.mark.asyncio
async def test_a_cost_budget_uses_the_settings_prices(store: GraphStore) -> None:
    prices = {"openai/gpt-test": {"input": 1000, "output": 1000}}  # 18 tokens → $0.018 a turn
    with make_fake("openai") as fake:
        session_id = store.create_session("s").id
        fake.queue(*calls(4), text_turn("Done."))
        seen = await answer(store, fake, session_id, AnswerBudget(cost_usd=0.03, prices=prices))
        assert len(fake.generation_requests) == 2
    limits = [e for e in seen if isinstance(e, ev.IterationLimit)]
    assert len(limits) == 1 and "$0.03; used 36 tokens, $0.0360" in limits[0].message


@pytest.mark.asyncio
async def test_a_cost_budget_on_a_model_without_a_price_does_not_stop(store: GraphStore) -> None:
    with make_fake("openai") as fake:
        session_id = store.create_session("s").id
        fake.queue(*calls(2), text_turn("Done."))
        seen = await answer(store, fake, session_id, AnswerBudget(cost_usd=0.0001))
    assert isinstance(seen[-1], ev.Finished) and seen[-1].reason == "stop"


@pytest.mark.asyncio
async def test_a_turn_without_usage_is_counted_by_estimate(store: GraphStore) -> None:
    with make_fake("openai") as fake:
        session_id = store.create_session("s").id
        fake.queue(*[Turn(tool_calls=call_turn("list_types", {}).tool_calls, input_tokens=0, output_tokens=0)
                     for _ in range(3)], text_turn("Done."))
        seen = await answer(store, fake, session_id, AnswerBudget(tokens=100))
        assert len(fake.generation_requests) == 1  # the system prompt and tools alone are over 100
    limits = [e for e in seen if isinstance(e, ev.IterationLimit)]
    assert len(limits) == 1 and "(estimated)" in limits[0].message


def test_values_are_checked_with_one_sentence(tmp_path: Path) -> None:
    assert check_tokens(" 50,000 ") == 50_000 and check_tokens("") is None
    assert check_cost("$0.50") == 0.5 and check_cost(None) is None
    for bad in ("lots", 0, -3, True):
        with pytest.raises(BudgetError) as info:
            check_tokens(bad)
        assert str(info.value).endswith(".") and "\n" not in str(info.value)
    for bad in ("cheap", 0, float("nan"), -1):
        with pytest.raises(BudgetError):
            check_cost(bad)
    settings = Settings.load(tmp_path / "settings.json")
    with pytest.raises(BudgetError):
        set_session_budget(settings, "s1", "100", "free")
    assert session_budget(settings, "s1").empty  # nothing half-written
    set_session_budget(settings, "s1", "100", "0.25")
    settings.save()
    again = Settings.load(tmp_path / "settings.json")
    assert (session_budget(again, "s1").tokens, session_budget(again, "s1").cost_usd) == (100, 0.25)
    set_session_budget(again, "s1", "", "")
    assert "session_budgets" not in again.data["agent"]


def test_the_reopened_chat_offers_continue_after_a_budget_notice(store: GraphStore) -> None:
    with make_fake("anthropic") as fake:
        session_id = store.create_session("s").id
        fake.queue(*calls(3))
        asyncio.run(answer(store, fake, session_id, AnswerBudget(tokens=PER_TURN)))
    presenter = ChatPresenter(ChatModel())
    presenter.load(TranscriptStore.for_store(store).history(session_id))
    assert presenter.limit_reached


def test_cli_budget_flags(tmp_path: Path) -> None:
    root = tmp_path / "home"
    root.mkdir()
    with GraphStore.open(root / "cks.sqlite3") as s:
        sid = s.create_session("CLI").id
    with make_fake("openai") as fake:
        fake.queue(*calls(4), text_turn("Done."))
        proc = cli_chat(root, fake, sid, "--budget-tokens", str(PER_TURN), "Go")
        assert len(fake.generation_requests) == 1
        assert proc.returncode == 1, (proc.stdout, proc.stderr)
        assert "Reached this answer's budget (18 tokens; used 18 tokens)" in proc.stdout
        assert 'run the command again with the prompt "Continue."' in proc.stderr
        fake.queue(*calls(1), text_turn("Done."))
        proc = cli_chat(root, fake, sid, "--json", "--budget-cost", "0.5", "Go")
        bad = cli_chat(root, fake, sid, "--budget-tokens", "many", "Go")
    assert proc.returncode == 0, proc.stderr  # no price for gpt-test: the budget cannot be checked, said once
    assert proc.stderr.count("--budget-cost") == 1 and "no price" in proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert events[-1]["type"] == "finished"
    assert bad.returncode == 2 and "token budget" in bad.stderr and "Traceback" not in bad.stderr
