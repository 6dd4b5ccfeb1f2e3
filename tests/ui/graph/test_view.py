"""The graph view widget against a real store and registry: live changes, edits, undo, search,
focus, path, persistence, export, and the links to the chat."""

from __future__ import annotations

import asyncio
import math
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QImage, QMouseEvent, QWheelEvent
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from cks_desktop.graph.store import GraphStore
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.ui.graph.dialogs import NewObjectDialog
from cks_desktop.ui.graph.layout import LayoutRunner
from cks_desktop.ui.graph.placement import EDGE_LENGTH
from cks_desktop.graph.positions import PositionStore
from cks_desktop.ui.graph.view import GraphView

from tests.ui.graph.conftest import until


class CountingRunner(LayoutRunner):
    def __init__(self) -> None:
        super().__init__(use_process=False)
        self.calls = 0

    async def layout(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.calls += 1
        return await super().layout(*args, **kwargs)


@asynccontextmanager
async def open_view(store: GraphStore, registry: ToolRegistry, session: str | None,
                    runner: LayoutRunner | None = None) -> AsyncIterator[GraphView]:
    view = GraphView(store, registry, runner=runner or CountingRunner())
    view.resize(1100, 700)
    view.show()
    try:
        if session:
            await asyncio.wait_for(view.set_session(session), 20)
            await asyncio.wait_for(view.sync.laid_out.wait(), 20)
        yield view
    finally:
        await view.aclose()
        view.close()
        view.deleteLater()


def screen_pos(view: GraphView, oid: str) -> QPointF:
    m = view.model
    i = m.index[oid]
    return QPointF(*view.canvas.viewport.to_screen(m.xs[i], m.ys[i]))


def mouse(widget, kind: QEvent.Type, pos: QPointF, button=Qt.MouseButton.LeftButton,
          buttons=Qt.MouseButton.LeftButton, mods=Qt.KeyboardModifier.NoModifier) -> None:
    event = QMouseEvent(kind, pos, widget.mapToGlobal(pos), button, buttons, mods)
    QApplication.sendEvent(widget, event)


@pytest.mark.asyncio
async def test_open_draws_lays_out_and_saves_positions(store, registry, session) -> None:
    async with open_view(store, registry, session) as view:
        m = view.model
        assert m.node_count == 40 and not m.unplaced()
        assert view.canvas.buffers.drawn_nodes == 40 and view.canvas.buffers.drawn_edges == m.edge_count
        assert view.object_names()[0] == "Person 0"
        assert "40 objects" in view.status.text()
        assert view.legend.list.count() == 5
        view.canvas.viewport.scale = 0.55  # small discs, no labels: each centre pixel is its type's colour
        image = view.canvas.grab().toImage()
        assert not image.isNull()
        right = 0
        for k in m.nodes():
            p = screen_pos(view, m.node_id(k))
            if 0 <= p.x() < image.width() and 0 <= p.y() < image.height():
                got = image.pixelColor(int(p.x()), int(p.y()))
                want = view.canvas.style_.colour_of(m.type_of(k))
                right += abs(got.red() - want.red()) + abs(got.green() - want.green()) < 40
        assert right >= 30  # a few may sit under a neighbour
        oid = m.node_id(0)
        await view.sync.flush()
        saved = PositionStore.for_store(store).load(session)
        assert len(saved) == 40 and saved[oid][:2] == pytest.approx((m.xs[0], m.ys[0]))


@pytest.mark.asyncio
async def test_reopening_shows_the_same_picture_without_a_layout(store, registry, session) -> None:
    async with open_view(store, registry, session) as first:
        oid = first.model.node_id(3)
        i = first.model.index[oid]
        first.model.set_position(i, 1234.0, -567.0)
        first.model.pinned.add(i)
        first.sync.mark_moved([i])
        picture = {first.model.node_id(k): (first.model.xs[k], first.model.ys[k]) for k in first.model.nodes()}
    runner = CountingRunner()
    async with open_view(store, registry, session, runner) as second:
        again = {second.model.node_id(k): (second.model.xs[k], second.model.ys[k]) for k in second.model.nodes()}
        assert again == picture
        assert runner.calls == 0
        assert second.model.index[oid] in second.model.pinned


@pytest.mark.asyncio
async def test_tool_writes_appear_beside_their_neighbours_and_glow(store, registry, session) -> None:
    async with open_view(store, registry, session) as view:
        m = view.model
        anchor = store.resolve(session, "Company 1").id
        before = {m.node_id(k): (m.xs[k], m.ys[k]) for k in m.nodes()}
        store.apply(session, [{"op": "add_object", "type": "Person", "name": "Grace", "label": "$g"},
                              {"op": "add_relation", "source": "$g", "target": anchor, "type": "works_at"}], "model")
        await until(view.changed, lambda: any(n == "Grace" for n in view.object_names()))
        gid = store.resolve(session, "Grace").id
        g, a = m.index[gid], m.index[anchor]
        assert m.placed[g] and view.canvas.buffers.node_slot[g] >= 0
        assert math.hypot(m.xs[g] - m.xs[a], m.ys[g] - m.ys[a]) < 2.5 * EDGE_LENGTH
        assert {m.node_id(k): (m.xs[k], m.ys[k]) for k in m.nodes() if m.node_id(k) != gid} == before
        assert gid in view.state.flashes and anchor in view.state.flashes
        assert view.canvas.node_at(screen_pos(view, gid)) == g

        store.apply(session, [{"op": "update_object", "ref": gid, "name": "Grace Hopper"}], "model")
        await until(view.changed, lambda: "Grace Hopper" in view.object_names())
        view.state.select(gid)
        store.apply(session, [{"op": "remove_object", "ref": gid}], "model")
        await until(view.changed, lambda: gid not in m.index)
        assert view.state.selection == [] and view.canvas.node_at(screen_pos_at(view, before, anchor)) == a


def screen_pos_at(view: GraphView, picture: dict, oid: str) -> QPointF:
    return QPointF(*view.canvas.viewport.to_screen(*picture[oid]))


@pytest.mark.asyncio
async def test_inspector_edits_go_through_the_registry_and_ctrl_z_undoes(store, registry, session) -> None:
    async with open_view(store, registry, session) as view:
        oid = store.resolve(session, "Person 5").id
        view.state.select(oid)
        await view.inspect(oid)
        ins = view.inspector
        assert ins.isVisible() and ins.name_edit.text() == "Person 5"
        assert ins.props.rowCount() == 2 and ins.history_list.count() >= 1
        ins.name_edit.setText("Person Five")
        ins.name_edit.editingFinished.emit()
        await until(view.changed, lambda: store.get_object(session, oid).name == "Person Five")
        assert store.list_changes(session, 1)[0].origin == "user"
        ins.new_key.setText("age")
        ins.new_value.setText("42")
        ins.add_prop.click()
        await until(view.changed, lambda: store.get_object(session, oid).properties.get("age") == 42)
        await until(ins.loaded, lambda: ins.props.rowCount() == 3)
        view.canvas.setFocus()
        undo = view.findChild(type(view.undo_action), "graphUndo")
        assert undo is not None and undo.isEnabled()
        from PySide6.QtTest import QTest

        QTest.keyClick(view.canvas, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        await until(view.changed, lambda: "age" not in store.get_object(session, oid).properties)
        result = await view.undo()
        assert result.ok and store.get_object(session, oid).name == "Person 5"
        assert store.list_changes(session, 1)[0].origin == "user"


@pytest.mark.asyncio
async def test_search_highlights_and_steps_through_matches(store, registry, session) -> None:
    async with open_view(store, registry, session) as view:
        view.search.field.setText("Paper")
        ids = await view.run_search("Paper")
        assert len(ids) == 8 and view.state.search_matches == ids
        assert view.search.count.text() == "1 of 8"
        first = view.state.current_match
        assert view.step_search(1) != first
        assert view.search.count.text() == "2 of 8"
        current = view.state.current_match
        i = view.model.index[current]
        assert (view.canvas.viewport.cx, view.canvas.viewport.cy) == pytest.approx((view.model.xs[i], view.model.ys[i]))
        for _ in range(8):
            view.step_search(1)
        assert view.state.current_match == current  # wrapped around
        view.search.field.setText("nothing-matches-this")
        assert await view.run_search("nothing-matches-this") == []
        assert view.search.count.text() == "no match"


@pytest.mark.asyncio
async def test_focus_mode_path_and_type_filter(store, registry, session) -> None:
    async with open_view(store, registry, session) as view:
        m = view.model
        a, b = m.node_id(0), m.node_id(39)
        view.state.select_many([a])
        view.focus_on([a])
        hood = m.k_hop([m.index[a]], 1)
        assert view.canvas.buffers.drawn_nodes == len(hood) < 40
        view.hops.setValue(2)
        assert view.canvas.buffers.drawn_nodes == len(m.k_hop([m.index[a]], 2))
        view.focus_action.setChecked(False)
        view._toggle_focus()
        assert view.canvas.buffers.drawn_nodes == 40

        view.state.select_many([a, b])
        view.show_path()
        assert view.state.path_nodes[0] == a and view.state.path_nodes[-1] == b
        assert len(view.state.path_edges) == len(view.state.path_nodes) - 1

        item = view.legend.list.item(0)
        hidden_type = item.data(Qt.ItemDataRole.UserRole + 1)
        item.setCheckState(Qt.CheckState.Unchecked)
        count = dict(m.live_types())[hidden_type]
        assert view.canvas.buffers.drawn_nodes == 40 - count and hidden_type in view.state.hidden_types
        view.legend.showAllRequested.emit()
        assert view.canvas.buffers.drawn_nodes == 40


@pytest.mark.asyncio
async def test_click_drag_wheel_and_delete_with_undo_restoring_the_place(store, registry, session) -> None:
    async with open_view(store, registry, session) as view:
        c, m = view.canvas, view.model
        oid = m.node_id(7)
        p = screen_pos(view, oid)
        mouse(c, QEvent.Type.MouseButtonPress, p)
        mouse(c, QEvent.Type.MouseButtonRelease, p, buttons=Qt.MouseButton.NoButton)
        assert view.state.selection == [oid]
        mouse(c, QEvent.Type.MouseButtonPress, p)
        mouse(c, QEvent.Type.MouseMove, p + QPointF(40, 25), button=Qt.MouseButton.NoButton)
        mouse(c, QEvent.Type.MouseButtonRelease, p + QPointF(40, 25), buttons=Qt.MouseButton.NoButton)
        i = m.index[oid]
        assert i in m.pinned
        assert screen_pos(view, oid).x() == pytest.approx(p.x() + 40, abs=0.5)
        where = (m.xs[i], m.ys[i])

        scale = c.viewport.scale
        at = QPointF(300, 200)
        world = c.viewport.to_world(at.x(), at.y())
        wheel = QWheelEvent(at, c.mapToGlobal(at), QPoint(0, 0), QPoint(0, 240), Qt.MouseButton.NoButton,
                            Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(c, wheel)
        assert c.viewport.scale > scale
        assert c.viewport.to_world(at.x(), at.y()) == pytest.approx(world)

        result = await view.delete_selected()
        assert result is not None and result.ok
        await until(view.changed, lambda: oid not in m.index)
        await view.undo()
        await until(view.changed, lambda: oid in m.index)
        j = m.index[oid]
        assert (m.xs[j], m.ys[j]) == pytest.approx(where) and j in m.pinned


@pytest.mark.asyncio
async def test_connect_by_dragging_and_add_object_via_dialog(store, registry, session) -> None:
    async with open_view(store, registry, session) as view:
        c, m = view.canvas, view.model
        a, b = store.resolve(session, "Place 2").id, store.resolve(session, "Paper 4").id
        got = []
        c.connectRequested.connect(lambda s, t: got.append((s, t)))
        relations = m.edge_count
        pa, pb = screen_pos(view, a), screen_pos(view, b)
        right = Qt.MouseButton.RightButton
        mouse(c, QEvent.Type.MouseButtonPress, pa, right, right)
        mouse(c, QEvent.Type.MouseMove, (pa + pb) / 2, Qt.MouseButton.NoButton, right)
        mouse(c, QEvent.Type.MouseMove, pb, Qt.MouseButton.NoButton, right)
        mouse(c, QEvent.Type.MouseButtonRelease, pb, right, Qt.MouseButton.NoButton)
        assert got[-1] == (a, b)
        dialog = await _dialog(view, "relationTypeDialog")  # the drag asked for the relation's type
        dialog.type_edit.setCurrentText("inspired")
        dialog.accept()
        await until(view.changed, lambda: m.edge_count == relations + 1)
        assert any(r.type == "inspired" and (r.source_id, r.target_id) == (a, b) for r in store.all_relations(session))

        task = asyncio.ensure_future(view.add_object_at((777.0, 888.0)))
        dialog = await _dialog(view, "newObjectDialog")
        assert isinstance(dialog, NewObjectDialog)
        dialog.type_edit.setCurrentText("Idea")
        dialog.name_edit.setText("Graph views")
        dialog.accept()
        result = await asyncio.wait_for(task, 10)
        assert result is not None and result.ok
        await until(view.changed, lambda: result.created_id in m.index)
        k = m.index[result.created_id]
        assert (m.xs[k], m.ys[k]) == pytest.approx((777.0, 888.0))
        assert store.list_changes(session, 1)[0].origin == "user"


async def _dialog(view: GraphView, name: str):
    from PySide6.QtWidgets import QDialog

    deadline = asyncio.get_running_loop().time() + 10  # bounded in time, not in loop turns (a busy machine)
    while asyncio.get_running_loop().time() < deadline:
        found = [w for w in QApplication.topLevelWidgets() + view.findChildren(QDialog)
                 if w.objectName() == name and w.isVisible()]
        if found:
            return found[0]
        await asyncio.sleep(0.01)
    raise AssertionError(f"{name} did not open")


@pytest.mark.asyncio
async def test_export_png_and_svg_are_valid_files(store, registry, session, tmp_path: Path) -> None:
    async with open_view(store, registry, session) as view:
        view.canvas.viewport.scale = 1.0  # zoomed in: labels and arrows in the export
        png = view.export(tmp_path / "g.png", "png")
        svg = view.export(tmp_path / "g.svg", "svg")
        assert png is not None and svg is not None
        image = QImage(str(png))
        assert not image.isNull() and image.width() == 2 * int(view.canvas.viewport.width)
        root = ET.parse(svg).getroot()
        assert root.tag.endswith("svg")
        text = svg.read_text(encoding="utf-8")
        assert "Person" in text and ("<circle" in text or "<ellipse" in text or "<path" in text)
        assert QSvgRenderer(str(svg)).isValid()
        assert view.export(tmp_path / "missing-dir" / "g.png", "png") is None
        assert "Could not write" in view.status.text()


@pytest.mark.asyncio
async def test_chat_links_highlight_center_and_ask_about(store, registry, session) -> None:
    async with open_view(store, registry, session) as view:
        m = view.model
        rel = store.all_relations(session)[3]
        other = m.node_id(20)
        view.highlight_objects([rel.id, other, "o_unknown"])
        assert view.state.marked == {rel.source_id, rel.target_id, other}
        view.center_on([other])
        i = m.index[other]
        assert (view.canvas.viewport.cx, view.canvas.viewport.cy) == pytest.approx((m.xs[i], m.ys[i]))
        asked: list[str] = []
        view.askAbout.connect(asked.append)
        view.state.select(other)
        await view.inspect(other)
        view.inspector.ask_button.click()
        assert asked == [f'{m.type_of(i)} "{m.names[i]}" ({other})']


@pytest.mark.asyncio
async def test_switching_sessions_and_deleting_the_open_one(store, registry, session) -> None:
    other = store.create_session("empty").id
    async with open_view(store, registry, session) as view:
        await view.set_session(other)
        assert view.model.node_count == 0 and view.session_id == other
        assert view.canvas.grab().toImage().isNull() is False
        await view.set_session(session)
        assert view.model.node_count == 40
        store.delete_session(session)
        await until(view.changed, lambda: view.session_id is None)
        assert view.model.node_count == 0


@pytest.mark.asyncio
async def test_relayout_keeps_pinned_objects_and_saves_the_new_picture(store, registry, session) -> None:
    async with open_view(store, registry, session) as view:
        m = view.model
        pinned = m.node_id(4)
        i = m.index[pinned]
        m.set_position(i, 900.0, 900.0)
        m.pinned.add(i)
        before = {m.node_id(k): (m.xs[k], m.ys[k]) for k in m.nodes()}
        assert await view.relayout()
        assert (m.xs[i], m.ys[i]) == (900.0, 900.0)
        after = {m.node_id(k): (m.xs[k], m.ys[k]) for k in m.nodes()}
        assert sum(before[o] != after[o] for o in after) > 30
        await view.sync.flush()
        saved = PositionStore.for_store(store).load(session)
        assert saved[pinned] == (900.0, 900.0, True) and len(saved) == 40


@pytest.mark.asyncio
async def test_inspector_edits_relations_type_and_properties_and_removes_a_property(store, registry, session) -> None:
    async with open_view(store, registry, session) as view:
        oid = store.resolve(session, "Person 10").id
        await view.inspect(oid)
        ins = view.inspector
        incoming, outgoing = store.relations_of(session, oid)
        rel = (outgoing + incoming)[0]
        task = asyncio.ensure_future(ins.edit_relation_properties(rel))
        dialog = await _dialog(view, "relationPropertiesDialog")
        dialog.setTextValue('{"since": 2020}')
        dialog.accept()
        await asyncio.wait_for(task, 10)
        ends = (rel.source_id, rel.target_id)
        assert any(r.properties == {"since": 2020} and (r.source_id, r.target_id) == ends
                   for r in store.all_relations(session))
        await until(ins.loaded, lambda: any(r.properties == {"since": 2020} for r in ins.outgoing + ins.incoming))
        rel2 = next(r for r in ins.outgoing + ins.incoming if r.properties == {"since": 2020})
        task = asyncio.ensure_future(ins.retype_relation(rel2))
        dialog = await _dialog(view, "relationRetypeDialog")
        dialog.setTextValue("mentored")
        dialog.accept()
        await asyncio.wait_for(task, 10)
        assert any(r.type == "mentored" and r.properties == {"since": 2020} for r in store.all_relations(session))
        ins.props.selectRow(0)
        key = ins.props.item(0, 0).text()
        ins.remove_prop.click()
        await until(view.changed, lambda: key not in store.get_object(session, oid).properties)
        assert [c.origin for c in store.list_changes(session, 3)] == ["user", "user", "user"]
        await view.undo()
        assert key in store.get_object(session, oid).properties


@pytest.mark.asyncio
async def test_the_big_graph_paths_threaded_open_rebuild_and_frames_in_pieces(
        store, registry, session, monkeypatch) -> None:
    """Sessions big enough to be read in a thread, rebuilt in a thread and drawn in pieces
    (thresholds lowered so a 40-object graph takes those paths)."""
    from cks_desktop.ui.graph import canvas as canvas_module
    from cks_desktop.ui.graph import frames as frames_module
    from cks_desktop.ui.graph import sync as sync_module

    monkeypatch.setattr(sync_module, "SYNC_OPEN_MAX", 0)
    monkeypatch.setattr(sync_module, "THREAD_REBUILD_FROM", 0)
    monkeypatch.setattr(canvas_module, "SYNC_EDGES", 0)
    monkeypatch.setattr(frames_module, "BUDGET_S", 0.0)  # one piece per event-loop turn
    async with open_view(store, registry, session) as view:
        c, m = view.canvas, view.model
        assert m.node_count == 40
        c.update()
        await until(c.frameReady, c.frame_is_current)
        item = view.legend.list.item(0)
        hidden = dict(m.live_types())[item.data(Qt.ItemDataRole.UserRole + 1)]
        item.setCheckState(Qt.CheckState.Unchecked)
        await until(view.changed, lambda: c.buffers.drawn_nodes == 40 - hidden)
        anchor = store.resolve(session, "Place 2").id
        store.apply(session, [{"op": "add_object", "type": "Place", "name": "Lisbon", "label": "$l"},
                              {"op": "add_relation", "source": "$l", "target": anchor, "type": "near"}], "model")
        await until(view.changed, lambda: "Lisbon" in view.object_names())
        c.update()
        await until(c.frameReady, c.frame_is_current)
        image = c.grab().toImage()
        assert not image.isNull()
