"""A provider's facts live with the provider: its adapter and error mapping in ``llm/providers/``,
its profile (key variable, prices, answer limits, context windows, SDK) in ``llm/profiles.py``, its
settings entry in ``settings/sections.py``. No other product module names a provider in its code, so
adding one is those three files (docs/architecture.md lists the count)."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

from cks_desktop.llm.prices import DEFAULT_PRICES
from cks_desktop.llm.profiles import PROFILES
from cks_desktop.extraction.budget import KNOWN_OUTPUT_LIMITS

ROOT = Path(__file__).resolve().parents[2] / "cks_desktop"
HOME = ("llm/providers/", "llm/profiles.py", "settings/sections.py")
# Modules that name one provider for a feature of that provider, not as a fact to add a provider by.
FEATURES = {
    "ui/main_window.py": "the chat's 'Use Ollama' button, offered when a local Ollama answers",
    "ui/selftest.py": "the self-test names any configured provider; its factory ignores the name",
    "llm/prices.py": "OpenRouter's ids name the vendor ('anthropic/claude-…'), not our provider",
}


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """String literals in code (not docstrings: a string token alone on its statement is skipped)."""
    found = []
    previous = tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type == tokenize.STRING and previous not in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                                               tokenize.NL):
            found.append((token.start[0], token.string.strip("\"'rbfu")))
        if token.type not in (tokenize.COMMENT, tokenize.NL):
            previous = token.type
    return found


def test_no_product_module_outside_the_providers_home_names_a_provider() -> None:
    names = set(PROFILES)
    named = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(HOME) or rel in FEATURES:
            continue
        named += [f"{rel}:{line} {text!r}" for line, text in _code_strings(path) if text in names]
    assert not named, "a provider's fact outside llm/providers/, llm/profiles.py and settings/sections.py"


def test_the_price_and_limit_tables_are_the_profiles() -> None:
    assert DEFAULT_PRICES == {m: p for profile in PROFILES.values() for m, p in profile.prices}
    assert KNOWN_OUTPUT_LIMITS == {m: n for profile in PROFILES.values() for m, n in profile.output_limits}
    assert DEFAULT_PRICES["claude-haiku-4-5"].cache_write == 1.25 and KNOWN_OUTPUT_LIMITS["gemini-2.5"] == 65536
