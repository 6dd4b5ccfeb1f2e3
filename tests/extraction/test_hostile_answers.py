"""What one part's answer may write, against a model that says anything (the fake's answer is hostile).

A 100-character part answered with 10,004 objects, a 5 MB property value, 10,000 properties on one
object and a type of 300 characters: the answer is bounded by the part's length (objects and
relations in proportion to its characters, with a floor), property values and counts are capped,
and the bad item is left out with a note for the review, while the rest of the plan is written.
Through a real SDK over a socket to the OpenAI-compatible fake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.extraction.plan import (
    MAX_PROPERTIES,
    MAX_PROPERTY_VALUE,
    part_limits,
)
from cks_desktop.extraction.runner import Extraction, apply_plan
from cks_desktop.graph.store import GraphStore
from tests.fakes.extraction_reader import _json_turn
from tests.fakes.providers import make_fake, provider_for

TEXT = "Ada Lovelace worked with Charles Babbage on the Analytical Engine in London, and wrote its first program."


def hostile_answer() -> dict[str, Any]:
    objects: list[dict[str, Any]] = [
        {"ref": "ada", "name": "Ada Lovelace", "type": "Person", "quote": "Ada Lovelace"},
        {"ref": "cb", "name": "Charles Babbage", "type": "Person", "quote": "Charles Babbage",
         "properties": [{"key": "notes", "value": "x" * (5 * 1024 * 1024)}, {"key": "born", "value": "1791"}]},
        {"ref": "ae", "name": "Analytical Engine", "type": "Machine", "quote": "Analytical Engine",
         "properties": [{"key": f"p{i}", "value": "v"} for i in range(10_000)]},
        {"ref": "bad", "name": "London", "type": "T" * 300, "quote": "London"},
    ]
    objects += [{"ref": f"n{i}", "name": f"Thing {i}", "type": "Thing", "quote": "Ada"} for i in range(10_000)]
    relations = [{"source": "ada", "target": "cb", "type": "worked with", "quote": "worked with"}]
    relations += [{"source": f"n{i}", "target": "ada", "type": "knows", "quote": "Ada"} for i in range(5_000)]
    for obj in objects:  # every field the schema requires
        obj.setdefault("description", "")
        obj.setdefault("aliases", [])
        obj.setdefault("properties", [])
    return {"objects": objects, "relations": relations}


@pytest.mark.asyncio
async def test_one_answer_writes_what_its_part_can_hold_and_a_bad_item_waits_for_review(tmp_path: Path) -> None:
    source = tmp_path / "engine.txt"
    source.write_text(TEXT, encoding="utf-8")
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    session = store.create_session("hostile")
    DocumentStore(store).add(session.id, [read_path(source, 10 * 1024 * 1024)])
    doc = DocumentStore(store).get(session.id, source.name)
    answer = hostile_answer()

    def side_turn(body: Any) -> Any:
        messages = body.get("messages") if isinstance(body, dict) else None
        if not messages:
            return None
        sent = str(messages)
        return _json_turn(answer if "Analytical Engine" in sent else {"answers": []}, body)

    with make_fake("openai") as fake:
        fake.side_turn = side_turn
        provider = provider_for(fake, model="extraction-test-model")
        try:
            ex = Extraction(store, session.id, doc, provider)
            plan = await ex.run()
            objects_cap, relations_cap = part_limits(len(TEXT))
            assert len(plan.objects) <= objects_cap and len(plan.relations) <= relations_cap
            names = {o.name for o in plan.objects}
            assert {"Ada Lovelace", "Charles Babbage", "Analytical Engine"} <= names, (ex.progress.failed_chunks, plan.skipped[:5], ex.progress.calls)
            assert "London" not in names  # its 300-character type: left out, and said so
            assert any("London" in s and "type" in s for s in plan.skipped), plan.skipped
            assert any("10,000 objects" in s or "more objects" in s for s in plan.skipped), plan.skipped
            for item in plan.objects:
                assert len(item.properties) <= MAX_PROPERTIES + 4
                assert all(len(str(v)) <= MAX_PROPERTY_VALUE for v in item.properties.values())
            results = apply_plan(store, plan, ex.context, "extraction")  # type: ignore[arg-type]
            assert results and all(r.change is not None for r in results)
            written = {o.name: o for o in store.all_objects(session.id)}
            assert {"Ada Lovelace", "Charles Babbage", "Analytical Engine"} <= set(written)
            assert len(written) <= objects_cap and "London" not in written
            assert written["Charles Babbage"].properties.get("born") == "1791"
            assert "notes" not in written["Charles Babbage"].properties  # the 5 MB value
        finally:
            await provider.aclose()
            store.close()
