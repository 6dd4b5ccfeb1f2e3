"""Secrets: after a provider key and secret MCP env values are set (memory keyring),
a session's worth of work — saving settings, starting MCP servers, a chat with tool
calls, a rejected key, a server that prints its own token, a crash report, every
export format — leaves none of them anywhere in the data folder (settings file,
app and server logs, crash reports, exports, the database with its transcripts).
MCP servers get exactly their configured env plus a minimal base environment
(user, home, PATH, locale…): no other server's secret, no provider key — not the
one in the keychain, and not the one exported in the app's own environment
(the earlier version of this test set provider keys only in the keychain, so it
never noticed that servers inherited the whole environment).
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.factory import create_provider, secret_ref
from cks_desktop.mcp.config import add_server, protect_values
from cks_desktop.mcp.manager import McpManager
from cks_desktop.secrets import SecretStore
from cks_desktop.settings import Settings
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from tests.agent.helpers import turn_options
from tests.fakes.providers import make_fake
from tests.fakes.script import Turn, call_turn, text_turn

ROGUE = Path(__file__).parent / "servers" / "rogue_server.py"
PROVIDER_KEY = "cks-prov-key-7c1d9e0f4a2b"  # not key-shaped: only knowing it redacts it
SHAPED_KEY = "sk-ant-api03-" + "Q" * 40
MCP_SECRET = "horse-battery-staple-9183"
OTHER_SECRET = "other-server-secret-5521"
BASE_MARKER = "cks-base-env-marker"
ENV_PROVIDER_KEY = "cks-env-provider-key-3e8a"  # exported in the parent, as people do


async def no_login_shell() -> str | None:
    return None


def grep_tree(root: Path, needles: list[str]) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [f"{path.relative_to(root)}: {n}" for n in needles if n.encode() in data]
    return hits


@pytest.mark.asyncio
async def test_secrets_stay_in_the_keychain(memory_keyring, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cks_desktop.ui.crash import CrashReporter, Redactor, setup_logging

    monkeypatch.setenv("CKS_BASE_ENV", BASE_MARKER)
    monkeypatch.setenv("OPENAI_API_KEY", ENV_PROVIDER_KEY)  # not anthropic: the chat below uses the keychain key
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True)
    secrets = SecretStore(secure=True)
    handler = setup_logging(home / "logs" / "cks-desktop.log", Redactor(secrets.known_values), level=logging.DEBUG)
    try:
        settings = Settings.load(home / "settings.json")
        secrets.set(secret_ref("anthropic"), PROVIDER_KEY)
        secrets.set(secret_ref("openai"), SHAPED_KEY)
        for name, secret, extra in (("rogue", MCP_SECRET, {"ROGUE_SAY": MCP_SECRET}), ("other", OTHER_SECRET, {})):
            env, moved = protect_values({"API_TOKEN": secret, "PLAIN": "visible", **extra}, server=name,
                                        section="env", secrets=secrets, force_secret=frozenset({"API_TOKEN",
                                                                                                  "ROGUE_SAY"}))
            assert "API_TOKEN" in moved
            add_server(settings, name, {"command": sys.executable, "args": [str(ROGUE)], "env": env,
                                        "approval": "auto"})
        settings.save()
        assert not grep_tree(home, [PROVIDER_KEY, SHAPED_KEY, MCP_SECRET, OTHER_SECRET])

        store = GraphStore.open(home / "cks.sqlite3")
        registry = build_registry(store)
        manager = McpManager(settings, secrets, registry, home / "logs" / "mcp", login_path=no_login_shell,
                             startup_timeout=60)
        try:
            await manager.start_all()
            for name in ("rogue", "other"):
                assert manager.connections[name].status.value == "ready", manager.connections[name].reason
            # What each server was given: its own env and a minimal base environment, nothing else of ours.
            envs = {}
            for name in ("rogue", "other"):
                out = await manager.connections[name].call_tool("env", {})
                envs[name] = json.loads(out.content)
            assert envs["rogue"]["API_TOKEN"] == MCP_SECRET and envs["other"]["API_TOKEN"] == OTHER_SECRET
            assert envs["rogue"]["PLAIN"] == "visible" and "CKS_BASE_ENV" not in envs["rogue"]
            for name, env in envs.items():
                values = "\n".join(env.values())
                assert PROVIDER_KEY not in values and SHAPED_KEY not in values and ENV_PROVIDER_KEY not in values
                assert "OPENAI_API_KEY" not in env
                assert (OTHER_SECRET if name == "rogue" else MCP_SECRET) not in values
                assert set(env) - set(__import__("os").environ) <= {"API_TOKEN", "PLAIN", "ROGUE_SAY",
                                                                     "PATH", "PYTHONUNBUFFERED", "PYTHONIOENCODING"}

            # A chat with built-in and MCP tool calls, saved to the transcript; then a rejected key.
            session = store.create_session("secrets").id
            transcript = TranscriptStore.for_store(store)
            with make_fake("anthropic") as fake:
                fake.queue(call_turn("add_object", {"type": "Note", "name": "n1"}),
                           call_turn("mcp__rogue__echo", {"text": "hello"}), text_turn("Done."),
                           Turn(status=401, error_body={"type": "error", "error": {
                               "type": "authentication_error", "message": "invalid x-api-key"}}))
                provider = create_provider("anthropic", settings, secrets, base_url=fake.base_url)
                try:
                    for prompt in ("Add a note and echo.", "Again?"):
                        await ai_chat(session, transcript.load(session), prompt,
                                      ChatDeps(provider, registry, store, transcript), turn_options(system_prompt="t"),
                                      approver=StaticApprover(Decision.ALLOW))
                finally:
                    await provider.aclose()
                auth = [r.header("authorization") or r.header("x-api-key") or "" for r in fake.generation_requests]
                assert all(PROVIDER_KEY in a for a in auth)  # the key did reach the provider, and only there
            exports = {fmt: store.export(session, fmt) for fmt in ("json", "graphml", "markdown", "mermaid",
                                                                   "memory-jsonl")}
            for fmt, text in exports.items():
                (home / f"export.{fmt}").write_text(text)
            # A crash whose message carries the secrets (a library echoing what it was given).
            crash = CrashReporter(home / "logs" / "cks-desktop.log", Redactor(secrets.known_values))
            try:
                raise RuntimeError(f"server rejected token {MCP_SECRET} and key {PROVIDER_KEY} / {SHAPED_KEY}")
            except RuntimeError as exc:
                crash.excepthook(type(exc), exc, exc.__traceback__)
            dialog = crash._dialog  # the crash dialog the person sees (and may copy from)
            assert dialog is not None
            report = "\n".join((dialog.text(), dialog.informativeText(), dialog.detailedText()))
            dialog.close()
            assert "server rejected token" in report
            assert not [s for s in (MCP_SECRET, PROVIDER_KEY, SHAPED_KEY) if s in report], report
            (home / "crash-report.txt").write_text(report)
            await manager.connections["rogue"].call_tool("flood", {"mb": 0.01})
        finally:
            await manager.aclose()
            store.close()
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    leaked = grep_tree(home, [PROVIDER_KEY, SHAPED_KEY, MCP_SECRET, OTHER_SECRET])
    assert not leaked, f"secrets found in the data folder: {leaked}"
