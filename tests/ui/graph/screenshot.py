"""Make docs/screenshots/graph-view.png: a 200-object graph with the inspector open.

Not a test (pytest does not collect it). Run it under a real X server:

    xvfb-run -a -s "-screen 0 1440x900x24" env QT_QPA_PLATFORM=xcb \\
        /work/venv/bin/python tests/ui/graph/screenshot.py docs/screenshots/graph-view.png
"""

from __future__ import annotations

import asyncio
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

FIRST = ("Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Frances", "John", "Margaret", "Ken", "Radia",
         "Tim", "Hedy", "Claude", "Sophie", "Leslie", "Katherine", "Niklaus", "Shafi", "Yoshua")
LAST = ("Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Allen", "McCarthy", "Hamilton",
        "Thompson", "Perlman", "Berners-Lee", "Lamarr", "Shannon", "Wilson", "Lamport", "Johnson", "Wirth")
ORGS = ("Turing Institute", "ETH Zürich", "Bell Labs", "MIT CSAIL", "INRIA", "Max Planck Institute",
        "University of Cambridge", "Xerox PARC", "CERN", "Stanford AI Lab", "TU Delft", "KTH", "Mila",
        "Google DeepMind", "University of Tokyo")
CITIES = ("London", "Zürich", "Murray Hill", "Boston", "Paris", "Munich", "Cambridge", "Palo Alto", "Geneva",
          "Stanford", "Delft", "Stockholm", "Montréal", "Tokyo", "Kyoto")
TOPICS = ("graph theory", "type systems", "distributed consensus", "knowledge graphs", "compilers",
          "information theory", "neural networks", "formal verification", "cryptography", "databases",
          "garbage collection", "concurrency", "program synthesis", "search engines", "computer vision",
          "reinforcement learning", "category theory", "operating systems", "networking", "human factors",
          "semantic web", "logic programming", "optimisation", "robotics", "probabilistic models",
          "static analysis", "query languages", "embeddings", "spectrum sharing", "error correction")
TOOLS = ("Coq", "Isabelle", "PyTorch", "SQLite", "igraph", "LLVM", "Prolog", "Qt", "TLA+", "Z3", "Jupyter",
         "Git", "Emacs", "OCaml", "Datalog")


