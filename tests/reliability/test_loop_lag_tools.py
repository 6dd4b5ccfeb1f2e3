"""Big but legal tool calls must not freeze the app: the loop stays responsive
(lag probe under 250 ms) while the registry validates, the store writes and the
result is formatted. The sizes are the tools' own limits (5,000 operations) or
more than a model can write in one answer (a 1 MB property). At 5 MB a single
property still costs ~250 ms on the loop, mostly JSON encoding of the result under
GIL contention; no model output comes near that."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.context import Run
from cks_desktop.tools.types import Caller, ToolCall
from tests.reliability.lag import LagProbe
from tests.reliability.world import World, build_world


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = build_world(tmp_path / "lag.sqlite3")
    try:
        yield w
    finally:
        w.store.close()


CASES = {
    "evolve_knowledge, 5,000 operations": ("evolve_knowledge", {"operations": [
        {"op": "add_object", "type": "Note", "name": f"note {i}", "properties": {"i": i, "text": "some words"}}
        for i in range(5000)]}),
    "evolve_knowledge, 5,000 invalid operations": ("evolve_knowledge", {"operations": [
        {"op": "add_relation", "source": f"nobody {i}", "target": "Ada", "type": "knows"} for i in range(5000)]}),
    "add_object with a 1 MB property": ("add_object", {"type": "Doc", "name": "big",
                                                       "properties": {"text": "word " * 200_000}}),
    "update_object with a 1 MB property": ("update_object", {"ref": "Ada", "set_properties": {"bio": "x" * 1_000_000}}),
}


@pytest.mark.asyncio
@pytest.mark.parametrize("case", list(CASES))
async def test_big_calls_keep_the_loop_responsive(world: World, case: str) -> None:
    registry = build_registry(world.store)
    run = Run(session_id=world.mine, caller=Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
    name, args = CASES[case]
    async with LagProbe(case):
        result = await registry.invoke(ToolCall("big", name, args), run)
    assert result.content
