"""An ordinary chat answer's citations of the passages its turn retrieved are checked.

The real Assistant on a real data folder with real documents; the model is a fake served over the
real OpenAI and Anthropic wires that calls ``retrieve_passages`` and answers only from the passages
the tool result it was sent carries (``tests/fakes/chat_reader.py``), citing them by the number the
tool gave them. The verdict is on the turn's result, on the answer's event and in the transcript.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from cks_desktop.agent import events as ev
from cks_desktop.agent.citations import AnswerCitations, check_answer, given_in
from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolResultPart
from cks_desktop.paths import resolve
from cks_desktop.runtime import AppServices
from cks_desktop.secrets import SecretStore
from cks_desktop.tools.approval import Decision, StaticApprover

from tests.fakes.chat_reader import ChatReader
from tests.fakes.providers import make_fake, provider_for
from tests.fakes.script import text_turn
from tests.retrieval.conftest import DISTRACTORS, add_text

TIMEOUT = 60
REPORT = ("The Northern Rail Company opened its first line in 1854.\n\n"
          "The company's chief engineer, Ada Lovelace, designed the iron bridge at Kellby.\n\n"
          "Passengers paid two pennies a mile on the new line.")
QUESTION = "Who designed the iron bridge at Kellby?"


@pytest.fixture(params=["openai", "anthropic"])
def fake(request: pytest.FixtureRequest) -> Iterator[Any]:
    with make_fake(request.param) as server:
        yield server


@pytest_asyncio.fixture
async def services(tmp_path: Path, fake: Any) -> AsyncIterator[AppServices]:
    home = tmp_path / "home"
    home.mkdir()
    made = AppServices.open(resolve(home), secrets=SecretStore(secure=False),
                            provider_factory=lambda *_a: provider_for(fake))
    made.settings.default_provider = fake.name
    try:
        yield made
    finally:
        await made.aclose()


def _session(services: AppServices) -> tuple[str, str]:
    sid = services.store.create_session("Rail").id
    doc = add_text(services.store, sid, "report.txt", REPORT)
    for i, text in enumerate(DISTRACTORS):
        add_text(services.store, sid, f"other{i}.txt", text)
    return sid, doc


async def _ask(services: AppServices, sid: str) -> tuple[Any, list[ev.AgentEvent]]:
    events: list[ev.AgentEvent] = []
    turn = await asyncio.wait_for(services.assistant.run(sid, QUESTION, approver=StaticApprover(Decision.ALLOW),
                                                         on_event=events.append), TIMEOUT)
    return turn, events


@pytest.mark.asyncio
async def test_a_checked_citation_names_the_exact_span_of_the_passage_the_tool_numbered(
        services: AppServices, fake: Any) -> None:
    sid, doc = _session(services)
    fake.side_turn = ChatReader()
    turn, events = await _ask(services, sid)
    assert turn.reason == "stop"
    verdict = turn.citations
    assert isinstance(verdict, AnswerCitations) and not verdict.unsupported and verdict.passages >= 1
    [source] = verdict.sources
    assert source.document == "report.txt" and source.document_id == doc
    assert source.quote == "The company's chief engineer, Ada Lovelace, designed the iron bridge at Kellby"
    assert REPORT[source.start:source.end] == source.quote  # the document's own characters
    # The tool numbered what the model read; the model cited that number.
    sent = json.dumps(fake.generation_requests[-1].body)
    assert '\\"n\\": 1' in sent and f"[{verdict.cited[0].n} " in turn.messages[-1].text
    # The same verdict on the answer's event and, after a reload, in the transcript.
    answer = [e for e in events if isinstance(e, ev.AssistantMessage) and e.message.text][-1]
    assert answer.citations == verdict
    assert ev.event_to_json(answer)["citations"] == verdict.to_json()
    assert services.transcripts.history(sid)[-1].citations == verdict
    # What a model is sent next time carries no verdict: it is the app's bookkeeping.
    assert all("cited" not in json.dumps(m.to_json()) for m in services.transcripts.load(sid))


@pytest.mark.asyncio
async def test_a_citation_of_a_passage_never_given_or_a_misquote_is_unsupported(
        services: AppServices, fake: Any) -> None:
    sid, _doc = _session(services)
    fake.side_turn = ChatReader("mixed")
    turn, _events = await _ask(services, sid)
    verdict = turn.citations
    assert verdict is not None and len(verdict.sources) == 1
    assert [(c.n, c.reason) for c in verdict.unsupported] == [(99, "not_given"), (1, "quote_not_found")]
    assert verdict.unsupported_line() == (
        "Not in the passages: [99] “painted red” (the model was given no passage with this number); "
        "[1] “The company's chief engineer, Ada Lovelace, designed the iron bridge at certainly” "
        "(the quoted words are not in this passage)")
    from cks_desktop.agent.chat_export import export_chat

    exported = export_chat(services.store, sid, "markdown")  # the export says what the chat marks
    assert verdict.unsupported_line() + "\n" in exported
    assert json.loads(export_chat(services.store, sid, "json"))["messages"][-1]["citations"] == verdict.to_json()
    marks = list(verdict.marks(turn.messages[-1].text))
    assert [(m.n, m.cited is not None and m.cited.checked) for m in marks] == [(1, True), (99, False), (1, False)]


@pytest.mark.asyncio
async def test_an_answer_of_a_turn_that_retrieved_nothing_is_not_checked(services: AppServices, fake: Any) -> None:
    sid, _doc = _session(services)
    fake.queue(text_turn("Three steps: [1] plan, [2] build."))
    turn, events = await _ask(services, sid)
    assert turn.citations is None and services.transcripts.history(sid)[-1].citations is None
    answer = [e for e in events if isinstance(e, ev.AssistantMessage)][-1]
    assert "citations" not in ev.event_to_json(answer)


def _result(call_id: str, passages: list[dict[str, Any]]) -> Message:
    return Message("tool", [ToolResultPart(call_id, "retrieve_passages", json.dumps({"passages": passages}), False)])


def _passage(n: int, text: str) -> dict[str, Any]:
    return {"n": n, "document": "d.txt", "document_id": "D", "page": None, "start": 100 * n,
            "end": 100 * n + len(text), "text": text, "score": 1.0}


def test_numbers_run_on_across_calls_and_a_cut_result_gives_nothing_to_cite() -> None:
    turn = [Message.user("q"),
            Message("assistant", [ToolCallPart("c1", "retrieve_passages", {"question": "a"}),
                                  ToolCallPart("c2", "retrieve_passages", {"question": "b"})]),
            _result("c1", [_passage(1, "Alpha is first."), _passage(2, "Beta is second.")]),
            Message("tool", [ToolResultPart("c2", "retrieve_passages", '{"passages": [{"n": 3, "te\n\n[truncated: …]',
                                            False)]),
            Message("tool", [ToolResultPart("c3", "retrieve_passages", "no such session", True)])]
    assert given_in(turn) == 2  # a Continue numbers its next passage 3
    verdict = check_answer('Beta [2 "Beta is second"], alpha [1], gamma [3].', turn[1:])
    assert verdict is not None and verdict.passages == 2
    assert [(c.n, c.checked) for c in verdict.cited] == [(2, True), (1, True), (3, False)]
    assert verdict.sources[0].start == 200 and verdict.sources[1].quote is None
    assert AnswerCitations.from_json(json.loads(json.dumps(verdict.to_json()))) == verdict
    assert check_answer("No citation here.", turn[1:]) is None
    assert check_answer("[1]", [Message("assistant", [Text("no retrieval")])]) is None


def test_the_terminal_prints_the_unsupported_citations_in_one_line_after_the_answer(tmp_path: Path) -> None:
    from cks_desktop.graph.store import GraphStore

    from tests.agent.test_chat_cli import chat

    root = tmp_path / "home"
    root.mkdir()
    with GraphStore.open(root / "cks.sqlite3") as store:
        sid = store.create_session("Rail").id
        add_text(store, sid, "report.txt", REPORT)
        for i, text in enumerate(DISTRACTORS):
            add_text(store, sid, f"other{i}.txt", text)
    with make_fake("openai") as fake:
        fake.side_turn = ChatReader("mixed")
        proc = chat(root, fake, sid, QUESTION)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("→ retrieve_passages ") and lines[1] == "← ok"
    assert lines[2].startswith("The company's chief engineer, Ada Lovelace") and len(lines) == 4
    assert lines[3] == ("Not in the passages: [99] “painted red” (the model was given no passage with this number); "
                        "[1] “The company's chief engineer, Ada Lovelace, designed the iron bridge at certainly” "
                        "(the quoted words are not in this passage)")
    with make_fake("openai") as fake:  # every citation checks out: nothing more is printed
        fake.side_turn = ChatReader()
        good = chat(root, fake, sid, QUESTION)
    assert good.returncode == 0 and len(good.stdout.splitlines()) == 3, good.stdout


@pytest.mark.asyncio
async def test_a_continue_numbers_on_after_the_passages_its_exchange_already_had(
        services: AppServices, fake: Any) -> None:
    from tests.fakes.script import call_turn

    sid, _doc = _session(services)
    fake.queue(call_turn("retrieve_passages", {"question": "Who designed the bridge?", "k": 2}),
               call_turn("retrieve_passages", {"question": "When did the line open?", "k": 2}),
               text_turn('It opened in 1854 [3 "opened its first line in 1854"].'))
    approver = StaticApprover(Decision.ALLOW)
    first = await asyncio.wait_for(services.assistant.run(sid, "Tell me about the railway.", approver=approver,
                                                          max_iterations=1), TIMEOUT)
    assert first.reason == "limit"
    turn = await asyncio.wait_for(services.assistant.run(sid, None, approver=approver), TIMEOUT)  # Continue
    numbers = [[p["n"] for p in json.loads(r.content)["passages"]]
               for m in turn.messages for r in m.tool_results]
    assert numbers == [[1, 2], [3, 4]]
    verdict = turn.citations
    assert verdict is not None and not verdict.unsupported, verdict
    assert verdict.sources[0].quote == "opened its first line in 1854"
