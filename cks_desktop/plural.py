"""Counts in words: "1 object", "2 objects", "12,000 objects".

One helper for every count a person reads (status bar, dialogs, CLI output), so
"1 objects" cannot come back one f-string at a time; ``tests/core/test_plural.py``
also scans ``cks_desktop/ui`` and ``cks_desktop/commands`` for a count written
straight before a plural noun. Qt-free: the CLI uses it too. English only, like
the rest of the app's words.
"""

from __future__ import annotations


def noun(n: int, singular: str, plural: str | None = None) -> str:
    """``singular`` for exactly one, else ``plural`` (default: ``singular + "s"``)."""
    return singular if n == 1 else (plural if plural is not None else singular + "s")


def counted(n: int, singular: str, plural: str | None = None, *, grouped: bool = False) -> str:
    """The number and the noun that agrees with it; ``grouped`` writes 12,000 rather than 12000."""
    number = f"{n:,}" if grouped else str(n)
    return f"{number} {noun(n, singular, plural)}"
