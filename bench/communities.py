"""Community detection on a session-sized graph: Leiden (what the app runs) beside Louvain.

A generated graph of N objects in planted groups of 10–60 (each object linked to 3 of its group
and, with probability 0.1, to one object elsewhere), the way an extracted corpus clusters. For each
method: the time (best of 3), the communities found, the modularity, the agreement with the
planted groups (NMI) and whether two runs give the same partition. ``detect`` is the app's whole
step (members, relations, content hashes) on real ``Object``/``Relation`` rows.

    python bench/communities.py [--objects 5000]
"""

from __future__ import annotations

import argparse
import random
import time

import igraph

from cks_desktop.graph.model import Object, Relation
from cks_desktop.retrieval import communities


def _world(n: int, seed: int = 1) -> tuple[list[int], list[tuple[int, int]]]:
    rng = random.Random(seed)
    planted: list[int] = []
    while len(planted) < n:
        planted.extend([len(set(planted))] * rng.randint(10, 60))
    planted = planted[:n]
    members: dict[int, list[int]] = {}
    for i, g in enumerate(planted):
        members.setdefault(g, []).append(i)
    edges: list[tuple[int, int]] = []
    for i, g in enumerate(planted):
        group = members[g]
        for j in rng.sample(group, min(3, len(group))):
            if j != i:
                edges.append((i, j))
        if rng.random() < 0.1:
            edges.append((i, rng.randrange(n)))
    return planted, edges


def _best(fn: object, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", type=int, default=5000)
    n = ap.parse_args().objects
    planted, edges = _world(n)
    graph = igraph.Graph(n=n, edges=edges, directed=False).simplify()
    truth = igraph.Clustering(planted)

    def leiden() -> list[int]:
        return communities.partition(n, edges)

    def louvain() -> list[int]:
        random.seed(communities.SEED)
        return list(graph.community_multilevel().membership)

    print(f"{n:,} objects, {graph.ecount():,} relations, {len(set(planted))} planted groups")
    print(f"{'method':<22}{'time ms':>9}{'found':>7}{'modularity':>12}{'NMI':>7}{'same twice':>12}")
    base = None
    for name, fn in (("Leiden (the app)", leiden), ("Louvain (multilevel)", louvain)):
        seconds, membership = _best(fn)
        again = fn()
        m = list(membership)  # type: ignore[call-overload]
        q = graph.modularity(m)
        nmi = igraph.compare_communities(truth, igraph.Clustering(m), method="nmi")
        base = base or seconds
        print(f"{name:<22}{seconds * 1000:>9.1f}{len(set(m)):>7}{q:>12.3f}{nmi:>7.3f}{str(again == m):>12}"
              f"   ({seconds / base:.2f}x)")
    objects = [Object(f"o{i}", "s", "Thing", f"Object {i}", {"description": f"thing number {i}"}) for i in range(n)]
    relations = [Relation(f"r{k}", "s", "related_to", f"o{a}", f"o{b}") for k, (a, b) in enumerate(edges)]
    seconds, found = _best(lambda: communities.detect(objects, relations))
    print(f"detect() with members, relations and content hashes: {seconds * 1000:.1f} ms, "
          f"{len(found)} communities of at least {communities.MIN_MEMBERS}")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
