"""Each table has one owner, and ``ui/`` holds no SQL at all.

The chat tables belong to ``agent/transcript.py`` (the search index reads the messages, never
writes them), node positions to the graph
view's store ``graph/positions.py``; ``graph/schema.py`` creates every table (the
migrations are the store's). A widget that wants data asks an owner; SQL in
``ui/`` would bypass the store's lock and transaction and the owner's invariants.
The checks read the source (AST), so a string in a comment or a docstring about
SQL does not count, while a query built in any call or f-string does.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import cks_desktop

PACKAGE = Path(cks_desktop.__file__).parent
SCHEMA = PACKAGE / "graph" / "schema.py"
OWNERS: dict[str, set[Path]] = {
    "chat_messages": {PACKAGE / "agent" / "transcript.py"},  # and READERS below
    "chat_tool_calls": {PACKAGE / "agent" / "transcript.py"},
    "view_positions": {PACKAGE / "graph" / "positions.py"},
}
# Modules that may read a table they do not own, never write it: the search index sits below the
# agent (it may not import the transcript) and reads the messages it indexes.
READERS: dict[str, set[Path]] = {"chat_messages": {PACKAGE / "retrieval" / "items.py"}}
WRITE = re.compile(r"\b(INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX)|DROP\s+TABLE|ALTER\s+TABLE)\b",
                   re.IGNORECASE)
SQL = re.compile(r"\b(SELECT\b.*\bFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX)"
                 r"|DROP\s+TABLE|PRAGMA\s+\w+|ALTER\s+TABLE)\b", re.IGNORECASE | re.DOTALL)
DB_CALLS = {"execute", "executemany", "executescript"}


def _docstrings(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def code_strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string constant in ``path`` that is not a docstring."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skip = _docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip]


def sql_in(path: Path) -> list[str]:
    """Where ``path`` runs or spells SQL: database calls, sqlite3 imports, SQL text."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = [f"{path}:{line}: {text[:60]!r}" for line, text in code_strings(path) if SQL.search(text)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DB_CALLS:
            found.append(f"{path}:{node.lineno}: .{node.func.attr}(…)")
        if isinstance(node, ast.Import) and any(a.name == "sqlite3" for a in node.names):
            found.append(f"{path}:{node.lineno}: import sqlite3")
        if isinstance(node, ast.ImportFrom) and node.module == "sqlite3":
            found.append(f"{path}:{node.lineno}: from sqlite3 import …")
    return found


def test_ui_contains_no_sql() -> None:
    found = [hit for path in sorted((PACKAGE / "ui").rglob("*.py")) for hit in sql_in(path)]
    assert found == [], "SQL in ui/ (move it into a Qt-free store in the core):\n" + "\n".join(found)


def test_the_check_notices_sql(tmp_path: Path) -> None:
    bad = tmp_path / "widget.py"
    bad.write_text('"""Deletes from the view; SELECT nothing."""\n'
                   'def f(conn, s):\n    return conn.execute(f"SELECT x FROM view_positions WHERE s = {s}")\n',
                   encoding="utf-8")
    hits = sql_in(bad)
    assert len(hits) == 2 and "SELECT x FROM" in hits[0]
    fine = tmp_path / "label.py"
    fine.write_text('TEXT = "Delete session… Select all, then update the title."\n', encoding="utf-8")
    assert sql_in(fine) == []


def test_each_table_has_one_owner() -> None:
    strays: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == SCHEMA:
            continue
        for line, text in code_strings(path):
            if not SQL.search(text):
                continue
            for table, owners in OWNERS.items():
                if not re.search(rf"\b{table}\b", text) or path in owners:
                    continue
                if path in READERS.get(table, set()) and not WRITE.search(text):
                    continue
                strays.append(f"{path}:{line}: {table}")
    assert strays == [], "SQL on a table outside its owner:\n" + "\n".join(strays)
