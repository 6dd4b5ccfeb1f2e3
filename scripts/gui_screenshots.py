"""Take the GUI screenshots in docs/screenshots/: every scene in light and dark, at 1280×800 and 1024×700.

    .venv/bin/python scripts/gui_screenshots.py [--out docs/screenshots] [--only chat,approval]
        [--sizes 1280x800,1024x700] [--no-optimise]

The real window, in a throwaway data folder, talks to the fake Anthropic server from
``tests/fakes`` (real SDK, real HTTP) and to an in-process MCP server, so the pictures show
what a person sees without any API key. Files are named ``<scene>-<light|dark>-<W>x<H>.png``:

- ``first-start``: a fresh data folder, no provider — the empty state;
- ``approval``: the approval dialog over the window (the model asks to change the graph);
- ``chat``: a chat with expanded tool rows (built-in and MCP) and a code block;
- ``graph-inspector``: the graph with the inspector open on an object;
- ``sources-viewer``: a source clicked in the inspector, its document open at the passage;
- ``documents-panel``: View → Documents, the session's documents;
- ``ask-answer``: ``/ask`` in the chat: the answer with a checked citation and an unsupported one;
- ``ask-viewer``: that citation clicked, the document viewer at the quote;
- ``ask-kept``: that answer kept in the chat, marked "from Ask the documents";
- ``themes-question``: Main themes in the Ask window: the model calls it takes, asked before it runs;
- ``themes-running``: the run under way: the bar counting its model calls, Main themes reading Stop;
- ``themes``: the main themes found, each with its summary and numbered, clickable citations;
- ``session-settings``: Chat → Session settings… (instructions, model parameters);
- ``import-preview``: File → Import graph…'s preview, with conflicts;
- ``settings-mcp``: Settings → MCP servers with a ready and a failed server;
- ``thinking``: an answer with its thinking (one collapsed, one open), an image sent with the
  question, a tool's image as a thumbnail, the usage line under each answer, the session's total
  above the input, and a pasted image waiting as a chip in the composer;
- ``image-dialog``: a tool's image enlarged, with Save…;
- ``thinking-live``: "Thinking… N s" while the model still thinks;
- ``thinking-stopped``: the same answer after Stop (the thinking time counts to the cut);
- ``budget-notice``: an answer stopped by the session's budget, with Continue;
- ``settings-agent``: Settings → Chat & agent from its top (the thinking default among them);
- ``settings-prices``: Settings → Chat & agent, scrolled to the prices table;
- ``settings-share``: Settings → Share with other apps;
- ``settings-storage``: Settings → Storage;
- ``mcp-oauth``: the MCP server editor for a remote URL, with its OAuth fields;
- ``mcp-bearer``: the same editor with "bearer token" chosen as the sign-in: only the token's field shows;
- ``toast``: the short line an action that changed something shows where the person looks;
- ``file-dialog``: Documents → Add documents…: Qt's own file dialog (Xvfb has no native one), sized
  so its columns are whole;
- ``team-database``: the status bar's "Team database · host/db" when the window works on a team's
  PostgreSQL (the indicator only: the data shown is the embedded file's);
- ``extraction-estimate``, ``extraction-progress``, ``extraction-waiting``, ``extraction-review``: Documents → Extract
  knowledge: the estimate box, the run (paused) in the status bar, its label while a retry waits, the review.

Each picture is the whole screen of a real X server (Xvfb) of that size with a real window
manager (openbox) on it: the window as the app fits it to the screen, its frame, and every dialog
where the window manager put it, at the size the app gave it. Offscreen renders hide exactly what a
person meets (a status bar below the screen's edge, a dialog taller than the screen, one opened at
the top-left), so the script never draws a dialog over a grab itself. Per screen size the script
starts ``Xvfb`` and ``openbox`` (Debian's ``xvfb`` and ``openbox``) and runs itself inside them
(``--screen WxH``). The PNGs are squeezed with ``optipng`` when it is on the PATH (lossless).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZES = ((1280, 800), (1024, 700))
SCHEMES = ("light", "dark")
SCENES = ("first-start", "approval", "chat", "graph-inspector", "sources-viewer", "documents-panel",
          "session-settings", "import-preview", "settings-mcp", "thinking", "thinking-live", "budget-notice",
          "image-dialog", "thinking-stopped", "settings-agent", "settings-prices", "settings-share", "settings-storage", "mcp-oauth", "extraction-estimate",
          "extraction-progress", "extraction-waiting", "extraction-review", "ask-answer", "ask-viewer", "ask-kept",
          "chat-citations",
          "themes-question", "themes-running", "themes", "graph-search", "graph-communities", "toast",
          "team-database", "file-dialog", "mcp-bearer", "mcp-command", "mcp-command-end")
THOUGHT = ("The person sent a picture and asks what it shows. It is a single blue square, no text in it. "
           "I should also look at their notes for a sketch of the radium apparatus before I answer.")

QUESTION = ("Marie Curie worked in Paris with her husband Pierre Curie. Put them in the graph, "
            "and check my notes about them.")
ANSWER = ("Done. The graph now holds **Marie Curie**, **Pierre Curie** and **Paris**:\n\n"
          "- Marie Curie *married_to* Pierre Curie\n- Marie Curie *worked_in* Paris\n\n"
          "To list her relations from a script:\n\n"
          "```python\nfrom cks_desktop.graph.store import GraphStore\n\n"
          "store = GraphStore.open(\"graph.sqlite3\")\n"
          "for rel in store.relations_of(session, \"Marie Curie\"):\n"
          "    print(rel.type, rel.target)  # married_to, worked_in\n```\n\n"
          "Pierre Curie taught at the Sorbonne; your notes mention the Curies twice.")
OPERATIONS = [
    {"op": "add_object", "type": "Person", "name": "Marie Curie", "label": "$m",
     "properties": {"aliases": ["Maria Skłodowska", "Madame Curie"], "born": 1867, "field": "physics, chemistry",
                    "observations": ["Nobel Prize in Physics 1903", "Nobel Prize in Chemistry 1911"]}},
    {"op": "add_object", "type": "Person", "name": "Pierre Curie", "label": "$p", "properties": {"born": 1859}},
    {"op": "add_object", "type": "City", "name": "Paris", "label": "$c"},
    {"op": "add_object", "type": "Element", "name": "Radium", "label": "$r"},
    {"op": "add_object", "type": "Element", "name": "Polonium", "label": "$po"},
    {"op": "add_object", "type": "Institution", "name": "Sorbonne", "label": "$s"},
    {"op": "add_relation", "source": "$m", "target": "$p", "type": "married_to"},
    {"op": "add_relation", "source": "$m", "target": "$c", "type": "worked_in"},
    {"op": "add_relation", "source": "$m", "target": "$r", "type": "discovered"},
    {"op": "add_relation", "source": "$m", "target": "$po", "type": "discovered"},
    {"op": "add_relation", "source": "$p", "target": "$s", "type": "taught_at"},
    {"op": "add_relation", "source": "$m", "target": "$s", "type": "taught_at"},
]
IMPORTED = [  # what File → Import graph… reads: two objects already there (conflicts), four new
    ("Person", "Marie Curie", {"born": 1867, "nationality": "Polish, French"}),
    ("City", "Paris", {}),
    ("Person", "Irène Joliot-Curie", {"born": 1897}),
    ("Person", "Frédéric Joliot-Curie", {"born": 1900}),
    ("Element", "Thorium", {}),
    ("City", "Warsaw", {}),
]


class Shooter:
    """Grabs one scene in every scheme: the whole screen, window manager's frames included."""

    def __init__(self, window: Any, out: Path, only: set[str]) -> None:
        self.window, self.out, self.only = window, out, only
        self.saved: list[Path] = []

    def wanted(self, scene: str) -> bool:
        return not self.only or scene in self.only

    async def shoot(self, scene: str, dialog: Any = None, before_grab: Any = None) -> None:
        from cks_desktop.ui import theme

        if not self.wanted(scene):
            return
        for scheme in SCHEMES:
            theme.manager().set_mode(scheme)
            for w, h in SIZES:
                await settle(0.5)
                if before_grab is not None:
                    before_grab()
                    await settle(0.3)
                path = self.out / f"{scene}-{scheme}-{w}x{h}.png"
                screen_grab().save(str(path))
                self.saved.append(path)
                print(f"saved {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}", flush=True)


