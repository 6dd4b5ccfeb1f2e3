"""Store errors. Each carries one sentence a person can read."""

from __future__ import annotations

from typing import Any


class StoreError(Exception):
    """Base: the message is shown to people and models as is."""


class NotFound(StoreError):
    pass


class AmbiguousRef(StoreError):
    def __init__(self, ref: str, candidates: list[dict[str, Any]]) -> None:
        listing = "; ".join(f"{c['id']} ({c['type']} {c['name']!r})" for c in candidates)
        super().__init__(f"{ref!r} matches {len(candidates)} objects; use an id: {listing}")
        self.candidates = candidates


class ValidationFailed(StoreError):
    """A batch failed validation; nothing was written. ``errors`` lists every failing op."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        first = errors[0]["message"] if errors else "invalid batch"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"Nothing was written: operation {errors[0].get('index', 0) if errors else 0}: {first}{more}")
        self.errors = errors


class DatabaseError(StoreError):
    """The database file cannot be used (locked, corrupt, too new, read-only, disk full)."""


class Unreachable(DatabaseError):
    """The database server cannot be reached right now (a team database: network, server down).

    Nothing was written, and a later call may succeed: the window keeps what the person typed
    and stops the turn before the model instead of answering a message it could not keep."""


# What a person can do about a damaged file; the CLI and the GUI's start-up dialog offer the same.
WAY_OUT = ("it is open read-only: export what can still be read (cks-desktop storage export DIR) "
           "or restore the automatic backup (cks-desktop storage restore)")


def damaged_sentence(path: object, problem: str) -> str:
    """One sentence for a damaged database: what, why nothing is written, and the way out."""
    detail = f" ({problem.rstrip('.')})" if problem else ""
    return f"The database {path} is damaged{detail}, so nothing is written to it; {WAY_OUT}."


class DamagedDatabase(DatabaseError):
    """A write was refused because the file failed its integrity check (or lacks tables)."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__(damaged_sentence(path, problem))
        self.path = path
        self.problem = problem
