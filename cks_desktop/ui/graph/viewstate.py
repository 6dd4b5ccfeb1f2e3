"""What the person is looking at: selection, type filter, focus, search, highlights.

Kept by object id, not by slot index, so it survives the model renumbering
its slots (``GraphModel.compact``) and objects that disappear and come back
(an undone delete). Qt-free: the widget reads it to draw and the tests drive
it directly. ``version`` goes up on every change that alters the picture, so
the widget knows when its cached frame is stale.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from cks_desktop.ui.graph.model import GraphModel

FLASH_SECONDS = 2.5  # how long "what the latest tool call changed" glows
MAX_FOCUS_HOPS = 3


@dataclass
class ViewState:
    selection: list[str] = field(default_factory=list)  # ordered; the last is the primary one
    hidden_types: set[str] = field(default_factory=set)
    focus_ids: tuple[str, ...] | None = None
    focus_k: int = 1
    marked: set[str] = field(default_factory=set)  # objects a chat tool-call row pointed at
    flashes: dict[str, float] = field(default_factory=dict)  # id -> monotonic expiry time
    search_query: str = ""
    search_matches: list[str] = field(default_factory=list)
    search_pos: int = -1
    path_nodes: list[str] = field(default_factory=list)
    path_edges: list[str] = field(default_factory=list)
    version: int = 0
    _mask_key: tuple[int, int] | None = None
    _mask: bytearray | None = None

    def _bump(self) -> None:
        self.version += 1

    def reset(self) -> None:
        """Forget everything (another session was opened)."""
        self.__init__()  # type: ignore[misc]

    # -- selection --------------------------------------------------------
    @property
    def primary(self) -> str | None:
        return self.selection[-1] if self.selection else None

    def select(self, oid: str | None, *, additive: bool = False) -> None:
        """Click: select one object; with ``additive`` toggle it in the selection."""
        if oid is None:
            if self.selection:
                self.selection = []
                self._bump()
            return
        if additive:
            if oid in self.selection:
                self.selection.remove(oid)
            else:
                self.selection.append(oid)
        else:
            if self.selection == [oid]:
                return
            self.selection = [oid]
        self._bump()

    def select_many(self, ids: Iterable[str]) -> None:
        self.selection = list(dict.fromkeys(ids))
        self._bump()

    def prune(self, model: GraphModel) -> None:
        """Drop ids of objects that no longer exist (after a removal)."""
        index = model.index
        before = (len(self.selection), len(self.marked), len(self.search_matches), len(self.path_nodes))
        self.selection = [o for o in self.selection if o in index]
        self.marked = {o for o in self.marked if o in index}
        self.flashes = {o: t for o, t in self.flashes.items() if o in index}
        if any(o not in index for o in self.search_matches):
            current = self.current_match
            self.search_matches = [o for o in self.search_matches if o in index]
            self.search_pos = self.search_matches.index(current) if current in self.search_matches else (
                0 if self.search_matches else -1)
        if any(o not in index for o in self.path_nodes) or any(r not in model.rel_index for r in self.path_edges):
            self.path_nodes, self.path_edges = [], []
        after = (len(self.selection), len(self.marked), len(self.search_matches), len(self.path_nodes))
        if before != after:
            self._bump()

    # -- type filter (the legend) -----------------------------------------
    def set_type_visible(self, type_name: str, visible: bool) -> None:
        if visible and type_name in self.hidden_types:
            self.hidden_types.discard(type_name)
        elif not visible and type_name not in self.hidden_types:
            self.hidden_types.add(type_name)
        else:
            return
        self._bump()

    def show_all_types(self) -> None:
        if self.hidden_types:
            self.hidden_types.clear()
            self._bump()

    # -- focus mode -------------------------------------------------------
    def set_focus(self, ids: Iterable[str], k: int) -> None:
        """Show only the ``k``-hop neighbourhood of ``ids`` (1..3 hops)."""
        ids = tuple(ids)
        if not ids:
            self.clear_focus()
            return
        self.focus_ids = ids
        self.focus_k = max(1, min(MAX_FOCUS_HOPS, int(k)))
        self._bump()

    def clear_focus(self) -> None:
        if self.focus_ids is not None:
            self.focus_ids = None
            self._bump()

    @property
    def focused(self) -> bool:
        return self.focus_ids is not None

    def visible_mask(self, model: GraphModel) -> bytearray | None:
        """1 per visible slot, or None when every live node is visible (the common case)."""
        if not self.hidden_types and self.focus_ids is None:
            return None
        key = (model.structure_version, self.version)
        if self._mask_key == key and self._mask is not None:
            return self._mask
        mask = bytearray(model.alive)
        if self.hidden_types:
            hidden = {t for t, name in enumerate(model.type_names) if name in self.hidden_types}
            ntype = model.ntype
            for i in range(len(mask)):
                if mask[i] and ntype[i] in hidden:
                    mask[i] = 0
        if self.focus_ids is not None:
            keep = model.k_hop(model.indices_of(self.focus_ids), self.focus_k)
            for i in range(len(mask)):
                if mask[i] and i not in keep:
                    mask[i] = 0
        self._mask_key, self._mask = key, mask
        return mask

    # -- highlights -------------------------------------------------------
    def mark(self, ids: Iterable[str]) -> None:
        """Highlight what a chat tool-call row read or wrote (until cleared)."""
        self.marked = set(ids)
        self._bump()

    def clear_marks(self) -> None:
        if self.marked:
            self.marked = set()
            self._bump()

    def flash(self, ids: Iterable[str], now: float, duration: float = FLASH_SECONDS) -> None:
        """Make ``ids`` glow briefly: the latest change, fading out."""
        until = now + duration
        for oid in ids:
            self.flashes[oid] = until
        self._bump()

    def flash_strength(self, oid: str, now: float, duration: float = FLASH_SECONDS) -> float:
        until = self.flashes.get(oid)
        if until is None or until <= now:
            return 0.0
        return min(1.0, (until - now) / duration)

    def expire_flashes(self, now: float) -> bool:
        """Forget finished flashes; True while some are still glowing."""
        if self.flashes:
            self.flashes = {o: t for o, t in self.flashes.items() if t > now}
        return bool(self.flashes)

    # -- search -----------------------------------------------------------
    def set_search(self, query: str, matches: Iterable[str]) -> None:
        """New results; the same query again (a refresh) keeps the current match."""
        current = self.current_match if query == self.search_query else None
        self.search_query = query
        self.search_matches = list(dict.fromkeys(matches))
        if current in self.search_matches:
            self.search_pos = self.search_matches.index(current)
        else:
            self.search_pos = 0 if self.search_matches else -1
        self._bump()

    def clear_search(self) -> None:
        if self.search_query or self.search_matches:
            self.search_query, self.search_matches, self.search_pos = "", [], -1
            self._bump()

    @property
    def current_match(self) -> str | None:
        if 0 <= self.search_pos < len(self.search_matches):
            return self.search_matches[self.search_pos]
        return None

    def step_search(self, step: int = 1) -> str | None:
        """Go to the next (or previous) match, wrapping around; returns it."""
        if not self.search_matches:
            return None
        self.search_pos = (self.search_pos + step) % len(self.search_matches)
        self._bump()
        return self.search_matches[self.search_pos]

    # -- shortest path ----------------------------------------------------
    def set_path(self, model: GraphModel, nodes: list[int], edges: list[int]) -> None:
        self.path_nodes = [model.node_id(i) for i in nodes]
        self.path_edges = [rid for rid in (model.rel_ids[j] for j in edges) if rid is not None]
        self._bump()

    def clear_path(self) -> None:
        if self.path_nodes:
            self.path_nodes, self.path_edges = [], []
            self._bump()