def screen_grab() -> Any:
    """The whole screen as the X server shows it: windows, frames and dialogs where they are."""
    from PySide6.QtGui import QGuiApplication

    screen = QGuiApplication.primaryScreen()
    return screen.grabWindow(0)


RAIL_REPORT = ("The Northern Rail Company\n\nThe Northern Rail Company opened its first line in 1854.\n\n"
               "The company's chief engineer, Ada Lovelace, designed the iron bridge at Kellby. "
               "It crossed the river Tane on three stone piers.\n\n"
               "Passengers paid two pennies a mile on the new line.\n")


async def chat_citations_scene(window: Any, services: Any, fake: Any, shots: "Shooter", session_id: str) -> None:
    """The chat's model retrieves, then cites one passage right and two wrong (a passage it was never
    given, a misquote): the checked [1] is a link, the others read "[n: not in the passages]"."""
    from cks_desktop.documents.readers import read_bytes
    from cks_desktop.documents.store import DocumentStore
    from tests.fakes.chat_reader import ChatReader

    if not any(d.name == "rail-report.md" for d in DocumentStore(services.store).list_documents(session_id)):
        DocumentStore(services.store).add(session_id, [read_bytes(RAIL_REPORT.encode(), "rail-report.md")])
    panel = window.chat_panel
    fake.side_turn = ChatReader("mixed")
    panel.composer.input.setPlainText("Who designed the iron bridge at Kellby?")
    panel.composer.submit()
    await asyncio.wait_for(panel.controller.task, 60)
    fake.side_turn = None
    view = panel.view

    def chat_end() -> None:
        view.flush()
        view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())

    await shots.shoot("chat-citations", before_grab=chat_end)


