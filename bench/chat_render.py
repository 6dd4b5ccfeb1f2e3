"""Benchmark of building chat items (a script, not a test): the cost of the chat's look.

Builds 300 chat items — the person's messages, answers (plain prose; with a fenced code block,
a table and a list), tool rows (collapsed; a tenth expanded) — in a real ``ChatView`` under
the app's theme (Fusion, palette, the one style sheet), offscreen, and prints a table: time
per item for each kind (median of the runs), the whole 300 (built, laid out and painted once),
and a live light → dark switch with the 300 built. LOOK.md's prototype measured ~1.6 ms per
item with the sheet.

    QT_QPA_PLATFORM=offscreen python bench/chat_render.py
    QT_QPA_PLATFORM=offscreen PYTHONPATH=/tmp/old-tree python bench/chat_render.py   # another version
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

PROSE = ("Marie Curie worked in **Paris** with her husband *Pierre Curie*; see "
         "[the Nobel page](https://www.nobelprize.org/) and `cks-desktop`.")
RICH = (PROSE + "\n\n- Marie Curie *married_to* Pierre Curie\n- Marie Curie *worked_in* Paris\n\n"
        "| Object | Type |\n|---|---|\n| Marie Curie | Person |\n| Paris | City |\n\n"
        "```python\ngraph = session.graph()\nfor rel in graph.relations(\"Marie Curie\"):\n"
        "    print(rel.kind, rel.target)  # married_to\n```\n\nThat is all.")


def items(n: int) -> list[Any]:
    from cks_desktop.ui.chat.model import MessageItem, RowState, ToolItem

    out: list[Any] = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            out.append(MessageItem("user", f"Question {i}: put the Curies in the graph, and check my notes."))
        elif kind == 1:
            out.append(MessageItem("assistant", RICH if i % 8 == 1 else PROSE))
        else:
            out.append(ToolItem(call_id=f"c{i}", name="get_object", display_name="Get object", source="builtin",
                                arguments={"session_id": "s", "ref": f"Object {i}"}, state=RowState.DONE,
                                duration_ms=12.0, result='{"id": "o1", "name": "Marie Curie", "type": "Person"}'))
    return out


def kind_of(item: Any) -> str:
    from cks_desktop.ui.chat.model import MessageItem

    if isinstance(item, MessageItem):
        if item.role == "user":
            return "person's message"
        return "answer with code+table+list" if "```" in item.text else "answer, prose"
    return "tool row"


def run(n: int, rounds: int) -> None:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from cks_desktop.ui import theme
    from cks_desktop.ui.chat import chat_view
    from cks_desktop.ui.chat.chat_view import ChatView
    from cks_desktop.ui.chat.model import ChatModel
    from cks_desktop.ui.chat.tool_row import ToolCallRow

    manager = theme.install(app, "light")
    per_kind: dict[str, list[float]] = {}
    totals: list[float] = []
    switches: list[float] = []
    expands: list[float] = []
    for _ in range(rounds):
        manager.set_mode("light")
        view = ChatView(ChatModel())
        view.resize(480, 800)
        view.show()
        app.processEvents()
        model = ChatModel(items(n))
        chat_view.INITIAL = n  # build every item at once
        started = time.perf_counter()
        view.model.unsubscribe(view)
        view.model = model
        model.subscribe(view)
        # the same work as items_reset, timed per item
        for index in range(len(model.items)):
            t0 = time.perf_counter()
            view._insert(index, view._layout.count())
            per_kind.setdefault(kind_of(model.items[index]), []).append((time.perf_counter() - t0) * 1000)
        app.processEvents()
        view.grab()
        totals.append((time.perf_counter() - started) * 1000)
        rows = [w for w in view._widgets.values() if isinstance(w, ToolCallRow)][::10]
        t0 = time.perf_counter()
        for row in rows:
            row.set_expanded(True)
        app.processEvents()
        expands.append((time.perf_counter() - t0) * 1000 / max(1, len(rows)))
        t0 = time.perf_counter()
        manager.set_mode("dark")
        app.processEvents()
        switches.append((time.perf_counter() - t0) * 1000)
        view.deleteLater()
        app.processEvents()
    print(f"{n} chat items, {rounds} rounds, medians (ms); Qt {__import__('PySide6').__version__}")
    print("| what | ms |")
    print("|---|---|")
    for kind, values in sorted(per_kind.items()):
        print(f"| build one: {kind} (×{len(values) // rounds}) | {statistics.median(values):.2f} (mean {statistics.mean(values):.2f}) |")
    every = [v for values in per_kind.values() for v in values]
    print(f"| build one, all kinds (mean) | {statistics.mean(every):.2f} |")
    print(f"| all {n}: built, laid out, painted once | {statistics.median(totals):.0f} |")
    print(f"| expand one tool row | {statistics.median(expands):.2f} |")
    print(f"| live light → dark switch with {n} built | {statistics.median(switches):.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    run(args.items, args.rounds)


if __name__ == "__main__":
    main()
