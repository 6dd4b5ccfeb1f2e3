"""`cks-desktop chat --session S --usage [--json]` prints each answer's tokens, its
model turns and the session's total, with the cost where the model has a price (the table, or the
settings' ``agent.prices``); a model without one shows tokens only.

The real CLI in a subprocess against the fake OpenAI server (11 input + 7 output tokens a turn)."""

from __future__ import annotations

import json
from pathlib import Path

from cks_desktop.graph.store import GraphStore
from cks_desktop.settings import Settings

from tests.agent.test_chat_cli import chat, cks
from tests.fakes.providers import make_fake
from tests.fakes.script import Turn, call_turn, text_turn


def _home(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "home"
    root.mkdir()
    with GraphStore.open(root / "cks.sqlite3") as store:
        sid = store.create_session("Usage").id
    return root, sid


def _two_answers(root: Path, sid: str) -> None:
    with make_fake("openai") as fake:
        fake.queue(call_turn("list_types", {}), text_turn("One."),
                   Turn(text=["Two."], input_tokens=1000, output_tokens=500))
        assert chat(root, fake, sid, "First").returncode == 0
        assert chat(root, fake, sid, "Second").returncode == 0


def test_usage_without_a_price_shows_tokens_only(tmp_path: Path) -> None:
    root, sid = _home(tmp_path)
    empty = cks(root, "chat", "--session", sid, "--usage")
    assert empty.returncode == 0 and empty.stdout == "(no tokens used yet)\n"
    _two_answers(root, sid)
    proc = cks(root, "chat", "--session", sid, "--usage")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "answer 1 (exchange 1, gpt-test, 2 model turns): 22 in · 14 out",
        "  turn 1: 11 in · 7 out",
        "  turn 2: 11 in · 7 out",
        "answer 2 (exchange 2, gpt-test, 1 model turn): 1,000 in · 500 out",
        "session total (2 answers, 3 model turns): 1,022 in · 514 out",
        "(no cost shown: a model used here has no price; add one in Settings → Chat & agent → Prices)",
    ]


def test_usage_json_with_a_price_from_the_settings(tmp_path: Path) -> None:
    root, sid = _home(tmp_path)
    _two_answers(root, sid)
    settings = Settings.load(root / "settings.json")
    settings.data["agent"]["prices"] = {"openai/gpt-test": {"input": 2.0, "output": 10.0, "cached_input": 0.5}}
    settings.save()
    proc = cks(root, "chat", "--session", sid, "--usage", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["session"] == sid
    assert [a["exchange"] for a in data["answers"]] == [1, 2]
    first, second = data["answers"]
    assert (first["input_tokens"], first["output_tokens"], first["turns"]) == (22, 14, 2)
    assert [t["iteration"] for t in first["model_turns"]] == [1, 2]
    assert first["model_turns"][0]["provider"] == "openai" and first["model_turns"][0]["model"] == "gpt-test"
    assert second["cost_usd"] == round((1000 * 2.0 + 500 * 10.0) / 1e6, 6)
    total = data["total"]
    assert total["answers"] == 2 and total["turns"] == 3
    assert total["cost_usd"] == round(((22 + 1000) * 2.0 + (14 + 500) * 10.0) / 1e6, 6)
    text = cks(root, "chat", "--session", sid, "--usage").stdout
    assert "session total (2 answers, 3 model turns): 1,022 in · 514 out · $0.0072" in text


def test_usage_flags_are_checked(tmp_path: Path) -> None:
    root, sid = _home(tmp_path)
    both = cks(root, "chat", "--session", sid, "--usage", "hello")
    assert both.returncode == 2 and "not both" in both.stderr and "Traceback" not in both.stderr
    budget = cks(root, "chat", "--session", sid, "--usage", "--budget-tokens", "10")
    assert budget.returncode == 2 and "--budget-tokens" in budget.stderr
    unknown = cks(root, "chat", "--session", "nope", "--usage")
    assert unknown.returncode == 2 and "no session 'nope'" in unknown.stderr


def test_a_gateway_s_reported_cost_is_what_the_answer_cost(tmp_path: Path) -> None:
    """OpenRouter says what it billed (``usage.cost``): that is stored and shown, whatever the table says."""
    from tests.fakes.openrouter_fake import PRICE_IN, PRICE_OUT, FakeOpenRouter

    root, sid = _home(tmp_path)
    with FakeOpenRouter() as fake:
        fake.queue(text_turn("Hi."))
        proc = chat(root, fake, sid, "Hello")
        assert proc.returncode == 0, proc.stderr
    data = json.loads(cks(root, "chat", "--session", sid, "--usage", "--json").stdout)
    assert data["total"]["cost_usd"] == round(11 * PRICE_IN + 7 * PRICE_OUT, 6)


def test_a_pre_release_usage_table_gets_its_cost_column(tmp_path: Path) -> None:
    import sqlite3

    from cks_desktop.agent import usage
    from cks_desktop.agent.transcript import TranscriptStore
    from cks_desktop.llm.events import Usage

    root, sid = _home(tmp_path)
    conn = sqlite3.connect(root / "cks.sqlite3")
    conn.execute("ALTER TABLE chat_usage DROP COLUMN reported_cost")  # as an early build of step 6 made it
    conn.commit()
    conn.close()
    with GraphStore.open(root / "cks.sqlite3") as store:
        transcript = TranscriptStore.for_store(store)
        assert usage.answers(transcript, sid) == []  # readable before the repair
        usage.record(transcript, sid, 1, None, Usage(5, 3, cost_usd=0.25))
        (answer,) = usage.answers(transcript, sid)
    assert (answer.tokens.input_tokens, answer.tokens.cost) == (5, 0.25)


def test_sessions_show_has_the_session_s_tokens(tmp_path: Path) -> None:
    root, sid = _home(tmp_path)
    plain = cks(root, "sessions", "show", sid)
    assert plain.returncode == 0 and "Tokens:" not in plain.stdout  # nothing spent yet: no line
    _two_answers(root, sid)
    shown = cks(root, "sessions", "show", sid)
    assert "Tokens:     1,022 in · 514 out   (2 answers; `chat --usage` has the details)" in shown.stdout
    data = json.loads(cks(root, "sessions", "show", sid, "--json").stdout)
    assert data["usage"]["answers"] == 2 and data["usage"]["input_tokens"] == 1022