async def settle(seconds: float = 0.3) -> None:
    await asyncio.sleep(seconds)  # let the window lay out and paint before the grab (a script, not a test)


def notes_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("notes")

    @server.tool(annotations={"readOnlyHint": True})
    async def search_notes(query: str) -> str:
        """Search the person's notes."""
        return json.dumps([{"title": f"{query} — lecture notes", "lines": 12},
                           {"title": f"{query} family letters", "lines": 4}])

    @server.tool(annotations={"readOnlyHint": True})
    async def sketch(name: str) -> Any:
        """A sketch from the person's notes, as a picture."""
        from mcp.server.mcpserver import Image

        from tests.png import make_png

        return ["The sketch of the apparatus:", Image(data=make_png(160, 100, (214, 160, 40)), format="png")]

    return server


def image_mime(color: str = "#2080f0", size: int = 96) -> Any:
    """What a paste of a screenshot puts on the clipboard: image data, no file."""
    from PySide6.QtCore import QMimeData
    from PySide6.QtGui import QColor, QImage

    image = QImage(size, size, QImage.Format.Format_RGB32)
    image.fill(QColor(color))
    mime = QMimeData()
    mime.setImageData(image)
    return mime


async def run(out: Path, home: Path, only: set[str]) -> list[Path]:
    from PySide6.QtWidgets import QApplication

    from cks_desktop.paths import resolve
    from cks_desktop.runtime import AppServices
    from cks_desktop.secrets import SecretStore
    from cks_desktop.ui import theme
    from cks_desktop.ui.main_window import MainWindow
    from cks_desktop.ui.settings.dialog import SettingsDialog
    from tests.fakes.providers import make_fake, provider_for
    from tests.fakes.script import ScriptedCall, Turn, text_turn

    theme.install(QApplication.instance(), "light")
    out.mkdir(parents=True, exist_ok=True)
    with make_fake("anthropic") as fake:
        services = AppServices.open(resolve(home), secrets=SecretStore(secure=False),
                                    provider_factory=lambda *_a: provider_for(  # thinking-live stalls a while
                                        fake, model="claude-sonnet-4-5", timeout=60.0))
        window = MainWindow(services)
        window.show()
        shots = Shooter(window, out, only)
        await window._probe_ollama()  # what start_background does first on a machine without a provider
        await settle(0.8)
        await shots.shoot("first-start")

        services.settings.default_provider = "anthropic"
        services.settings.mcp_servers.update({
            "notes": {"command": "notes-server", "protocol": "legacy", "approval": "auto"},
            "github": {"command": "npx-missing", "args": ["-y", "@modelcontextprotocol/server-github"]},
        })
        from cks_desktop.tools.scopes import server_identity

        notes = services.settings.mcp_servers["notes"]  # its tool may run: granted in every chat
        services.settings.set_server_grant("notes", ["code.execute"], server_identity(notes))
        services.settings.data["agent"]["tool_policies"]["evolve_knowledge"] = "always"
        services.apply_tool_policies()
        services.start_mcp(targets={"notes": notes_server()}, login_path=_no_path)
        services.providers.invalidate()
        await window.start_background()
        await asyncio.wait_for(services.mcp_start, 60)

        fake.queue(
            Turn(text=["I'll add the two scientists, their elements and places, then look in your notes."],
                 tool_calls=[ScriptedCall("evolve_knowledge", {"operations": OPERATIONS})]),
            Turn(tool_calls=[ScriptedCall("mcp__notes__search_notes", {"query": "Curie"}),
                             ScriptedCall("get_object", {"ref": "Pierre Curie"})]),
            text_turn(ANSWER),
        )
        window.sessions.create("Reading list")
        window.sessions.create("Solar system")
        curie = window.sessions.create("Curie family")
        window.sidebar.select(curie.id)
        panel = window.chat_panel

        opened: asyncio.Future = asyncio.get_running_loop().create_future()
        window.approvalDialogOpened.connect(lambda d: opened.done() or opened.set_result(d))
        panel.composer.input.setPlainText(QUESTION)
        panel.composer.submit()
        task = panel.controller.task
        dialog = await asyncio.wait_for(opened, 30)
        await settle(0.6)
        await shots.shoot("approval", dialog)
        dialog.allow_run_button.click()
        await asyncio.wait_for(task, 60)
        await settle(0.5)

        view = panel.view
        view.flush()
        for row in view.rows():
            if row.item.name != "evolve_knowledge":  # the short ones, so the code block stays in view too
                row.set_expanded(True)

        def chat_to_end() -> None:  # the answer with its code block, the expanded rows above it
            view.flush()
            window.graph_view.canvas.fit()
            view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())

        await shots.shoot("chat", before_grab=chat_to_end)

        canvas = window.graph_view.canvas
        marie = services.store.resolve(curie.id, "Marie Curie")

        def inspect() -> None:
            canvas.fit()
            window.graph_view._activated(marie.id)

        await shots.shoot("graph-inspector", before_grab=inspect)
        window.graph_view._close_inspector()

        if shots.wanted("graph-communities"):  # the graph coloured by community, a summary in the legend
            from cks_desktop.retrieval.communities import Summary, SummaryCache, communities_of

            found = communities_of(services.store, curie.id)
            SummaryCache(services.store).put(curie.id, found[0].content_hash, Summary(
                "The Curies' discoveries", "Marie Curie discovered radium and polonium; she and Pierre Curie "
                "worked in Paris and taught at the Sorbonne.", "fake:model"))
            graph_view = window.graph_view
            graph_view.communities_action.trigger()
            for _ in range(100):
                if graph_view.legend.list.count():
                    break
                await settle(0.1)
            graph_view.legend.list.setCurrentRow(0)
            await shots.shoot("graph-communities", before_grab=canvas.fit)
            graph_view.communities_action.trigger()

        from cks_desktop.ui.toast import show_toast

        toasts: list[Any] = []
        await shots.shoot("toast", before_grab=lambda: toasts.append(show_toast(
            window, "Reverted the last change: Marie Curie is back in the graph.", "success", ms=60_000)))
        for toast in toasts:
            toast.hide()
        window.status.set_database("postgresql", "postgresql://lab@db.example.org:5432/curie_lab")
        await shots.shoot("team-database")
        window.status.set_database("sqlite", "")

        if shots.wanted("file-dialog"):
            from PySide6.QtWidgets import QApplication, QFileDialog

            adding = window.tasks.spawn(window.documents.add_via_dialog())
            for _ in range(100):
                await settle(0.1)
                dialogs = [w for w in QApplication.topLevelWidgets() if isinstance(w, QFileDialog) and w.isVisible()]
                if dialogs:
                    break
            if dialogs:
                await shots.shoot("file-dialog", dialogs[0])
                dialogs[0].reject()
            await asyncio.wait_for(adding, 10)

        if shots.wanted("sources-viewer") or shots.wanted("documents-panel"):  # provenance
            from cks_desktop.documents.readers import read_bytes
            from cks_desktop.documents.store import DocumentStore

            letter = ("Notes on the Curies\n\nMarie Curie worked in Paris with her husband Pierre Curie. "
                      "In 1898 they announced polonium, named after Marie Curie's native Poland.\n")
            doc = DocumentStore(services.store).add(curie.id, [read_bytes(letter.encode(), "curie-notes.md")]).added[0]
            start = letter.index("Marie Curie worked in Paris")
            services.store.apply(curie.id, [
                {"op": "add_evidence", "object": marie.id, "document_id": doc.id, "start": start,
                 "end": start + 27, "quote": "Marie Curie worked in Paris", "alignment": "exact"}], "extraction")
            window.graph_view._activated(marie.id)
            await settle(0.5)
            shown: asyncio.Future = asyncio.get_running_loop().create_future()
            window.graph_view.inspector.viewerOpened.connect(lambda v: shown.done() or shown.set_result(v))
            window.graph_view.inspector.open_source(window.graph_view.inspector.sources_data.rows[0].source)
            viewer = await asyncio.wait_for(shown, 10)
            await shots.shoot("sources-viewer", viewer)
            viewer.hide()
            window.graph_view._close_inspector()
            window.documents_dock.show()
            window.documents_dock.raise_()
            await shots.shoot("documents-panel")
            window.documents_dock.hide()

        if shots.wanted("ask-answer") or shots.wanted("ask-viewer") or shots.wanted("ask-kept"):
            from cks_desktop.documents.readers import read_bytes
            from cks_desktop.documents.store import DocumentStore
            from cks_desktop.ui.ask_view import AskWindow
            from tests.fakes.ask_reader import AskReader

            report = ("The Northern Rail Company\n\nThe Northern Rail Company opened its first line in 1854.\n\n"
                      "The company's chief engineer, Ada Lovelace, designed the iron bridge at Kellby. "
                      "It crossed the river Tane on three stone piers.\n\n"
                      "Passengers paid two pennies a mile on the new line.\n")
            DocumentStore(services.store).add(curie.id, [read_bytes(report.encode(), "rail-report.md")])
            fake.side_turn = AskReader("mixed")
            panel.composer.input.setPlainText("/ask Who designed the iron bridge at Kellby?")
            panel.composer.submit()
            ask = window.findChild(AskWindow, "askWindow")
            answered: asyncio.Future = asyncio.get_running_loop().create_future()
            kept: asyncio.Future = asyncio.get_running_loop().create_future()
            ask.answered.connect(lambda: answered.done() or answered.set_result(True))
            window.askKept.connect(lambda _sid: kept.done() or kept.set_result(True))
            await asyncio.wait_for(answered, 60)
            await asyncio.wait_for(kept, 10)
            fake.side_turn = None
            await shots.shoot("ask-answer", ask)
            if shots.wanted("ask-viewer"):
                from cks_desktop.ui.provenance.viewer import DocumentViewer

                ask.open_citation(0)
                for _ in range(100):
                    viewer = window.findChild(DocumentViewer, "documentViewer")
                    if viewer is not None and viewer.passage is not None:
                        break
                    await settle(0.05)
                await shots.shoot("ask-viewer", viewer)
                viewer.hide()
            ask.hide()

            def chat_end() -> None:  # the kept answer, with its sources, at the end of the chat
                view.flush()
                view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())

            await shots.shoot("ask-kept", before_grab=chat_end)

        if shots.wanted("chat-citations"):  # an ordinary answer citing the passages it retrieved, checked
            await chat_citations_scene(window, services, fake, shots, curie.id)

        if shots.wanted("themes-question") or shots.wanted("themes-running") or shots.wanted("themes"):
            await themes_scenes(window, services, fake, shots)
            window.sidebar.select(curie.id)

        if shots.wanted("graph-search"):  # one field: objects, passages and chat messages
            from cks_desktop.documents.readers import read_bytes
            from cks_desktop.documents.store import DocumentStore

            report = ("Radium report\n\nIn 1898 Marie and Pierre Curie announced radium, which glows faintly "
                      "blue in the dark. The element was isolated from tonnes of pitchblende.\n")
            DocumentStore(services.store).add(curie.id, [read_bytes(report.encode(), "radium-report.md")])
            search = window.graph_view.search.field
            filled: asyncio.Future = asyncio.get_running_loop().create_future()
            window.graph_view.results.filled.connect(lambda: filled.done() or filled.set_result(None))
            search.setFocus()
            search.setText("Curie radium")
            await asyncio.wait_for(filled, 60)
            await settle(0.4)
            await shots.shoot("graph-search")
            window.graph_view.results.hide()
            search.clear()

        if shots.wanted("session-settings"):
            services.store.set_session_instructions(
                curie.id, "Answer in English. Prefer primary sources, and name them. "
                          "Use the type Person for people and Institution for universities.")
            box = panel.open_session_settings()
            await settle(0.5)
            await shots.shoot("session-settings", box)
            box.reject()

        if shots.wanted("import-preview"):
            source = window.sessions.create("Joliot-Curie letters")
            ops: list[dict[str, Any]] = [
                {"op": "add_object", "type": t, "name": n, "label": f"$o{i}", "properties": p}
                for i, (t, n, p) in enumerate(IMPORTED)]
            ops += [{"op": "add_relation", "source": "$o2", "target": "$o3", "type": "married_to"},
                    {"op": "add_relation", "source": "$o0", "target": "$o2", "type": "parent_of"},
                    {"op": "add_relation", "source": "$o0", "target": "$o5", "type": "born_in"}]
            services.store.apply(source.id, ops, "setup")
            path = home / "joliot-curie.json"
            path.write_text(services.store.export(source.id, "json"), encoding="utf-8")
            window.sidebar.select(curie.id)
            await settle(0.3)
            preview: asyncio.Future = asyncio.get_running_loop().create_future()

            def opened_box(box: Any) -> None:
                if not preview.done():
                    preview.set_result(box)

            window.graph_io.dialogOpened.connect(opened_box)
            importing = asyncio.ensure_future(window.graph_io.import_file(path))
            box = await asyncio.wait_for(preview, 30)
            await settle(0.4)
            await shots.shoot("import-preview", box)
            box.reject()
            await asyncio.wait_for(importing, 10)

        if shots.wanted("settings-mcp"):
            window.open_settings("mcp", "github")
            settings = next(d for d in window.findChildren(SettingsDialog) if d.isVisible())
            await settle(0.8)
            await shots.shoot("settings-mcp", settings)
            settings.reject()

        await new_ui_scenes(window, services, fake, shots)
        await extraction_scenes(window, services, fake, shots, home)
        await window.shutdown()
        window.deleteLater()
        return shots.saved


