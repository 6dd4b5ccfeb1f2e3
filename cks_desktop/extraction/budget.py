"""How many answer tokens an extraction call may ask for.

Every object and relation of an answer repeats a verbatim quote, so a dense 1,200-token part is
answered in 7,000-8,000 tokens: the 4,096 Anthropic requests carry by default (``ProviderConfig.
max_tokens``) cuts it. Asking for more than a model allows is refused with a 400, so the bigger
budget is asked only of models known to allow it (their published output limits, by name prefix);
any other model keeps the session's setting (``None``: nothing extra is sent, the provider's own
default or ``max_tokens`` applies). A part whose answer is cut anyway is split (``runner``).
"""

from __future__ import annotations

from cks_desktop.llm.profiles import PROFILES

EXTRACTION_MAX_OUTPUT = 16384

# Published answer limits (tokens) of every profile (``ProviderProfile.output_limits``), longest prefix
# first wins. Only what a 400 would punish matters: a model listed with less than EXTRACTION_MAX_OUTPUT
# is asked for its own limit.
KNOWN_OUTPUT_LIMITS: dict[str, int] = {prefix: tokens for profile in PROFILES.values()
                                       for prefix, tokens in profile.output_limits}


def known_output_limit(model: str) -> int | None:
    """The model's published answer limit, or None when the name is not known."""
    name = model.rsplit("/", 1)[-1].casefold()  # OpenRouter-style "anthropic/claude-sonnet-4"
    best = max((p for p in KNOWN_OUTPUT_LIMITS if name.startswith(p)), key=len, default=None)
    return KNOWN_OUTPUT_LIMITS[best] if best is not None else None


def answer_budget(provider_name: str, model: str, configured: int | None) -> int | None:
    """The ``max_output_tokens`` to send with an extraction call (None: send nothing extra).

    ``configured`` is the session's setting (``ProviderConfig.max_tokens``); a known model gets
    ``EXTRACTION_MAX_OUTPUT`` or its own smaller limit, never less than the setting allows it."""
    limit = known_output_limit(model)
    if limit is None:
        return None
    return max(min(EXTRACTION_MAX_OUTPUT, limit), min(configured or 0, limit))


def effective_budget(provider_name: str, model: str, configured: int | None) -> int | None:
    """The answer limit a call really runs under (for the estimate): the budget asked, else the
    setting on Anthropic (always sent), else unknown (None: the provider's default, assumed enough)."""
    asked = answer_budget(provider_name, model, configured)
    if asked is not None:
        return asked
    profile = PROFILES.get(provider_name)
    return configured if profile is not None and profile.max_tokens_always_sent else None
