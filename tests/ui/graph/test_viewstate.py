"""Selection, type filter, focus, search stepping, highlights: the view state, without Qt."""

from __future__ import annotations

from cks_desktop.graph.events import GraphChanged
from cks_desktop.ui.graph.model import GraphModel
from cks_desktop.ui.graph.viewstate import FLASH_SECONDS, ViewState

from tests.ui.graph.test_model import S, chain, obj


def test_selection_click_and_toggle() -> None:
    st = ViewState()
    v = st.version
    st.select("a")
    st.select("b", additive=True)
    assert st.selection == ["a", "b"] and st.primary == "b" and st.version > v
    st.select("a", additive=True)
    assert st.selection == ["b"]
    v = st.version
    st.select("b")  # the same single selection: nothing changes, no redraw
    assert st.version == v
    st.select(None)
    assert st.selection == [] and st.primary is None


def test_type_filter_mask() -> None:
    m = GraphModel()
    m.load(S, [obj(0, "Person"), obj(1, "Company"), obj(2, "Person")], [])
    st = ViewState()
    assert st.visible_mask(m) is None  # nothing hidden: no mask at all
    st.set_type_visible("Person", False)
    assert list(st.visible_mask(m)) == [0, 1, 0]  # type: ignore[arg-type]
    st.show_all_types()
    assert st.visible_mask(m) is None


def test_focus_mode_shows_k_hops_and_follows_the_graph() -> None:
    m = chain(6)
    st = ViewState()
    st.set_focus(["o_2"], 1)
    assert [i for i, v in enumerate(st.visible_mask(m)) if v] == [1, 2, 3]  # type: ignore[arg-type]
    st.set_focus(["o_2"], 2)
    assert [i for i, v in enumerate(st.visible_mask(m)) if v] == [0, 1, 2, 3, 4]  # type: ignore[arg-type]
    st.set_focus(["o_2"], 9)
    assert st.focus_k == 3
    m.apply_event(GraphChanged(S, "c", "model", removed_objects=("o_1",)))
    assert [i for i, v in enumerate(st.visible_mask(m)) if v] == [2, 3, 4, 5]  # type: ignore[arg-type]
    st.clear_focus()
    assert st.visible_mask(m) is None and not st.focused


def test_search_steps_through_matches_and_wraps() -> None:
    st = ViewState()
    st.set_search("acme", ["a", "b", "c", "b"])
    assert st.search_matches == ["a", "b", "c"] and st.current_match == "a"
    assert st.step_search() == "b"
    assert st.step_search() == "c"
    assert st.step_search() == "a"
    assert st.step_search(-1) == "c"
    st.set_search("acme", ["c", "a", "b"])  # the same query refreshed: stay on the current match
    assert st.current_match == "c" and st.search_pos == 0
    st.set_search("zzz", [])
    assert st.current_match is None and st.step_search() is None
    st.clear_search()
    assert st.search_query == ""


def test_flash_fades_and_expires() -> None:
    st = ViewState()
    st.flash(["a"], now=100.0)
    assert st.flash_strength("a", 100.0) == 1.0
    assert 0.0 < st.flash_strength("a", 100.0 + FLASH_SECONDS / 2) < 1.0
    assert st.expire_flashes(100.0 + FLASH_SECONDS / 2)
    assert not st.expire_flashes(100.0 + FLASH_SECONDS + 0.1)
    assert st.flash_strength("a", 200.0) == 0.0


def test_prune_forgets_removed_objects() -> None:
    m = chain(4)
    st = ViewState()
    st.select_many(["o_0", "o_1"])
    st.mark(["o_1", "o_2"])
    st.set_search("n", ["o_1", "o_3"])
    st.step_search()
    nodes, edges = m.shortest_path(0, 3)  # type: ignore[misc]
    st.set_path(m, nodes, edges)
    m.apply_event(GraphChanged(S, "c", "user", removed_objects=("o_1",)))
    st.prune(m)
    assert st.selection == ["o_0"] and st.marked == {"o_2"}
    assert st.search_matches == ["o_3"] and st.current_match == "o_3"
    assert st.path_nodes == [] and st.path_edges == []