async def themes_scenes(window: Any, services: Any, fake: Any, shots: Shooter) -> None:
    """Main themes in the Ask window, on a graph of two communities with their evidence: the
    question saying the model calls, then the themes with their citations."""
    from tests.fakes.summariser import Summariser
    from tests.retrieval.test_themes import _world

    from dataclasses import replace

    class Stalling(Summariser):  # the combining answer never ends: the run shows its bar and Stop
        def __call__(self, body: Any) -> Any:
            turn = super().__call__(body)
            return replace(turn, stall_after_text=True) if turn is not None and self.combines else turn

    sid = _world(services.store)
    services.store.rename_session(sid, "Voyages and music")
    window.sessions.refresh()
    window.sidebar.select(sid)
    ask = window.ask_window()
    loop = asyncio.get_running_loop()

    async def ask_and_accept(scene: str | None) -> None:
        asked: asyncio.Future = loop.create_future()
        ask.themesQuestionOpened.connect(lambda box: asked.done() or asked.set_result(box))
        window.main_themes()
        box = await asyncio.wait_for(asked, 30)
        if scene is not None:
            await shots.shoot(scene, box)
        box.findChild(type(box.defaultButton()), "confirmAcceptButton").click()

    stalling = Stalling()
    fake.side_turn = stalling
    await ask_and_accept("themes-question")
    for _ in range(300):
        if stalling.combines:
            break
        await settle(0.05)
    await shots.shoot("themes-running", ask)
    finished: asyncio.Future = loop.create_future()
    ask.themesFinished.connect(lambda: finished.done() or finished.set_result(True))
    ask.stop_themes()
    await asyncio.wait_for(finished, 10)
    fake.side_turn = Summariser()
    shown: asyncio.Future = loop.create_future()
    ask.themesShown.connect(lambda: shown.done() or shown.set_result(True))
    await ask_and_accept(None)  # the question again, now with the summaries cached: not shot
    await asyncio.wait_for(shown, 60)
    fake.side_turn = None
    await shots.shoot("themes", ask)
    ask.hide()


