"""The assembler's event grammar, and other pieces that need no server."""

from __future__ import annotations

import json

import pytest

from cks_desktop.llm.assembler import EventOrderError, StreamAssembler, parse_arguments
from cks_desktop.llm.events import Finish, TextDelta, ToolCallDelta, ToolCallDone, ToolCallStart, Usage
from cks_desktop.llm.messages import Message, Text, ToolCallPart
from cks_desktop.llm.providers.base import is_synthetic_id, normalize_finish, synth_id

from tests.fakes.server import split_text


def _call(index: int, name: str = "add_object", raw: str = '{"name": "A"}') -> list:
    call_id = f"c{index}"
    arguments, error = parse_arguments(raw)
    return [ToolCallStart(index, call_id, name), ToolCallDelta(index, raw),
            ToolCallDone(index, call_id, name, arguments, raw, error)]


def test_text_calls_and_text_keep_their_order() -> None:
    a = StreamAssembler(strict=True).feed_all(
        [TextDelta("Let me "), TextDelta("check."), *_call(0), TextDelta("And "), *_call(1, "list_objects", ""),
         Usage(3, 4), Finish("tool_calls")])
    assert a.text == "Let me check.And "
    assert a.finished and a.finish_reason == "tool_calls" and a.usage == Usage(3, 4)
    assert a.message().parts == [Text("Let me check."), ToolCallPart("c0", "add_object", {"name": "A"}),
                                 Text("And "), ToolCallPart("c1", "list_objects", {})]


def test_interleaved_calls_are_kept_in_start_order() -> None:
    events = [ToolCallStart(0, "a", "x"), ToolCallStart(1, "b", "y"), ToolCallDelta(1, '{"k":'),
              ToolCallDelta(0, "{}"), ToolCallDelta(1, " 1}"),
              ToolCallDone(1, "b", "y", {"k": 1}, '{"k": 1}'), ToolCallDone(0, "a", "x", {}, "{}"), Finish("tool_calls")]
    a = StreamAssembler(strict=True).feed_all(events)
    assert [c.id for c in a.calls] == ["a", "b"]


@pytest.mark.parametrize("events, problem", [
    ([Finish("stop"), TextDelta("late")], "after Finish"),
    ([ToolCallDelta(0, "{")], "not open"),
    ([ToolCallStart(0, "a", "x"), ToolCallStart(0, "a", "x")], "started twice"),
    ([ToolCallStart(0, "a", "x"), Finish("tool_calls")], "still open"),
    ([ToolCallDone(0, "a", "x", {}, "{}")], "without being started"),
    ([ToolCallStart(0, "a", "x"), ToolCallDone(0, "b", "x", {}, "{}")], "another id"),
    ([ToolCallStart(0, "", "x")], "without an id"),
    ([Usage(), Usage()], "two Usage"),
])
def test_strict_mode_rejects_broken_grammar(events: list, problem: str) -> None:
    with pytest.raises(EventOrderError, match=problem):
        StreamAssembler(strict=True).feed_all(events)


def test_lenient_mode_completes_an_unfinished_call_from_its_fragments() -> None:
    a = StreamAssembler().feed_all([ToolCallStart(0, "a", "x"), ToolCallDelta(0, '{"q"'), ToolCallDelta(0, ": 2}")])
    [call] = a.calls
    assert call.arguments == {"q": 2} and call.raw_arguments == '{"q": 2}'
    assert not a.finished


def test_invalid_arguments_stay_in_the_message_as_an_empty_call() -> None:
    a = StreamAssembler(strict=True).feed_all([*_call(0, raw='{"name": '), Finish("tool_calls")])
    [call] = a.calls
    assert call.arguments is None and call.error and call.raw_arguments == '{"name": '
    assert a.message().tool_calls == [ToolCallPart("c0", "add_object", {})]


@pytest.mark.parametrize("raw, ok", [("", True), ("  ", True), ("{}", True), ('{"a": [1]}', True),
                                     ("[1]", False), ("null", False), ('"x"', False), ("{", False)])
def test_parse_arguments(raw: str, ok: bool) -> None:
    value, error = parse_arguments(raw)
    assert (error is None) == ok
    assert (value is not None) == ok


def test_metadata_travels_from_done_to_the_message() -> None:
    a = StreamAssembler(strict=True).feed_all([
        ToolCallStart(0, "a", "x"), ToolCallDone(0, "a", "x", {}, "{}", metadata={"thought_signature": "c2ln"}),
        Finish("tool_calls")])
    assert a.message().tool_calls[0].metadata == {"thought_signature": "c2ln"}


def test_transcript_json_keeps_call_metadata() -> None:
    message = Message("assistant", [ToolCallPart("c1", "add_object", {"a": 1}, metadata={"thought_signature": "eA=="}),
                                    ToolCallPart("c2", "add_object", {})])
    data = message.to_json()
    assert data["parts"][0]["metadata"] == {"thought_signature": "eA=="}
    assert "metadata" not in data["parts"][1]
    assert Message.from_json(json.loads(json.dumps(data))) == message


def test_finish_reasons_are_normalized() -> None:
    table = {"end_turn": "stop", "max_tokens": "length"}
    assert normalize_finish("end_turn", False, table) == "stop"
    assert normalize_finish("end_turn", True, table) == "tool_calls"
    assert normalize_finish("max_tokens", True, table) == "length"
    assert normalize_finish(None, False, table) == "stop"
    assert normalize_finish("WEIRD", False, table) == "weird"


def test_synthetic_ids() -> None:
    ids = {synth_id() for _ in range(100)}
    assert len(ids) == 100 and all(is_synthetic_id(i) for i in ids)
    assert not is_synthetic_id("toolu_01ABC") and not is_synthetic_id("call_abc")


def test_split_text_cuts_into_exact_non_empty_pieces() -> None:
    text = json.dumps({"a": "bcdefgh", "n": 12345})
    for pieces in range(1, 12):
        parts = split_text(text, pieces)
        assert "".join(parts) == text and len(parts) == pieces and all(parts)
    assert split_text("ab", 5) == ["a", "b"]
    assert split_text("", 3) == []
