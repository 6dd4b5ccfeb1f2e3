"""Each package declares its own tables; the graph runs them in one append-only order."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import cks_desktop
from cks_desktop.graph.schema import MIGRATIONS, STEPS

PACKAGE = Path(cks_desktop.__file__).parent


def test_a_tables_module_imports_only_the_migration_type() -> None:
    modules = sorted(PACKAGE.glob("*/tables.py"))
    assert {m.parent.name for m in modules} == {"agent", "documents", "extraction", "provenance", "retrieval"}
    for module in modules:
        tree = ast.parse(module.read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        assert imported <= {"__future__", "cks_desktop.graph.migration"}, (module, imported)


def test_every_table_is_created_by_the_package_that_uses_it() -> None:
    owners = {"chat_messages": "agent", "session_params": "agent", "chat_usage": "agent", "chat_images": "agent",
              "documents": "documents", "evidence": "provenance", "extraction_cache": "extraction",
              "passages": "retrieval", "objects": "graph", "view_positions": "graph"}
    created: dict[str, str] = {}
    for (module, _), step in zip(STEPS, MIGRATIONS, strict=True):
        for table in re.findall(r"CREATE TABLE (\w+)", step.sql):
            created[table] = module.split(".")[1]
    for table, owner in owners.items():
        assert created[table] == owner, (table, created[table])
    assert len(STEPS) == len(set(STEPS)) == 10  # append-only: a new step goes at the end
