"""Take the GUI screenshots in docs/screenshots/ (run under a real X server).

    xvfb-run -a -s "-screen 0 1280x800x24" env QT_QPA_PLATFORM=xcb \
        .venv/bin/python scripts/gui_screenshots.py [--out docs/screenshots]

The real window, in a throwaway data folder, talks to the fake Anthropic
server from ``tests/fakes`` (real SDK, real HTTP) and to an in-process MCP
server, so the pictures show what a person sees without any API key:
``empty.png`` (first start, no provider), ``approval.png`` (an approval
dialog over the window), ``chat.png`` (a chat with expanded tool rows) and
``settings-mcp.png`` (the MCP servers page with a ready and a failed server).
The whole screen is grabbed, so dialogs appear as they do on a desktop.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def grab(path: Path) -> None:
    from PySide6.QtGui import QGuiApplication

    QGuiApplication.primaryScreen().grabWindow(0).save(str(path))
    print(f"saved {path}")


async def settle(seconds: float = 0.3) -> None:
    await asyncio.sleep(seconds)  # let the window paint before the grab (a script, not a test)


def notes_server():
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("notes")

    @server.tool(annotations={"readOnlyHint": True})
    async def search_notes(query: str) -> str:
        """Search the person's notes."""
        return f"2 notes mention {query}."

    return server


async def run(out: Path, home: Path) -> None:
    from PySide6.QtCore import Qt

    from cks_desktop.paths import resolve
    from cks_desktop.secrets import SecretStore
    from cks_desktop.ui.main_window import MainWindow
    from cks_desktop.runtime import AppServices
    from cks_desktop.ui.settings.dialog import SettingsDialog
    from tests.fakes.providers import make_fake, provider_for
    from tests.fakes.script import ScriptedCall, Turn, text_turn

    out.mkdir(parents=True, exist_ok=True)
    with make_fake("anthropic") as fake:
        services = AppServices.open(resolve(home), secrets=SecretStore(secure=False),
                                    provider_factory=lambda *_a: provider_for(fake, model="claude-sonnet-4-5"))
        window = MainWindow(services)
        window.resize(1280, 800)
        window.show()
        await window._probe_ollama()  # what start_background does first on a machine without a provider
        await settle(0.8)
        grab(out / "empty.png")

        services.settings.default_provider = "anthropic"
        services.settings.mcp_servers.update({
            "notes": {"command": "notes-server", "protocol": "legacy", "approval": "auto"},
            "github": {"command": "npx-missing", "args": ["-y", "@modelcontextprotocol/server-github"]},
        })
        services.settings.data["agent"]["tool_policies"]["evolve_knowledge"] = "always"
        services.apply_tool_policies()
        services.start_mcp(targets={"notes": notes_server()}, login_path=_no_path)
        services.providers.invalidate()
        await window.start_background()
        await asyncio.wait_for(services.mcp_start, 60)

        operations = [
            {"op": "add_object", "type": "Person", "name": "Marie Curie", "label": "$m",
             "properties": {"born": 1867, "field": "physics, chemistry"}},
            {"op": "add_object", "type": "Person", "name": "Pierre Curie", "label": "$p",
             "properties": {"born": 1859}},
            {"op": "add_object", "type": "City", "name": "Paris", "label": "$c"},
            {"op": "add_relation", "source": "$m", "target": "$p", "type": "married_to"},
            {"op": "add_relation", "source": "$m", "target": "$c", "type": "worked_in"},
        ]
        fake.queue(
            Turn(text=["I'll add the two scientists and the city, then look for your notes."],
                 tool_calls=[ScriptedCall("evolve_knowledge", {"operations": operations})]),
            Turn(tool_calls=[ScriptedCall("mcp__notes__search_notes", {"query": "Curie"}),
                             ScriptedCall("get_object", {"ref": "Irène Joliot-Curie"})]),
            text_turn("Done. The graph now holds **Marie Curie**, **Pierre Curie** and **Paris**:\n\n"
                      "- Marie Curie *married_to* Pierre Curie\n- Marie Curie *worked_in* Paris\n\n"
                      "Irène Joliot-Curie is not in the graph yet; your notes mention the Curies twice. "
                      "See [the Nobel page](https://www.nobelprize.org/prizes/physics/1903/)."),
        )
        window.sessions.create("Reading list")
        curie = window.sessions.create("Curie family")
        window.sidebar.select(curie.id)

        opened: asyncio.Future = asyncio.get_running_loop().create_future()
        window.approvalDialogOpened.connect(lambda d: opened.done() or opened.set_result(d))
        window.chat_panel.composer.input.setPlainText(
            "Marie Curie worked in Paris with her husband Pierre Curie. Put them in the graph, "
            "and check my notes about them.")
        window.chat_panel.composer.submit()
        task = window.chat_panel.controller.task
        dialog = await asyncio.wait_for(opened, 30)
        await settle(0.6)
        grab(out / "approval.png")
        dialog.allow_run_button.click()
        await asyncio.wait_for(task, 60)
        view = window.chat_panel.view
        view.flush()
        for row in view.rows():
            if row.item.name != "evolve_knowledge":  # the short ones, to keep the whole chat in view
                row.set_expanded(True)
        window.chat_panel.composer.input.setPlainText("Who else worked with them?")
        await settle(0.6)
        view.verticalScrollBar().setValue(0)
        await settle(0.4)
        grab(out / "chat.png")
        window.chat_panel.composer.input.clear()

        window.open_settings("mcp", "github")
        settings = window.findChild(SettingsDialog)
        settings.resize(900, 620)
        await settle(0.8)
        grab(out / "settings-mcp.png")
        settings.reject()
        await window.shutdown()
        window.deleteLater()
        del Qt


async def _no_path() -> str | None:
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    from PySide6.QtWidgets import QApplication

    from cks_desktop.ui.event_loop import AppEventLoop

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    app.setApplicationDisplayName("CKS Desktop")
    with tempfile.TemporaryDirectory(prefix="cks-shots-") as home:
        with asyncio.Runner(loop_factory=lambda: AppEventLoop(app)) as runner:
            runner.run(run(args.out, Path(home)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
