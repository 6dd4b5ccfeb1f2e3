"""The design tokens: every text/background pair meets WCAG contrast (4.5:1; placeholders 3.4:1)."""

from __future__ import annotations

import json

import pytest

from cks_desktop.ui.theme import tokens as t


def test_every_listed_text_background_pair_is_readable_in_light_and_dark() -> None:
    assert t.contrast_failures(t.load()) == []


def test_the_pairs_cover_every_text_colour_on_every_surface_it_is_drawn_on() -> None:
    tokens = t.load()
    text_pairs = {tuple(p) for p in tokens.contrast["text"]}
    for fg in ("text", "muted"):
        for bg in ("background", "sidebar", "surface", "surface_alt", "code_background"):
            assert (fg, bg) in text_pairs
    for tone in ("success", "danger", "warning"):
        assert (tone, f"{tone}_soft") in text_pairs  # chips: tone on its soft tint
    assert ("on_accent", "accent") in text_pairs and ("on_accent", "accent_hover") in text_pairs
    assert ("accent_soft_text", "accent_soft") in text_pairs  # selection


def test_contrast_ratio_matches_wcag_reference_values() -> None:
    assert t.contrast_ratio("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert t.contrast_ratio("#777777", "#FFFFFF") == pytest.approx(4.48, abs=0.01)


def test_a_bad_pair_is_named_in_one_sentence(tmp_path) -> None:
    data = json.loads(t.TOKENS_FILE.read_text(encoding="utf-8"))
    data["palettes"]["dark"]["muted"] = "#3A3A40"
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    failures = t.contrast_failures(t.load.__wrapped__(path))
    assert failures and failures[0].startswith("dark: muted #3A3A40 on background #1B1B1F is ")


def test_scales_are_the_agreed_ones() -> None:
    tokens = t.load()
    assert sorted(tokens.spacing.values()) == [4, 8, 12, 16, 24, 32]
    assert tokens.type_scale["min_base_pt"] >= 9
    assert set(tokens.palette("light")) == set(tokens.palette("dark"))