def graph_ops(seed: int = 4) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    ops: list[dict[str, Any]] = []
    people = [f"{FIRST[i % len(FIRST)]} {LAST[(i * 7) % len(LAST)]}" for i in range(40)]
    papers = [f"On {rng.choice(TOPICS)} and {rng.choice(TOPICS)}".replace("On ", "", 0) for _ in range(50)]
    papers = [f"{p} ({1970 + k % 50})" for k, p in enumerate(papers)]
    projects = [f"Project {name}" for name in ("Atlas", "Beacon", "Cobalt", "Delta", "Ember", "Fjord", "Granite",
                                                "Harbor", "Iris", "Juniper", "Kestrel", "Lumen", "Meridian",
                                                "Nimbus", "Orchid", "Polaris", "Quartz", "Raven", "Sable", "Tundra")]
    events = [f"{conf} {2010 + k}" for k, conf in enumerate(("POPL", "SOSP", "NeurIPS", "VLDB", "ICSE", "PLDI",
                                                            "CAV", "KDD", "ISWC", "SIGGRAPH", "OSDI", "ICML",
                                                            "CHI", "STOC", "LICS"))]

    def add(type_: str, name: str, label: str, **props: Any) -> None:
        ops.append({"op": "add_object", "type": type_, "name": name, "label": label, "properties": props})

    for k, n in enumerate(people):
        add("Person", n, f"$p{k}", role=rng.choice(("researcher", "engineer", "professor", "student")),
            since=2000 + k % 24)
    for k, n in enumerate(ORGS):
        add("Organization", n, f"$o{k}", kind=rng.choice(("university", "lab", "company")))
    for k, n in enumerate(CITIES):
        add("Place", n, f"$c{k}")
    for k, n in enumerate(papers):
        add("Paper", n, f"$d{k}", venue=rng.choice(events), pages=rng.randint(8, 40))
    for k, n in enumerate(TOPICS):
        add("Topic", n, f"$t{k}")
    for k, n in enumerate(projects):
        add("Project", n, f"$j{k}", status=rng.choice(("active", "done", "planned")))
    for k, n in enumerate(TOOLS):
        add("Tool", n, f"$u{k}")
    for k, n in enumerate(events):
        add("Event", n, f"$e{k}")

    def rel(a: str, t: str, b: str) -> None:
        ops.append({"op": "add_relation", "source": a, "target": b, "type": t})

    # Each organization is a small world: its people, their papers, its topics, its projects.
    n_org = len(ORGS)
    org_of_person = [k % n_org for k in range(40)]
    topics_of_org = [[(2 * o + d) % len(TOPICS) for d in range(2)] for o in range(n_org)]
    for k in range(n_org):
        rel(f"$o{k}", "located_in", f"$c{k}")
    for k in range(40):
        rel(f"$p{k}", "works_at", f"$o{org_of_person[k]}")
    papers_of_org: dict[int, list[int]] = {o: [] for o in range(n_org)}
    for k in range(50):
        org = k % n_org
        papers_of_org[org].append(k)
        staff = [p for p in range(40) if org_of_person[p] == org]
        for a in rng.sample(staff, min(len(staff), rng.randint(1, 2))):
            rel(f"$p{a}", "authored", f"$d{k}")
        rel(f"$d{k}", "about", f"$t{rng.choice(topics_of_org[org])}")
        earlier = [d for d in papers_of_org[org] if d < k]
        if earlier and rng.random() < 0.7:
            rel(f"$d{k}", "cites", f"$d{rng.choice(earlier)}")
        if k > 10 and rng.random() < 0.25:
            rel(f"$d{k}", "cites", f"$d{rng.randrange(k)}")
    for k in range(20):
        org = k % n_org
        staff = [p for p in range(40) if org_of_person[p] == org]
        for a in rng.sample(staff, min(2, len(staff))):
            rel(f"$p{a}", "member_of", f"$j{k}")
        rel(f"$j{k}", "uses", f"$u{k % len(TOOLS)}")
        rel(f"$j{k}", "funded_by", f"$o{org}")
    for k in range(len(events)):
        rel(f"$e{k}", "held_in", f"$c{(k * 4) % len(CITIES)}")
        rel(f"$p{(k * 3) % 40}", "presented_at", f"$e{k}")
    for k in range(len(TOPICS) - 1):
        if k % 2 == 1:
            rel(f"$t{k}", "related_to", f"$t{k + 1}")
    return ops


async def shoot(out: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from cks_desktop.graph.store import GraphStore
    from cks_desktop.tools.builtin import build_registry
    from cks_desktop.ui.graph.view import GraphView

    store = GraphStore.open(Path(tempfile.mkdtemp()) / "shot.sqlite3")
    sid = store.create_session("Computing history").id
    store.apply(sid, graph_ops(), "model")
    registry = build_registry(store)
    view = GraphView(store, registry)
    view.setWindowTitle("CKS Desktop — graph view")
    view.resize(1440, 900)
    view.show()
    view.set_session(sid)
    await view.sync.laid_out.wait()
    model = view.model
    hub = max((i for i in model.nodes() if model.type_of(i) == "Organization"),
              key=lambda i: len(model.incident_edges(i)))
    oid = model.node_id(hub)
    await view.editor.update_object(oid, set_properties={"founded": 1968, "note": "where the first papers were written"})
    view.state.select(oid)
    view._selection_changed()
    await view.inspect(oid)
    QApplication.processEvents()
    view.canvas.fit()
    view.state.flashes.clear()
    await asyncio.sleep(0.3)
    out.parent.mkdir(parents=True, exist_ok=True)
    view.grab().save(str(out))
    print(f"wrote {out} ({model.node_count} objects, {model.edge_count} relations)")
    await view.aclose()
    store.close()


def main() -> int:
    from PySide6.QtWidgets import QApplication
    from cks_desktop.ui.event_loop import AppEventLoop

    app = QApplication.instance() or QApplication(sys.argv)
    app.setQuitOnLastWindowClosed(False)
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots/graph-view.png")
    with asyncio.Runner(loop_factory=lambda: AppEventLoop(app)) as runner:
        runner.run(shoot(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