async def new_ui_scenes(window: Any, services: Any, fake: Any, shots: Shooter) -> None:
    """Thinking, images, usage, the budget notice, prices, sharing, OAuth."""
    from cks_desktop.agent.session_settings import SessionSettingsStore
    from cks_desktop.ui.chat.message_widget import MessageWidget
    from cks_desktop.ui.chat.model import MessageItem
    from cks_desktop.ui.settings.dialog import SettingsDialog
    from tests.fakes.script import ScriptedCall, Turn, call_turn, text_turn

    panel = window.chat_panel
    view = panel.view
    services.settings.data["agent"]["prices"] = {"claude-sonnet-4-5": {"input": 3.0, "output": 15.0}}

    def answers() -> list[Any]:
        view.flush()
        items = [i for i in panel.model.items if isinstance(i, MessageItem) and i.role == "assistant"]
        return [view.widget_for(panel.model.index_of(i)) for i in items]

    if shots.wanted("thinking") or shots.wanted("image-dialog"):
        radium = window.sessions.create("Radium apparatus")
        window.sidebar.select(radium.id)
        SessionSettingsStore(services.store, services.settings).set(radium.id, instructions="", reasoning=True)
        fake.queue(
            Turn(thinking=[THOUGHT[:60], THOUGHT[60:]], text=["A blue square. Let me find the sketch in your notes."],
                 tool_calls=[ScriptedCall("mcp__notes__sketch", {"name": "radium apparatus"})],
                 input_tokens=1840, output_tokens=212),
            Turn(thinking=["The notes have the sketch; it shows the electrometer. Answer briefly."],
                 text=["Your picture is a plain **blue square**. The sketch from your notes (above) shows "
                       "the Curies' electrometer, which they used to measure radium's activity."],
                 input_tokens=2310, output_tokens=96),
        )
        panel.composer.input.insertFromMimeData(image_mime())
        panel.composer.input.setPlainText("What is in this picture? And find my sketch of the radium apparatus.")
        panel.composer.submit()
        await asyncio.wait_for(panel.controller.task, 60)
        await settle(0.5)
        for row in view.rows():
            row.set_expanded(False)
        shown = [w for w in answers() if isinstance(w, MessageWidget) and w.reasoning_view is not None]
        if shown:
            shown[-1].reasoning_view.toggle.setChecked(True)
        panel.composer.input.insertFromMimeData(image_mime("#c0392b", 64))
        panel.composer.input.setPlainText("And this one?")

        def thinking_to_end() -> None:
            view.flush()
            view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())

        await shots.shoot("thinking", before_grab=thinking_to_end)
        strips = [row.image_strip for row in view.rows() if row.image_strip is not None and row.image_strip.thumbs]
        if strips and shots.wanted("image-dialog"):
            strips[0].thumbs[0].click()  # a tool's image, enlarged, with Save…
            enlarged = strips[0].dialog
            await settle(0.4)
            await shots.shoot("image-dialog", enlarged)
            enlarged.close()
        panel.composer.input.clear()
        panel.composer.take_images()

    if shots.wanted("thinking-live") or shots.wanted("thinking-stopped"):
        live = window.sessions.create("Polonium")
        window.sidebar.select(live.id)
        SessionSettingsStore(services.store, services.settings).set(live.id, instructions="", reasoning=True)
        fake.queue(Turn(thinking=["Polonium was named after Poland. The person asks when it was found; "],
                        stall_after_text=True))
        panel.composer.input.setPlainText("When was polonium discovered?")
        panel.composer.submit()
        task = panel.controller.task
        await settle(3.2)  # the counter ticks once a second: "Thinking… 3 s"
        await shots.shoot("thinking-live")
        panel.controller.stop()
        await asyncio.wait([task], timeout=20)
        await settle(0.4)  # Stop after 3 s of thinking: "Thought for 3 s", no blank answer under it
        await shots.shoot("thinking-stopped")

    if shots.wanted("budget-notice"):
        budget = window.sessions.create("Thorium survey")
        window.sidebar.select(budget.id)
        window.session_settings_action.trigger()
        dialog = panel.session_dialog
        dialog.budget_tokens.setText("30")
        dialog.save()
        fake.queue(*[call_turn("graph_summary", {}) for _ in range(3)], text_turn("Finished."))
        panel.composer.input.setPlainText("Survey every element in the graph and tell me who found it.")
        panel.composer.submit()
        await asyncio.wait_for(panel.controller.task, 60)
        await settle(0.5)
        await shots.shoot("budget-notice", before_grab=lambda: view.verticalScrollBar().setValue(
            view.verticalScrollBar().maximum()))
        fake.queue(text_turn("Finished."))  # what Continue would get (left unused)

    async def settings_scene(scene: str, page: str, prepare: Any = None) -> None:
        if not shots.wanted(scene):
            return
        window.open_settings(page)
        settings = next(d for d in window.findChildren(SettingsDialog) if d.isVisible())
        if prepare is not None:
            prepare(settings)
        await settle(0.8)

        await shots.shoot(scene, settings, before_grab=None if prepare is None else lambda: prepare(settings))
        settings.reject()
        await settle(0.3)

    def show_prices(settings: Any) -> None:
        table = settings.agent_page.prices
        if not table.rows():
            table.set_prices({"claude-sonnet-4-5": {"input": 3.0, "output": 15.0},
                              "ollama/qwen3:8b": {"input": 0, "output": 0}})
        scroll = settings.findChild(QScrollAreaType(), "agentPageScroll")
        if scroll is not None:
            scroll.ensureWidgetVisible(table, 0, 0)
            scroll.verticalScrollBar().setValue(scroll.verticalScrollBar().maximum())

    await settings_scene("settings-agent", "agent")
    await settings_scene("settings-prices", "agent", show_prices)
    await settings_scene("settings-share", "share")
    await settings_scene("settings-storage", "storage")

    async def editor_scene(scene: str, prepare: Any = None, entry: dict[str, Any] | None = None) -> None:
        """A server's editor (a URL server unless ``entry`` says otherwise), opened from the MCP
        servers page; ``prepare`` sets its fields."""
        if not shots.wanted(scene):
            return
        services.settings.mcp_servers["wiki"] = entry or {"type": "http", "url": "https://mcp.example.org/wiki/mcp"}
        window.open_settings("mcp", "wiki")
        settings = next(d for d in window.findChildren(SettingsDialog) if d.isVisible())
        await settle(0.5)
        editor = settings.mcp_page.open_editor("wiki")
        if editor is not None:
            if prepare is not None:
                prepare(editor)
            await settle(0.6)
            await shots.shoot(scene, editor)
            editor.reject()
        settings.reject()
        services.settings.mcp_servers.pop("wiki", None)

    def bearer(editor: Any) -> None:
        from PySide6.QtWidgets import QComboBox, QLineEdit

        sign_in = editor.findChild(QComboBox, "mcpAuth")
        sign_in.setCurrentIndex(sign_in.findData("bearer"))
        token = editor.findChild(QLineEdit, "mcpBearerToken")
        token.setText("example-token-0123456789")
        token.setFocus()

    await editor_scene("mcp-oauth")
    await editor_scene("mcp-bearer", bearer)
    def to_the_end(editor: Any) -> None:
        from PySide6.QtWidgets import QScrollArea

        bar = editor.findChild(QScrollArea).verticalScrollBar()
        bar.setValue(bar.maximum())

    await editor_scene("mcp-command-end", to_the_end, entry={"command": "uvx", "args": ["mcp-server-wiki"],
                                                              "timeout": 60, "logLevel": "warning",
                                                              "sampling": "off"})
    await editor_scene("mcp-command", entry={"command": "uvx", "args": ["mcp-server-wiki", "--read-only"],
                                             "cwd": "/srv/wiki", "timeout": 60, "logLevel": "warning"})


