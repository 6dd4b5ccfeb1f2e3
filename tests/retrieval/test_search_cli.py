"""`cks-desktop search`: objects, passages and chat messages (tool results too) of one session, with
every socket refused; bad input in one sentence."""

from __future__ import annotations

import json
from pathlib import Path

from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolResultPart
from tests.retrieval.conftest import DISTRACTORS, add_text
from tests.retrieval.test_doors import SITECUSTOMIZE, _env, cks


def _home(tmp_path: Path) -> tuple[Path, str, str]:
    home = tmp_path / "home"
    home.mkdir()
    store = GraphStore.open(home / "cks.sqlite3")
    sid = store.create_session("orchard").id
    other = store.create_session("other").id
    add_text(store, sid, "orchard.txt", "The quince orchard behind the mill was planted by Oskar Lind in 1911.")
    for i, t in enumerate(DISTRACTORS):
        add_text(store, sid, f"d{i}.txt", t)
    store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Oskar Lind",
                       "properties": {"description": "Miller who planted the quince orchard."}}], "test")
    chat = TranscriptStore.for_store(store)
    chat.append(sid, [Message.user("What do we know about the quince harvest?"),
                      Message("assistant", [Text("Let me look."), ToolCallPart("c1", "read", {})]),
                      Message("tool", [ToolResultPart("c1", "read", "Quince harvest ledger: 40 crates in 1912.")])])
    chat.append(other, [Message.user("The quince password of the other session is 7781.")])
    store.close()
    return home, sid, other


def test_search_finds_objects_passages_and_messages_of_its_session_only(tmp_path: Path) -> None:
    home, sid, _ = _home(tmp_path)
    nonet = tmp_path / "nonet"
    nonet.mkdir()
    (nonet / "sitecustomize.py").write_text(SITECUSTOMIZE)
    proc = cks(home, "search", "--session", sid, "quince", "--json", env=_env(str(nonet)))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert "Oskar Lind" in [o["name"] for o in out["objects"]]
    assert "quince orchard" in out["passages"][0]["text"]
    texts = {m["seq"]: m["text"] for m in out["messages"]}
    assert "quince harvest" in texts[1] and "40 crates" in texts[3]
    assert not any("7781" in t for t in texts.values())
    plain = cks(home, "search", "--session", sid, "quince orchard")
    assert plain.returncode == 0 and "object   Oskar Lind (Person)" in plain.stdout and "message  " in plain.stdout


def test_search_bad_input_is_one_sentence(tmp_path: Path) -> None:
    home, sid, other = _home(tmp_path)
    huge = cks(home, "search", "--session", sid, "x" * 100_000)
    assert huge.returncode == 2 and huge.stderr.strip() == (
        "cks-desktop: The search is 100,000 characters long; search for at most 4,000 characters.")
    blank = cks(home, "search", "--session", sid, "   ")
    assert blank.returncode == 2 and blank.stderr.strip() == (
        "cks-desktop: The search is empty; type some words to search for.")
    unknown = cks(home, "search", "--session", "01NOSUCH", "quince")
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1
    assert "Traceback" not in huge.stderr + blank.stderr + unknown.stderr
    store = GraphStore.open(home / "cks.sqlite3")
    empty = store.create_session("empty").id
    store.close()
    nothing = cks(home, "search", "--session", empty, "quince")
    assert nothing.returncode == 0 and nothing.stdout.strip() == "Nothing in this session matches."
