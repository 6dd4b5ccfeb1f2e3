"""A real store, a real registry with the built-in tools, and a session with a small graph."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.graph.store import GraphStore
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.registry import ToolRegistry

TYPES = ("Person", "Company", "Place", "Project", "Paper")


def sample_ops(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` objects of five types, a spanning tree of relations plus some cross links."""
    rng = random.Random(seed)
    ops: list[dict[str, Any]] = []
    for i in range(n):
        t = TYPES[i % len(TYPES)]
        ops.append({"op": "add_object", "type": t, "name": f"{t} {i}", "label": f"$n{i}",
                    "properties": {"rank": i, "note": f"sample object number {i}"}})
    for i in range(1, n):
        ops.append({"op": "add_relation", "source": f"$n{i}", "target": f"$n{rng.randrange(max(0, i - 12), i)}",
                    "type": rng.choice(("knows", "works_at", "cites", "located_in"))})
    for _ in range(n // 4):
        a, b = rng.randrange(n), rng.randrange(n)
        if a != b:
            ops.append({"op": "add_relation", "source": f"$n{a}", "target": f"$n{b}", "type": "mentions"})
    return ops


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GraphStore]:
    s = GraphStore.open(tmp_path / "cks.sqlite3")
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def registry(store: GraphStore) -> ToolRegistry:
    return build_registry(store)


@pytest.fixture
def session(store: GraphStore) -> str:
    sid = store.create_session("graph view test").id
    store.apply(sid, sample_ops(40), "model")
    return sid


async def until(signal: Any, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait (bounded) until ``predicate()`` holds, re-checking whenever ``signal`` fires."""
    if predicate():
        return
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()

    def check(*_: Any) -> None:
        if not future.done() and predicate():
            future.set_result(None)

    signal.connect(check)
    try:
        await asyncio.wait_for(future, timeout)
    finally:
        signal.disconnect(check)