async def extraction_scenes(window: Any, services: Any, fake: Any, shots: Shooter, home: Path) -> None:
    """Extract knowledge on a document, answered by the reading model of tests/fakes/extraction_reader.py."""
    if not any(shots.wanted(s) for s in ("extraction-estimate", "extraction-progress", "extraction-waiting",
                                         "extraction-review", "graph-search")):
        return
    from cks_desktop.documents.readers import read_path
    from cks_desktop.documents.store import DocumentStore
    from tests.fakes.extraction_reader import Noise, ReaderModel
    from tests.extraction.world import make_world, render_world

    world = make_world(extras_per_doc=80)  # long enough for a few parts: the bar shows while it runs
    docs = render_world(world, home / "extraction-docs")
    fake.side_turn = ReaderModel(Noise(level=0.0))
    session = window.sessions.create("Expedition reports")
    window.sidebar.select(session.id)
    longest = max(docs, key=lambda d: len(d.text))
    doc = DocumentStore(services.store).add(session.id, [read_path(longest.path, 10**8)]).added[0]
    services.settings.data["extraction"] = {"review_over_chars": 0}  # always review
    controller = window.extraction
    loop = asyncio.get_running_loop()
    opened: asyncio.Future = loop.create_future()
    controller.dialogOpened.connect(lambda d: opened.done() or opened.set_result(d))
    controller.request(session.id, doc.id)
    box = await asyncio.wait_for(opened, 30)
    await settle(0.4)
    await shots.shoot("extraction-estimate", box)
    reviewed: asyncio.Future = loop.create_future()
    controller.dialogOpened.connect(lambda d: d is box or reviewed.done() or reviewed.set_result(d))
    from PySide6.QtWidgets import QMessageBox

    box.button(QMessageBox.StandardButton.Ok).click()
    progress = controller.progress
    for _ in range(200):  # the run starts off the loop: pause it as soon as its bar shows
        if progress.isVisible() or reviewed.done():
            break
        await asyncio.sleep(0.02)
    if progress.isVisible() and not reviewed.done():
        progress.toggle_pause()
        await settle(0.5)
        await shots.shoot("extraction-progress")
        if shots.wanted("extraction-waiting") and progress.run is not None:
            # the label as it reads while the provider waits out a 429's Retry-After (the real wait is
            # tested through a fake server in tests/extraction/test_extraction_waits.py)
            from dataclasses import replace as replaced

            progress.update_progress(replaced(progress.run.progress, state="running",
                                              waiting="waiting 8 s (rate limited)"))
            await settle(0.3)
            await shots.shoot("extraction-waiting")
        progress.toggle_pause()
    dialog = await asyncio.wait_for(reviewed, 60)
    await settle(0.5)
    await shots.shoot("extraction-review", dialog)
    dialog.reject()
    fake.side_turn = None


