"""Who is next to whom in the graph model: adjacency, k-hop neighbourhoods, shortest paths.

A mixin of ``GraphModel`` (kept apart only to keep modules small). The
adjacency is a compressed row layout (two int arrays) built lazily on first
use, because a dict of lists per node would cost more memory than the rest
of the model; edges added afterwards go to a small overflow dict until it
grows past an eighth of the edges, then everything is rebuilt.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Iterable


class Adjacency:
    # provided by GraphModel
    alive: bytearray
    ealive: bytearray
    src: array
    dst: array
    ids: list

    _adj_start: array | None
    _adj_edges: array
    _adj_extra: dict[int, list[int]]
    _adj_extra_count: int

    def _build_adjacency(self) -> None:
        n = len(self.ids)
        degree = [0] * (n + 1)
        src, dst, ealive = self.src, self.dst, self.ealive
        for j in range(len(ealive)):
            if ealive[j]:
                degree[src[j]] += 1
                if dst[j] != src[j]:
                    degree[dst[j]] += 1
        start = array("i", [0]) * (n + 1)
        total = 0
        for i in range(n):
            start[i] = total
            total += degree[i]
        start[n] = total
        fill = array("i", start)
        edges = array("i", [0]) * total
        for j in range(len(ealive)):
            if ealive[j]:
                a, b = src[j], dst[j]
                edges[fill[a]] = j
                fill[a] += 1
                if b != a:
                    edges[fill[b]] = j
                    fill[b] += 1
        self._adj_start = start
        self._adj_edges = edges
        self._adj_extra = {}
        self._adj_extra_count = 0

    def incident_edges(self, i: int) -> list[int]:
        """Live edges touching node ``i`` (each once)."""
        start = self._adj_start
        if start is None or self._adj_extra_count > 1024 + len(self._adj_edges) // 8:
            self._build_adjacency()
            start = self._adj_start
        assert start is not None
        ealive = self.ealive
        out: list[int] = []
        if i < len(start) - 1:
            out.extend(j for j in self._adj_edges[start[i]:start[i + 1]] if ealive[j])
        extra = self._adj_extra.get(i)
        if extra:
            out.extend(j for j in extra if ealive[j])
        return out

    def other_end(self, j: int, i: int) -> int:
        a = self.src[j]
        return self.dst[j] if a == i else a

    def neighbors(self, i: int) -> list[int]:
        return [self.other_end(j, i) for j in self.incident_edges(i)]

    def k_hop(self, seeds: Iterable[int], k: int) -> set[int]:
        """Every node within ``k`` relations of a seed, ignoring direction."""
        seen = {i for i in seeds if 0 <= i < len(self.alive) and self.alive[i]}
        frontier = list(seen)
        for _ in range(max(0, k)):
            nxt: list[int] = []
            for i in frontier:
                for nb in self.neighbors(i):
                    if nb not in seen:
                        seen.add(nb)
                        nxt.append(nb)
            if not nxt:
                break
            frontier = nxt
        return seen

    def shortest_path(self, a: int, b: int) -> tuple[list[int], list[int]] | None:
        """The fewest-relations path from ``a`` to ``b`` (any direction): (nodes, edges)."""
        if not (self.alive[a] and self.alive[b]):
            return None
        if a == b:
            return [a], []
        came: dict[int, tuple[int, int]] = {a: (-1, -1)}
        queue = deque([a])
        while queue:
            i = queue.popleft()
            for j in self.incident_edges(i):
                nb = self.other_end(j, i)
                if nb in came:
                    continue
                came[nb] = (i, j)
                if nb == b:
                    nodes, edges = [b], []
                    cur = b
                    while cur != a:
                        prev, edge = came[cur]
                        edges.append(edge)
                        nodes.append(prev)
                        cur = prev
                    nodes.reverse()
                    edges.reverse()
                    return nodes, edges
                queue.append(nb)
        return None
