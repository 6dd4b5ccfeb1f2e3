"""Over-budget fitting stays linear in a long chat: each turn reuses what the last turn made of
the same messages (stubbed copies, bounded copies and their sizes) instead of making it again, and
the cuts take the largest parts from a heap rather than scanning every part per cut."""

from __future__ import annotations

from cks_desktop.agent.context import Estimator, fit
from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolResultPart


def history(exchanges: int) -> list[Message]:
    out: list[Message] = []
    for i in range(exchanges):
        call = ToolCallPart(f"c{i}", "read_page", {"page": i})
        out += [Message.user(f"What does page {i} say?"), Message("assistant", [call]),
                Message("tool", [ToolResultPart(call.id, "read_page", f"page {i} " + "r" * 3_000)]),
                Message("assistant", [Text(f"Page {i} says this and that. " * 8)])]
    return out


def fitted(messages: list[Message], window: int) -> list[Message]:
    return fit(messages, system="system", tools=[], window=window, answer_tokens=1_000, estimator=Estimator(),
               allow_summary=False).messages


def test_the_next_turn_reuses_the_stubbed_messages_of_the_last() -> None:
    messages = history(50)
    first, second = fitted(messages, 40_000), fitted(messages, 40_000)
    stubbed = [m for m in first if m.role == "tool" and "r" * 3_000 not in m.parts[0].content]  # type: ignore[union-attr]
    assert stubbed  # the window forced stubs
    assert [id(m) for m in first] == [id(m) for m in second]


def test_cutting_and_leaving_out_give_the_same_request_as_before() -> None:
    """The heap and the running sum change how fast, not what is sent."""
    messages = history(400)
    result = fit(messages, system="system", tools=[], window=20_000, answer_tokens=1_000, estimator=Estimator(),
                 allow_summary=False)
    assert result.dropped > 0 and result.tokens <= result.budget
    assert result.messages[0].parts[0].text.startswith(f"[{result.dropped:,} earlier messages")  # type: ignore[union-attr]