def QScrollAreaType() -> Any:  # noqa: N802 - a type for findChild, imported late (Qt after the app)
    from PySide6.QtWidgets import QScrollArea

    return QScrollArea


async def _no_path() -> str | None:
    return None


def optimise(paths: list[Path]) -> None:
    """Lossless PNG squeezing with optipng when it is installed (it is not a dependency)."""
    tool = shutil.which("optipng")
    if tool is None or not paths:
        print("optipng not found: the PNGs are left as Qt wrote them")
        return
    before = sum(p.stat().st_size for p in paths)
    subprocess.run([tool, "-quiet", "-o2", "-strip", "all", *map(str, paths)], check=True)
    after = sum(p.stat().st_size for p in paths)
    print(f"optipng: {before / 1e6:.1f} MB → {after / 1e6:.1f} MB")


def _size(text: str) -> tuple[int, int]:
    w, _, h = text.partition("x")
    return int(w), int(h)


def _wait_for(check: Any, what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not start within {seconds:.0f} s")
        time.sleep(0.05)  # polling a process that starts on its own (a script, not a test)


def _wm_running(env: dict[str, str]) -> bool:
    done = subprocess.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=env,
                          capture_output=True, text=True)
    return done.returncode == 0 and "window id" in done.stdout


def on_real_screens(args: argparse.Namespace, sizes: list[tuple[int, int]]) -> int:
    """Per size: a new Xvfb of that size, openbox on it, and this script inside them."""
    for tool in ("Xvfb", "openbox", "xprop"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed: apt-get install xvfb openbox x11-utils")
    for number, (w, h) in enumerate(sizes, start=90):
        while Path(f"/tmp/.X11-unix/X{number}").exists():
            number += 10
        env = {**os.environ, "DISPLAY": f":{number}", "QT_QPA_PLATFORM": "xcb"}
        quiet: dict[str, Any] = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        server = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", f"{w}x{h}x24", "-nolisten", "tcp"], **quiet)
        manager = None
        try:
            _wait_for(lambda: subprocess.run(["xprop", "-root"], env=env, capture_output=True).returncode == 0,
                      "Xvfb")
            manager = subprocess.Popen(["openbox"], env=env, **quiet)  # no terminal: started in the background too
            _wait_for(lambda: _wm_running(env), "openbox")
            command = [sys.executable, __file__, "--screen", f"{w}x{h}", "--out", str(args.out),
                       "--only", args.only, "--no-optimise"]
            if subprocess.run(command, env=env).returncode != 0:
                return 1
        finally:
            for process in (manager, server):
                if process is not None:
                    process.terminate()
                    process.wait(10)
    if not args.no_optimise:
        optimise(sorted(args.out.glob("*.png")))
    return 0


def main() -> int:
    global SIZES
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--only", default="", help=f"comma-separated scenes out of: {', '.join(SCENES)}")
    parser.add_argument("--sizes", default=",".join(f"{w}x{h}" for w, h in SIZES),
                        help="screen sizes, e.g. 1280x800,1024x700")
    parser.add_argument("--screen", default="", help=argparse.SUPPRESS)  # inside one Xvfb: its size
    parser.add_argument("--no-optimise", action="store_true")
    args = parser.parse_args()
    only = {s for s in args.only.split(",") if s}
    if unknown := only - set(SCENES):
        parser.error(f"unknown scene(s): {', '.join(sorted(unknown))}")
    if not args.screen:
        return on_real_screens(args, [_size(t) for t in args.sizes.split(",") if t])
    SIZES = (_size(args.screen),)
    from PySide6.QtWidgets import QApplication

    from cks_desktop.ui.event_loop import AppEventLoop

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    app.setApplicationDisplayName("CKS Desktop")
    with tempfile.TemporaryDirectory(prefix="cks-shots-") as home:
        with asyncio.Runner(loop_factory=lambda: AppEventLoop(app)) as runner:
            saved = runner.run(run(args.out, Path(home), only))
    if not args.no_optimise:
        optimise(saved)
    return 0


if __name__ == "__main__":
    sys.exit(main())
