"""One schema step (``Migration``): the type every package's ``tables.py`` declares its DDL with.

Kept apart from ``graph/schema.py`` so a package's tables module imports this and nothing else.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    """One schema step: SQL statements, or a function for data migrations."""

    description: str
    sql: str = ""
    run: Callable[[sqlite3.Connection], None] | None = None
