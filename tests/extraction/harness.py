"""Set up a session with the generated world's documents (and its seeded objects), for tests and benches."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.store import GraphStore
from tests.extraction.world import SEEDED, Rendered, World, make_world, render_world


@dataclass
class Setup:
    store: GraphStore
    session_id: str
    world: World
    docs: list[Rendered]
    seeded: dict[str, str]  # object id → gold id


def seed_ops(world: World) -> list[dict[str, object]]:
    return [{"op": "add_object", "type": world.entities[g].type, "name": world.entities[g].name,
             "properties": {"description": world.entities[g].description}, "label": f"${g}"} for g in SEEDED]


def make_setup(root: Path, *, extras_per_doc: int = 60, seed: int = 7, store: GraphStore | None = None) -> Setup:
    """``store``: the one to fill (a PostgreSQL one, say); by default a SQLite file under ``root``."""
    world = make_world(seed=seed, extras_per_doc=extras_per_doc)
    docs = render_world(world, root / "docs")
    store = store if store is not None else GraphStore.open(root / "cks.sqlite3")
    session = store.create_session("world")
    created = store.apply(session.id, seed_ops(world), "test").created
    seeded = {ident: label[1:] for label, ident in created.items()}
    DocumentStore(store).add(session.id, [read_path(r.path, 200 * 1024 * 1024) for r in docs])
    return Setup(store, session.id, world, docs, seeded)
