"""The inspector reads as a document: an object's other names are chips under its type, not a
JSON list in the properties table; an aliases value that is not a list of names stays editable."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtWidgets import QApplication, QLabel

from cks_desktop.graph.store import GraphStore
from tests.ui.graph.test_view import open_view


async def until_laid_out(predicate, rounds: int = 200) -> None:
    """Lets Qt show the new chips and lay them out (posted events), until ``predicate`` holds."""
    for _ in range(rounds):
        QApplication.processEvents()
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("the chips were never shown")


def _property_keys(inspector) -> list[str]:
    return [inspector.props.item(row, 0).text() for row in range(inspector.props.rowCount())]


@pytest.mark.asyncio
async def test_aliases_show_as_chips_and_wrap_inside_the_inspector(store: GraphStore, registry, session) -> None:
    names = ["Maria Skłodowska", "Madame Curie", "<b>M. Curie</b>", "Marie Skłodowska-Curie, twice Nobel laureate"]
    store.apply(session, [{"op": "add_object", "type": "Person", "name": "Marie Curie",
                           "properties": {"aliases": names, "born": 1867}},
                          {"op": "add_object", "type": "City", "name": "Paris",
                           "properties": {"aliases": "Lutetia"}}], "model")
    async with open_view(store, registry, session) as view:
        oid = store.resolve(session, "Marie Curie").id
        view.state.select(oid)
        await view.inspect(oid)
        ins = view.inspector
        chips = ins.aliases_box.findChildren(QLabel)
        assert [c.text() for c in chips] == names  # plain text, one chip each (the markup is shown as typed)
        assert all(c.property("cksRole") == "chip" for c in chips)
        assert ins.aliases_box.isVisible()
        assert _property_keys(ins) == ["born"]  # not repeated as JSON
        await until_laid_out(lambda: all(c.isVisible() for c in chips))
        box = ins.aliases_box.rect()
        assert box.width() < sum(c.width() for c in chips)  # the chips take more than one row: they wrap
        for chip in chips:
            assert box.contains(chip.geometry()), (chip.text(), chip.geometry(), box)

        paris = store.resolve(session, "Paris").id
        view.state.select(paris)
        await view.inspect(paris)
        assert not ins.aliases_box.isVisible()
        assert "aliases" in _property_keys(ins)  # text, not a list of names: an ordinary property
