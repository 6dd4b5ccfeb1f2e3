"""untrusted_text: every control, bidi and invisible character is revealed; nothing else changes."""

from __future__ import annotations

import io
import json
import sys

import pytest

from cks_desktop.untrusted_text import (BIDI_CONTROLS, RevealingStream, describe_hidden, escape_char,
                                        hidden_characters, is_hidden, reveal)

ZERO_WIDTH = "\u200b\u200c\u2060\ufeff"


@pytest.mark.parametrize("char", sorted(BIDI_CONTROLS | set(ZERO_WIDTH)) + ["\u00ad", "\U000e0041", "\u2028",
                                                                            "\u2029", "\u3164"])
def test_bidi_zero_width_and_format_characters_are_revealed(char: str) -> None:
    shown = reveal(f"a{char}b")
    assert char not in shown
    assert shown == f"a{escape_char(char)}b"
    assert hidden_characters(f"a{char}b") == [char]


def test_every_c0_and_c1_control_but_newline_and_tab() -> None:
    for code in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]:
        char = chr(code)
        if char in "\n\t":
            assert reveal(char) == char and not is_hidden(char)
        else:
            assert reveal(char) == f"\\u{code:04x}", hex(code)


def test_escape_sequences_and_osc52_become_inert_text() -> None:
    osc52 = "\x1b]52;c;cm0gLXJmIH4K\x07"
    csi = "\x1b[2J\x1b[31mRED\x1b[0m"
    shown = reveal(osc52 + csi + "\x9b31m")
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert shown == ("\\u001b]52;c;cm0gLXJmIH4K\\u0007\\u001b[2J\\u001b[31mRED\\u001b[0m\\u009b31m")


def test_crlf_is_kept_and_a_lone_cr_is_not() -> None:
    assert reveal("one\r\ntwo") == "one\r\ntwo"
    assert reveal("safe\rEVIL") == "safe\\u000dEVIL"


def test_ordinary_text_is_untouched_including_emoji_sequences() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    health = "\U0001f469\U0001f3fd\u200d\u2695\ufe0f"
    text = f"Grüße, 東京, مرحبا, {family} {health} café\tok\n"
    assert reveal(text) == text
    assert reveal("ab\u200dcd") == "ab\\u200dcd"  # a joiner between letters hides nothing legitimate


def test_astral_characters_use_a_json_surrogate_pair() -> None:
    shown = reveal("x\U000e0001y")
    assert shown == "x\\udb40\\udc01y"
    assert json.loads(f'"{shown}"') == "x\U000e0001y"


def test_json_stays_valid_and_means_the_same() -> None:
    value = {"name": "evil\u202etxt.exe", "esc": "\x1b[31m", "c1": "\x9b", "ls": "a\u2028b",
             "tag": "\U000e0041", "lone": "\ud800", "plain": "Grüße"}
    document = json.dumps(value, ensure_ascii=False, indent=2)
    shown = reveal(document)
    assert all(not is_hidden(c) for c in shown if c not in "\n\t")
    assert json.loads(shown) == value


def test_describe_hidden_names_what_was_revealed() -> None:
    assert describe_hidden("plain") == ""
    sentence = describe_hidden("a\u202eb\u202ec")
    assert "2 direction-changing or invisible characters" in sentence
    assert "\\u202e right-to-left override" in sentence


def test_the_stream_reveals_every_write_and_keeps_the_rest() -> None:
    target = io.StringIO()
    stream = RevealingStream(target)
    print("tool \x1b]52;c;ZXZpbA==\x07", file=stream)  # type: ignore[arg-type]
    stream.write("\U0001f468")
    stream.write("\u200d\U0001f469")  # a joiner at a write boundary still belongs to the emoji
    stream.flush()
    assert target.getvalue() == "tool \\u001b]52;c;ZXZpbA==\\u0007\n\U0001f468\u200d\U0001f469"
    assert stream.getvalue() == target.getvalue()  # everything else is the wrapped stream's
    assert RevealingStream(sys.__stdout__).fileno() == sys.__stdout__.fileno()  # type: ignore[arg-type]
